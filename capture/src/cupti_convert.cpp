// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// CUPTI record -> trace event translation. Only field copies and table lookups happen here; the
// session calls it from its converter thread, never from CUPTI's or the application's threads.
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>

namespace tdiag::capture {
namespace {

constexpr std::string_view memory_kind_word(trace::memory_kind k) noexcept {
  switch (k) {
  case trace::memory_kind::pageable:
    return "Pageable";
  case trace::memory_kind::pinned:
    return "Pinned";
  case trace::memory_kind::device:
    return "Device";
  case trace::memory_kind::array:
    return "Array";
  case trace::memory_kind::managed:
    return "Managed";
  case trace::memory_kind::device_static:
    return "Static";
  case trace::memory_kind::managed_static:
    return "ManagedStatic";
  case trace::memory_kind::unknown:
    break;
  }
  return "Unknown";
}

constexpr std::string_view copy_kind_word(trace::copy_kind k) noexcept {
  switch (k) {
  case trace::copy_kind::htod:
    return "HtoD";
  case trace::copy_kind::dtoh:
    return "DtoH";
  case trace::copy_kind::dtod:
    return "DtoD";
  case trace::copy_kind::htoh:
    return "HtoH";
  case trace::copy_kind::ptop:
    return "PtoP";
  case trace::copy_kind::memset:
    return "Memset";
  case trace::copy_kind::unknown:
    break;
  }
  return "Unknown";
}

} // namespace

bool is_tool_frame(const symbol& s) noexcept {
  const auto slash = s.module.find_last_of('/');
  const std::string_view base =
      std::string_view(s.module).substr(slash == std::string::npos ? 0 : slash + 1);
  for (std::string_view prefix : {"libcupti", "libcuda.", "libtdiag_capture"})
    if (base.starts_with(prefix))
      return true;
  // The capture library linked statically into a tool, and the launch entry points of the
  // (static) CUDA runtime inside the application.
  for (std::string_view prefix :
       {"tdiag::capture", "__cudart", "cudart::", "cudaLaunch", "__cudaLaunch", "cuLaunch"})
    if (s.function.starts_with(prefix))
      return true;
  return false;
}

trace::copy_kind to_copy_kind(std::uint8_t k) noexcept {
  switch (k) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
    return trace::copy_kind::htod;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
    return trace::copy_kind::dtoh;
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
  case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
    return trace::copy_kind::dtod;
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
    return trace::copy_kind::htoh;
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return trace::copy_kind::ptop;
  default:
    return trace::copy_kind::unknown;
  }
}

trace::memory_kind to_memory_kind(std::uint32_t k) noexcept {
  // trace::memory_kind mirrors CUPTI_ACTIVITY_MEMORY_KIND_* value for value.
  return k <= CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC ? static_cast<trace::memory_kind>(k)
                                                        : trace::memory_kind::unknown;
}

std::string copy_name(trace::copy_kind kind, trace::memory_kind src, trace::memory_kind dst) {
  if (kind == trace::copy_kind::memset)
    return fmt::format("Memset ({})", memory_kind_word(dst));
  return fmt::format("Memcpy {} ({} -> {})", copy_kind_word(kind), memory_kind_word(src),
                     memory_kind_word(dst));
}

std::vector<symbol> symbolize_addresses(const std::vector<std::uintptr_t>& addresses) {
  // tdiag::symbolize runs addr2line once per module per call: slices of raw_stack::max_frames
  // addresses keep the number of runs near (unique addresses / 32) x modules.
  std::vector<symbol> out;
  out.reserve(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); i += raw_stack::max_frames) {
    raw_stack slice;
    const std::size_t n = std::min<std::size_t>(raw_stack::max_frames, addresses.size() - i);
    std::copy_n(addresses.begin() + static_cast<std::ptrdiff_t>(i), n, slice.frames.begin());
    slice.size = static_cast<std::uint32_t>(n);
    auto frames = tdiag::symbolize(slice, false); // one frame per address
    for (std::size_t k = 0; k < n; ++k) {
      if (k < frames.size())
        out.push_back({std::move(frames[k].function), std::move(frames[k].file), frames[k].line,
                       std::move(frames[k].module)});
      else
        out.push_back({fmt::format("0x{:x}", addresses[i + k]), {}, 0, {}});
    }
  }
  return out;
}

