// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// TDIAG_BIND=cupti (launch_binding.hpp). CUPTI is opened with dlopen when binding starts, so the
// runtime needs no CUPTI to link or to run without binding. On the launching thread the callback
// does what the registered launch path does (registry record, raw stack, no allocation) and
// files the registry id under the call's correlation id; CUPTI's thread hands over kernel
// activity records, of which only grid id, correlation id, name and configuration are kept.
// One CUPTI subscriber per process: under a profiler (tdiag capture, Nsight, Kineto) binding
// is refused with that reason.
#include <tensordiag/core/detail/cupti_launches.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <cupti.h>

#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <deque>
#include <dlfcn.h>
#include <map>
#include <mutex>

#include "../host_ticks.hpp"
#include "../launch_binding.hpp"
#include "../runtime_state.hpp"

namespace tdiag::assertions::detail {
namespace {

// The CUPTI entry points binding uses, from the library found at start.
struct cupti_library {
  void* handle = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiUnsubscribe) unsubscribe = nullptr;
  decltype(&cuptiEnableCallback) enable_callback = nullptr;
  decltype(&cuptiActivityEnable) activity_enable = nullptr;
  decltype(&cuptiActivityDisable) activity_disable = nullptr;
  decltype(&cuptiActivityRegisterCallbacks) register_callbacks = nullptr;
  decltype(&cuptiActivityGetNextRecord) next_record = nullptr;
  decltype(&cuptiActivityFlushAll) flush_all = nullptr;
  decltype(&cuptiGetResultString) result_string = nullptr;
};

// Correlation id -> registry id, direct-mapped: ids grow by one a call, so the ring holds the
// last `ring_size` calls and an entry names its own correlation id.
constexpr std::size_t ring_size = 1u << 14;
struct correlation_entry {
  std::atomic<std::uint64_t> correlation{0};
  std::atomic<std::uint64_t> launch_id{0};
};

// What a kernel activity record said of one grid.
struct grid_entry {
  std::uint64_t correlation = 0;
  const char* name = nullptr; // CUPTI's, shared by the kernel's records for the process
  extent3 grid, block;
  std::uint64_t shared_memory = 0;
  std::uint32_t graph_id = 0;
  std::uint32_t runs = 1; // records of this grid id since it was last looked up (graph replays)
};

struct binding_state {
  std::mutex mutex; // start/stop and the grid table; never taken on a launch
  cupti_library cupti;
  CUpti_SubscriberHandle subscriber = nullptr;
  std::atomic<bool> active{false};
  std::array<correlation_entry, ring_size> ring{};
  std::map<std::pair<int, std::int64_t>, grid_entry> grids; // (device, grid id)
  std::deque<std::pair<int, std::int64_t>> grid_order;      // oldest first, for eviction
  std::map<const char*, std::string> kernel_names;          // CUPTI's name -> demangled
};

binding_state& binding() {
  static auto* b = new binding_state; // CUPTI may call back during exit: never destroyed
  return *b;
}

thread_local int api_depth = 0;
thread_local std::uint64_t outer_launch_id = 0;

extent3 extent_of(const dim3& d) {
  return extent3{d.x, d.y, d.z};
}

// The configuration an API call's parameters give (the kernel's own, for graph launches, comes
// from its activity record).
void describe_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* params,
                   launch_info& info) {
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000: {
      // The four share one layout.
      const auto& p = *static_cast<const cudaLaunchKernel_v7000_params*>(params);
      info.kernel = p.func;
      info.grid = extent_of(p.gridDim);
      info.block = extent_of(p.blockDim);
      info.shared_memory = p.sharedMem;
      info.stream = reinterpret_cast<std::uintptr_t>(p.stream);
      return;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
    case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060: {
      const auto& p = *static_cast<const cudaLaunchKernelExC_v11060_params*>(params);
      info.kernel = p.func;
      if (p.config != nullptr) {
        info.grid = extent_of(p.config->gridDim);
        info.block = extent_of(p.config->blockDim);
        info.shared_memory = p.config->dynamicSmemBytes;
        info.stream = reinterpret_cast<std::uintptr_t>(p.config->stream);
      }
      return;
    }
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000:
    case CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000: {
      const auto& p = *static_cast<const cudaGraphLaunch_v10000_params*>(params);
      info.kernel_name = "cudaGraphLaunch";
      info.stream = reinterpret_cast<std::uintptr_t>(p.stream);
      return;
    }
    default:
      return;
    }
  }
  switch (cbid) {
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
    const auto& p = *static_cast<const cuLaunchKernel_params*>(params);
    info.grid = {p.gridDimX, p.gridDimY, p.gridDimZ};
    info.block = {p.blockDimX, p.blockDimY, p.blockDimZ};
    info.shared_memory = p.sharedMemBytes;
    info.stream = reinterpret_cast<std::uintptr_t>(p.hStream);
    return;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
  case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
    const auto& p = *static_cast<const cuLaunchKernelEx_params*>(params);
    if (p.config != nullptr) {
      info.grid = {p.config->gridDimX, p.config->gridDimY, p.config->gridDimZ};
      info.block = {p.config->blockDimX, p.config->blockDimY, p.config->blockDimZ};
      info.shared_memory = p.config->sharedMemBytes;
      info.stream = reinterpret_cast<std::uintptr_t>(p.config->hStream);
    }
    return;
  }
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
  case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: {
    const auto& p = *static_cast<const cuGraphLaunch_params*>(params);
    info.kernel_name = "cuGraphLaunch";
    info.stream = reinterpret_cast<std::uintptr_t>(p.hStream);
    return;
  }
  default:
    return;
  }
}