cupti_converter::cupti_converter(converter_options options) : options_(std::move(options)) {
  if (!options_.symbolizer) // without libbacktrace in process, file and line need addr2line
    options_.symbolizer =
        in_process_symbolizer_has_lines() ? symbolize_in_process : symbolize_addresses;
}

bool cupti_converter::add(const CUpti_Activity& record) {
  switch (record.kind) {
  case CUPTI_ACTIVITY_KIND_KERNEL:
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
    add_kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record));
    return true;
  case CUPTI_ACTIVITY_KIND_MEMCPY:
    add_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record));
    return true;
  case CUPTI_ACTIVITY_KIND_MEMSET:
    add_memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record));
    return true;
  case CUPTI_ACTIVITY_KIND_RUNTIME:
  case CUPTI_ACTIVITY_KIND_DRIVER:
    add_api(reinterpret_cast<const CUpti_ActivityAPI&>(record),
            record.kind == CUPTI_ACTIVITY_KIND_DRIVER);
    return true;
  case CUPTI_ACTIVITY_KIND_MEMORY2:
    add_memory2(reinterpret_cast<const CUpti_ActivityMemory4&>(record));
    return true;
  case CUPTI_ACTIVITY_KIND_MEMORY_POOL:
    add_memory_pool(reinterpret_cast<const CUpti_ActivityMemoryPool3&>(record));
    return true;
  default:
    ++counts_.ignored;
    return false;
  }
}

void cupti_converter::add_kernel(const CUpti_ActivityKernel10& r) {
  trace::kernel_event e;
  e.start = to_trace_time(r.start);
  e.end = to_trace_time(r.end);
  e.lane = batch_.lanes.gpu(r.deviceId, r.streamId);
  if (r.name != nullptr) {
    auto [it, fresh] = kernel_names_.try_emplace(r.name);
    if (fresh)
      it->second = tdiag::demangle(r.name);
    e.name = batch_.strings.intern(it->second);
  }
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.context = r.contextId;
  e.stream = r.streamId;
  e.grid[0] = static_cast<std::uint32_t>(r.gridX);
  e.grid[1] = static_cast<std::uint32_t>(r.gridY);
  e.grid[2] = static_cast<std::uint32_t>(r.gridZ);
  e.block[0] = static_cast<std::uint32_t>(r.blockX);
  e.block[1] = static_cast<std::uint32_t>(r.blockY);
  e.block[2] = static_cast<std::uint32_t>(r.blockZ);
  e.shared_static = static_cast<std::uint32_t>(r.staticSharedMemory);
  e.shared_dynamic = static_cast<std::uint32_t>(r.dynamicSharedMemory);
  e.registers = r.registersPerThread;
  e.correlation = r.correlationId;
  if (auto it = pending_.find(r.correlationId); it != pending_.end())
    e.launch_id = it->second.launch_id;
  batch_.kernels.push_back(e);
  ++counts_.kernels;
}

void cupti_converter::add_memcpy(const CUpti_ActivityMemcpy6& r) {
  trace::copy_event e;
  e.start = to_trace_time(r.start);
  e.end = to_trace_time(r.end);
  e.lane = batch_.lanes.gpu(r.deviceId, r.streamId);
  e.kind = to_copy_kind(r.copyKind);
  e.src_kind = to_memory_kind(r.srcKind);
  e.dst_kind = to_memory_kind(r.dstKind);
  e.name = batch_.strings.intern(copy_name(e.kind, e.src_kind, e.dst_kind));
  e.bytes = r.bytes;
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.context = r.contextId;
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  batch_.copies.push_back(e);
  ++counts_.copies;
}