void file_correlation(binding_state& b, std::uint64_t correlation, std::uint64_t launch_id) {
  auto& e = b.ring[correlation % ring_size];
  e.correlation.store(0, std::memory_order_relaxed);
  e.launch_id.store(launch_id, std::memory_order_release);
  e.correlation.store(correlation, std::memory_order_release);
}

void CUPTIAPI on_api(void* /*userdata*/, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                     const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
    return;
  const auto& cb = *static_cast<const CUpti_CallbackData*>(data);
  if (cb.callbackSite == CUPTI_API_EXIT) {
    if (api_depth > 0)
      --api_depth;
    return;
  }
  binding_state& b = binding();
  if (api_depth++ > 0) { // the runtime's call of the driver: the same launch
    if (outer_launch_id != 0)
      file_correlation(b, cb.correlationId, outer_launch_id);
    return;
  }
  runtime_state& st = state();
  thread_local launch_info info; // as in the launch path: no 256-byte zeroing per launch
  info.kernel = nullptr;
  info.kernel_name = nullptr;
  info.grid = info.block = extent3{};
  info.shared_memory = 0;
  info.stream = 0;
  info.stack.size = 0;
  describe_call(domain, cbid, cb.functionParams, info);
  info.device = -1; // the activity record's
  info.host_ticks = host_ticks();
  info.host_thread = small_thread_number();
  if (st.config.capture_stacks)
    info.stack = capture_raw_stack(1);
  outer_launch_id = st.registry->record(info);
  file_correlation(b, cb.correlationId, outer_launch_id);
}

constexpr std::size_t activity_buffer_bytes = 1u << 20;

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, activity_buffer_bytes));
  *size = *buffer != nullptr ? activity_buffer_bytes : 0;
  *max_records = 0;
}