void cupti_converter::add_memset(const CUpti_ActivityMemset4& r) {
  trace::copy_event e;
  e.start = to_trace_time(r.start);
  e.end = to_trace_time(r.end);
  e.lane = batch_.lanes.gpu(r.deviceId, r.streamId);
  e.kind = trace::copy_kind::memset;
  e.dst_kind = to_memory_kind(r.memoryKind);
  e.name = batch_.strings.intern(copy_name(e.kind, e.src_kind, e.dst_kind));
  e.bytes = r.bytes;
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.context = r.contextId;
  e.stream = r.streamId;
  e.correlation = r.correlationId;
  e.value = r.value;
  batch_.copies.push_back(e);
  ++counts_.copies;
}

void cupti_converter::add_api(const CUpti_ActivityAPI& r, bool driver) {
  trace::api_event e;
  e.start = to_trace_time(r.start);
  e.end = to_trace_time(r.end);
  e.lane = batch_.lanes.host(r.processId, r.threadId);
  e.name = api_name(driver, r.cbid);
  e.process = r.processId;
  e.thread = r.threadId;
  e.correlation = r.correlationId;
  e.kind = driver ? trace::api_kind::driver : trace::api_kind::runtime;
  e.cbid = r.cbid;
  if (auto it = pending_.find(r.correlationId); it != pending_.end()) {
    e.stack = intern_stack(it->second.stack);
    // Kernel and memory records of this call may still be in flight in a later buffer: keep
    // the launch id (cheap) for them, drop only the stack.
    if (it->second.launch_id == 0)
      pending_.erase(it);
    else
      it->second.stack.size = 0;
  }
  batch_.api_calls.push_back(e);
  ++counts_.api_calls;
}

void cupti_converter::add_memory2(const CUpti_ActivityMemory4& r) {
  trace::memory_record e;
  e.time = to_trace_time(r.timestamp);
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.lane = batch_.lanes.memory(e.device);
  // A stream-ordered pool allocation is a block handed out by a pool (alloc/free); anything
  // else is a driver allocation of its own segment (cudaMalloc, cuMemAlloc).
  const bool pooled = r.memoryPoolConfig.memoryPoolType != CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
  const bool release = r.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  if (pooled)
    e.action = release ? trace::memory_action::free_completed : trace::memory_action::alloc;
  else
    e.action = release ? trace::memory_action::segment_free : trace::memory_action::segment_alloc;
  e.address = r.address;
  e.size = r.bytes;
  e.stream = r.streamId;
  e.pool = pooled ? r.memoryPoolConfig.address : 0;
  if (pooled && r.memoryPoolConfig.memoryPoolType == CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL)
    e.total_reserved = static_cast<std::int64_t>(r.memoryPoolConfig.pool.size);
  if (pooled)
    e.total_allocated = static_cast<std::int64_t>(r.memoryPoolConfig.utilizedSize);
  e.correlation = r.correlationId;
  if (auto it = pending_.find(r.correlationId); it != pending_.end())
    e.stack = intern_stack(it->second.stack);
  batch_.memory.push_back(batch_.event_of(e));
  ++counts_.memory;
}

void cupti_converter::add_memory_pool(const CUpti_ActivityMemoryPool3& r) {
  trace::memory_record e;
  e.time = to_trace_time(r.timestamp);
  e.device = static_cast<std::int32_t>(r.deviceId);
  e.lane = batch_.lanes.memory(e.device);
  switch (r.memoryPoolOperationType) {
  case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_DESTROYED:
    e.action = trace::memory_action::pool_destroy;
    break;
  case CUPTI_ACTIVITY_MEMORY_POOL_OPERATION_TYPE_TRIMMED:
    e.action = trace::memory_action::pool_trim;
    break;
  default:
    e.action = trace::memory_action::pool_create;
    break;
  }
  e.address = r.address;
  e.pool = r.address;
  e.size = r.size;
  e.total_reserved = static_cast<std::int64_t>(r.size);
  e.total_allocated = static_cast<std::int64_t>(r.utilizedSize);
  e.correlation = r.correlationId;
  batch_.memory.push_back(batch_.event_of(e));
  ++counts_.memory;
}