void keep_grid(binding_state& b, const CUpti_ActivityKernel10& k) {
  const auto key = std::pair(static_cast<int>(k.deviceId), k.gridId);
  grid_entry e;
  e.correlation = k.correlationId;
  e.name = k.name;
  e.grid = {static_cast<std::uint32_t>(k.gridX), static_cast<std::uint32_t>(k.gridY),
            static_cast<std::uint32_t>(k.gridZ)};
  e.block = {static_cast<std::uint32_t>(k.blockX), static_cast<std::uint32_t>(k.blockY),
             static_cast<std::uint32_t>(k.blockZ)};
  e.shared_memory = k.dynamicSharedMemory;
  e.graph_id = k.graphId;
  // A graph's kernel node keeps its grid id from one replay to the next: the latest run wins.
  if (const auto old = b.grids.find(key); old != b.grids.end())
    e.runs = old->second.runs + 1;
  if (b.grids.insert_or_assign(key, e).second)
    b.grid_order.push_back(key);
  // Twice the registry's size: a grid older than that has lost its call's side anyway.
  const std::size_t keep = 2 * static_cast<std::size_t>(state().config.launches);
  while (b.grid_order.size() > keep) {
    b.grids.erase(b.grid_order.front());
    b.grid_order.pop_front();
  }
}

void CUPTIAPI on_buffer_completed(CUcontext /*context*/, std::uint32_t /*stream*/,
                                  std::uint8_t* buffer, std::size_t /*size*/, std::size_t valid) {
  binding_state& b = binding();
  try { // CUPTI's thread, under C frames: nothing may unwind out of here
    std::lock_guard lock(b.mutex);
    CUpti_Activity* record = nullptr;
    while (b.cupti.next_record != nullptr &&
           b.cupti.next_record(buffer, valid, &record) == CUPTI_SUCCESS) {
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
          record->kind == CUPTI_ACTIVITY_KIND_KERNEL)
        keep_grid(b, *reinterpret_cast<const CUpti_ActivityKernel10*>(record));
    }
  } catch (const std::exception& e) {
    static std::atomic<bool> said{false};
    if (!said.exchange(true))
      fmt::print(stderr,
                 "tensordiag: TDIAG_BIND=cupti: CUPTI's kernel records could not be kept ({}); "
                 "failures of their launches are reported without grid, stream and launch site\n",
                 e.what());
  }
  std::free(buffer);
}

std::string open_cupti(cupti_library& c) {
  if (c.handle != nullptr)
    return {};
  std::vector<std::string> names = {fmt::format("libcupti.so.{}", CUDART_VERSION / 1000),
                                    "libcupti.so"};
  for (const char* root : {static_cast<const char*>(std::getenv("CUDA_HOME")), "/usr/local/cuda"})
    if (root != nullptr && *root != 0)
      for (const char* dir : {"lib64", "extras/CUPTI/lib64"})
        names.push_back(fmt::format("{}/{}/libcupti.so", root, dir));
  for (const auto& n : names)
    if ((c.handle = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr)
      break;
  if (c.handle == nullptr)
    return fmt::format("no CUPTI library found (tried {} and {}; put CUPTI's directory on "
                       "LD_LIBRARY_PATH)",
                       names.front(), names.back());
  bool complete = true;
  const auto load = [&](auto& fn, const char* symbol) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(c.handle, symbol));
    complete = complete && fn != nullptr;
  };
  load(c.subscribe, "cuptiSubscribe");
  load(c.unsubscribe, "cuptiUnsubscribe");
  load(c.enable_callback, "cuptiEnableCallback");
  load(c.activity_enable, "cuptiActivityEnable");
  load(c.activity_disable, "cuptiActivityDisable");
  load(c.register_callbacks, "cuptiActivityRegisterCallbacks");
  load(c.next_record, "cuptiActivityGetNextRecord");
  load(c.flush_all, "cuptiActivityFlushAll");
  load(c.result_string, "cuptiGetResultString");
  if (!complete) {
    c = cupti_library{};
    return "the CUPTI library found lacks the callback or activity API";
  }
  return {};
}

std::string cupti_error(const cupti_library& c, CUptiResult r, const char* call) {
  const char* text = nullptr;
  if (c.result_string != nullptr)
    c.result_string(r, &text);
  std::string why = fmt::format("{} failed: {}", call, text != nullptr ? text : "unknown error");
  if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
    why += " (a profiler already holds CUPTI: tdiag capture, Nsight Systems or the PyTorch "
           "profiler; plain launches are only attributed without one)";
  return why;
}