void cupti_converter::add_correlation(const correlation_info& info) {
  auto& slot = pending_[info.correlation];
  slot.correlation = info.correlation;
  if (info.launch_id != 0)
    slot.launch_id = info.launch_id;
  if (info.stack.size != 0)
    slot.stack = info.stack;
}

void cupti_converter::forget_before(std::uint32_t correlation) {
  std::erase_if(pending_, [&](const auto& kv) { return kv.first < correlation; });
}

void cupti_converter::add_memory(trace::memory_record event, const raw_stack& stack,
                                 std::string_view tag) {
  event.lane = batch_.lanes.memory(event.device);
  event.stack = intern_stack(stack);
  event.user_metadata = tag.empty() ? trace::no_string : batch_.strings.intern(tag);
  batch_.memory.push_back(batch_.event_of(event));
  ++counts_.memory;
}

void cupti_converter::add_assertion(trace::assertion_event event, std::string_view site,
                                    std::string_view message) {
  // The kernel's CUPTI stream is not known to the assertion runtime: the failure goes on the
  // device's lane for stream `event.lane` as given by the caller (0 when unknown).
  event.lane = batch_.lanes.gpu(event.device, event.lane);
  event.site = batch_.strings.intern(site);
  event.message = message.empty() ? trace::no_string : batch_.strings.intern(message);
  batch_.assertions.push_back(event);
}

void cupti_converter::add_launch_marker(std::int64_t time, std::int64_t process,
                                        std::uint64_t thread, std::string_view kernel_name) {
  trace::marker_event m;
  m.time = time;
  m.lane = batch_.lanes.host(process, thread);
  m.name = batch_.strings.intern(kernel_name.empty() ? std::string_view("launch") : kernel_name);
  m.category = batch_.strings.intern("tdiag.launch");
  batch_.markers.push_back(m);
}

trace::string_id cupti_converter::api_name(bool driver, std::uint32_t cbid) {
  const std::uint64_t key = (std::uint64_t{driver} << 32) | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end())
    return it->second;
  std::string text = options_.api_name ? options_.api_name(driver, cbid) : std::string();
  if (text.empty())
    text = fmt::format("{} cbid {}", driver ? "driver" : "runtime", cbid);
  const auto id = batch_.strings.intern(text);
  api_names_.emplace(key, id);
  return id;
}

trace::stack_id cupti_converter::intern_stack(const raw_stack& stack) {
  if (stack.size == 0)
    return trace::no_stack;
  std::vector<std::uintptr_t> unknown;
  for (std::uint32_t i = 0; i < stack.size; ++i)
    if (!symbols_.contains(stack.frames[i]))
      unknown.push_back(stack.frames[i]);
  if (!unknown.empty()) {
    auto resolved = options_.symbolizer(unknown);
    for (std::size_t i = 0; i < unknown.size(); ++i)
      symbols_[unknown[i]] = i < resolved.size() ? std::move(resolved[i]) : symbol{};
  }
  // The innermost frames are CUPTI's callback machinery, the driver and this library: the
  // launch site is the first frame outside them.
  std::uint32_t first = 0;
  while (first + 1 < stack.size && is_tool_frame(symbols_[stack.frames[first]]))
    ++first;
  std::array<trace::frame_id, raw_stack::max_frames> frames{};
  std::uint32_t count = 0;
  for (std::uint32_t i = first; i < stack.size; ++i) {
    const auto& s = symbols_[stack.frames[i]];
    trace::frame f;
    f.function = batch_.strings.intern(s.function.empty() ? fmt::format("0x{:x}", stack.frames[i])
                                                          : s.function);
    f.file = s.file.empty() ? trace::no_string : batch_.strings.intern(s.file);
    f.line = s.line;
    frames[count++] = batch_.stacks.intern_frame(f);
  }
  return batch_.stacks.intern_stack(std::span<const trace::frame_id>(frames.data(), count));
}

trace::trace cupti_converter::take_batch() {
  trace::trace out = std::move(batch_);
  batch_ = trace::trace();
  api_names_.clear();
  return out;
}

} // namespace tdiag::capture