std::string start(binding_state& b) {
  if (auto why = open_cupti(b.cupti); !why.empty())
    return why;
  const cupti_library& c = b.cupti;
  if (const CUptiResult r = c.subscribe(&b.subscriber, on_api, nullptr); r != CUPTI_SUCCESS) {
    b.subscriber = nullptr;
    return cupti_error(c, r, "cuptiSubscribe");
  }
  // Launch calls, the runtime's and the driver's (the runtime's own call of the driver nests in
  // it and shares its registration). Unknown ids (an older CUPTI) fail one by one.
  for (const auto id : tdiag::detail::cupti_runtime_launches)
    (void)c.enable_callback(1, b.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
  for (const auto id : tdiag::detail::cupti_driver_launches)
    (void)c.enable_callback(1, b.subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
  if (const CUptiResult r = c.register_callbacks(on_buffer_requested, on_buffer_completed);
      r != CUPTI_SUCCESS) {
    (void)c.unsubscribe(b.subscriber);
    b.subscriber = nullptr;
    return cupti_error(c, r, "cuptiActivityRegisterCallbacks");
  }
  if (const CUptiResult r = c.activity_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      r != CUPTI_SUCCESS) {
    (void)c.unsubscribe(b.subscriber);
    b.subscriber = nullptr;
    return cupti_error(c, r, "cuptiActivityEnable(CONCURRENT_KERNEL)");
  }
  b.active.store(true, std::memory_order_release);
  return {};
}

void stop(binding_state& b) {
  const cupti_library& c = b.cupti;
  b.active.store(false, std::memory_order_release);
  (void)c.activity_disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  (void)c.unsubscribe(b.subscriber);
  b.subscriber = nullptr;
}

const std::string& demangled(binding_state& b, const char* name) {
  auto [it, fresh] = b.kernel_names.try_emplace(name);
  if (fresh)
    it->second = tdiag::demangle(name);
  return it->second;
}

std::optional<bound_launch> lookup(binding_state& b, int device, std::uint64_t grid_id) {
  const auto found = b.grids.find(std::pair(device, static_cast<std::int64_t>(grid_id)));
  if (found == b.grids.end())
    return std::nullopt;
  grid_entry& g = found->second;
  bound_launch out;
  out.kernel = demangled(b, g.name);
  out.grid = g.grid;
  out.block = g.block;
  out.shared_memory = g.shared_memory;
  out.graph_id = g.graph_id;
  out.correlation = g.correlation;
  out.runs = g.runs;
  g.runs = 0;
  const auto& e = b.ring[g.correlation % ring_size];
  const std::uint64_t launch_id = e.launch_id.load(std::memory_order_acquire);
  if (e.correlation.load(std::memory_order_acquire) == g.correlation && launch_id != 0)
    out.info = state().registry->find(launch_id);
  if (out.info)
    out.info->device = device;
  return out;
}

} // namespace

std::string set_cupti_binding(bool on) {
  binding_state& b = binding();
  std::lock_guard lock(b.mutex);
  if (on == b.active.load(std::memory_order_acquire))
    return {};
  if (!on) {
    stop(b);
    return {};
  }
  return start(b);
}

bool cupti_binding_active() noexcept {
  return binding().active.load(std::memory_order_acquire);
}

std::optional<bound_launch> find_bound_launch(int device, std::uint64_t grid_id) {
  binding_state& b = binding();
  {
    std::lock_guard lock(b.mutex);
    if (b.cupti.handle == nullptr)
      return std::nullopt;
  }
  // The kernel's record may still sit in a CUPTI buffer, and a graph replay's kernel has the grid
  // id of the replay before it: flush first (on_buffer_completed takes the lock), then look.
  (void)b.cupti.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::lock_guard lock(b.mutex);
  return lookup(b, device, grid_id);
}

} // namespace tdiag::assertions::detail
