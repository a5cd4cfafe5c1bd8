// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The HIP back-end, the counterpart of cuda/cuda_backend.cpp on the HIP runtime API. Host code
// only; compiled by hipcc (library tensordiag_assertions_hip). Device code lives in assert.h /
// detail/gpu_fail.h. Compiled for gfx90a and gfx1030 but never run on AMD hardware.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/hip_backend.hpp>
#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/error.hpp>

#include <hip/hip_runtime_api.h>

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "../runtime_state.hpp"
#include "hip_slot_api.hpp"

namespace tdiag::assertions {
namespace {

using launch_slot_pool = detail::launch_slot_pool<detail::hip_slot_api>;
// Device set-up calls inside a stream capture (gpu/relaxed_capture_mode.hpp).
using relaxed_capture_mode = detail::relaxed_capture_mode<detail::hip_slot_api>;
constexpr std::uint32_t launch_slots = launch_slot_pool::slots;
// As on CUDA: slots [graph_first, launch_slots) belong to launches captured into HIP graphs for
// the life of the process, and their table values carry graph_flag (failure_origin::flags = 2).
constexpr std::uint64_t graph_flag = 1ull << 63;
constexpr std::uint64_t slot_granularity = 256;
// Slot -> launch id, then slot -> the launch's total LDS: a plain hipLaunchKernelGGL launch whose
// LDS happens to leave a nonzero remainder mod 256 must not pass for a tensordiag launch, so the
// device takes a slot's launch id only when its dispatch packet's LDS matches (gpu_fail.h).
constexpr std::size_t table_bytes = 2 * launch_slots * sizeof(std::uint64_t);
// After the table, in the same host-mapped allocation: the trap text area (record.hpp), which a
// trapping thread fills so that the report still has the site's text.
constexpr std::size_t mapped_extra = table_bytes + sizeof(trap_text_area);

// Points the header's reserved words at the slot table and the trap text area behind it.
void set_reserved(buffer_header* header, void* table_device, void* table_host) {
  header->reserved[0] = reinterpret_cast<std::uintptr_t>(table_device);
  header->reserved[1] =
      reinterpret_cast<std::uintptr_t>(static_cast<char*>(table_device) + table_bytes);
  header->reserved[2] =
      reinterpret_cast<std::uintptr_t>(static_cast<char*>(table_host) + table_bytes);
}

[[noreturn]] void throw_hip(hipError_t e, const char* call, int device) {
  diagnostic d;
  d.code = codes::hip_call_failed;
  d.title = "HIP call failed";
  d.message = fmt::format("{} failed on device {}: {} ({})", call, device, hipGetErrorName(e),
                          hipGetErrorString(e));
  d.add_field("hip_error", static_cast<int>(e));
  d.add_field("call", call);
  if (e == hipErrorAssert || e == hipErrorLaunchFailure || e == hipErrorIllegalAddress)
    d.hint = "the HIP context is now unusable: a kernel trapped (TDIAG_ASSERT_POLICY=trap or "
             "a foreign assert); restart the process";
  throw error(std::move(d));
}

#define TDIAG_DETAIL_HIP(call, device)                                                             \
  do {                                                                                             \
    if (const hipError_t tdiag_detail_e = (call); tdiag_detail_e != hipSuccess)                    \
      throw_hip(tdiag_detail_e, #call, device);                                                    \
  } while (false)

// Makes `device` current for a scope and restores the caller's device, also when a HIP call in
// between throws (the launching thread must not find its device changed by a failed report).
class device_scope {
public:
  explicit device_scope(int device) {
    TDIAG_DETAIL_HIP(hipGetDevice(&previous_), device);
    if (previous_ == device)
      return;
    TDIAG_DETAIL_HIP(hipSetDevice(device), device);
    switched_ = true;
  }
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;
  ~device_scope() {
    if (switched_)
      (void)hipSetDevice(previous_);
  }

private:
  int previous_ = 0;
  bool switched_ = false;
};

// A buffer in device memory (no PCIe atomics) has its slot table and host shadow apart.
struct device_allocation {
  void* device = nullptr;
  void* table_host = nullptr;
  void* shadow = nullptr;
};

// LDS of one kernel as ROCclr sees it: the dispatch packet's group_segment_size is
// static_bytes + the launch's dynamic size, which may not exceed dynamic_limit.
struct kernel_lds {
  std::uint64_t static_bytes = 0;
  std::uint64_t dynamic_limit = 0;
};

// Launch slots of one device: slot -> launch id in host-mapped memory, read by failing threads.
struct device_slots {
  std::mutex mutex;
  std::uint64_t* table_host = nullptr;
  std::uint64_t* table_device = nullptr;
  launch_slot_pool pool;
  hipStream_t copy_stream = nullptr; // reads and writes: never waits for running kernels
  std::unordered_map<const void*, kernel_lds> lds; // per kernel, queried once
  void* bound = nullptr;                           // failure buffer's device address
  std::size_t bound_modules = 0;                   // modules that have it
  std::vector<device_allocation> separate;         // non-coherent buffers, until freed
};

class hip_backend_impl final : public backend {
public:
  hip_backend_impl() {
    int count = 0;
    if (hipGetDeviceCount(&count) != hipSuccess) {
      (void)hipGetLastError(); // no driver or no device: a back-end with 0 devices, no error
      count = 0;
    }
    count_ = count;
    devices_.resize(static_cast<std::size_t>(count));
    for (auto& d : devices_)
      d = std::make_unique<device_slots>();
  }

private:
  std::string_view do_name() const noexcept override { return "hip"; }
  int do_device_count() const override { return count_; }
  int do_current_device() const override {
    if (count_ == 1)
      return 0; // the only choice; spares a runtime call on every launch
    int d = 0;
    TDIAG_DETAIL_HIP(hipGetDevice(&d), -1);
    return d;
  }

  device_slots& slots_of(int device) const {
    if (device < 0 || device >= count_)
      throw_hip(hipErrorInvalidDevice, "device", device);
    return *devices_[static_cast<std::size_t>(device)];
  }

  // Whether device atomics reach host memory over the link (PCIe atomics, or xGMI to the CPU).
  // hipamd's hipDeviceGetAttribute of the ROCm 5 era has no case for it and answers
  // hipErrorInvalidValue (read in its source, not run): an unknown answer counts as "no", since
  // device memory is correct everywhere, only slower to read.
  static bool host_native_atomics(int device) {
    int value = 0;
    if (hipDeviceGetAttribute(&value, hipDeviceAttributeHostNativeAtomicSupported, device) !=
        hipSuccess) {
      (void)hipGetLastError();
      return false;
    }
    return value != 0;
  }

  device_properties do_properties(int device) const override {
    hipDeviceProp_t p{};
    TDIAG_DETAIL_HIP(hipGetDeviceProperties(&p, device), device);
    device_properties out;
    out.name = p.name;
    // "gfx90a:sramecc+:xnack-": the processor is what --offload-arch and the reports name; the
    // target features after ':' describe the code object, not the device.
    const std::string_view arch(p.gcnArchName);
    out.arch = std::string(arch.substr(0, arch.find(':')));
    out.ordinal = device;
    out.max_threads_per_block = static_cast<std::uint32_t>(p.maxThreadsPerBlock);
    out.max_block_dim = {static_cast<std::uint32_t>(p.maxThreadsDim[0]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[1]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[2])};
    out.max_grid_dim = {static_cast<std::uint32_t>(p.maxGridSize[0]),
                        static_cast<std::uint32_t>(p.maxGridSize[1]),
                        static_cast<std::uint32_t>(p.maxGridSize[2])};
    // AMD has no opt-in above this: a work-group may use the whole LDS of its CU.
    out.max_shared_memory_per_block = p.sharedMemPerBlock;
    out.warp_size = static_cast<std::uint32_t>(p.warpSize);
    out.multiprocessor_count = static_cast<std::uint32_t>(p.multiProcessorCount);
    out.host_mapped_atomics = host_native_atomics(device);
    return out;
  }

  mapped_buffer do_allocate_failure_buffer(int device, std::size_t bytes) override {
    auto& slots = slots_of(device);
    const device_scope scope(device);
    relaxed_capture_mode relaxed;
    // Coherent: device writes reach the host while the kernel runs (the watchdog reads them).
    // Portable: any device may launch with it, as on CUDA.
    constexpr unsigned mapped = hipHostMallocMapped | hipHostMallocCoherent | hipHostMallocPortable;
    if (host_native_atomics(device)) {
      // Buffer and slot table in one pinned, mapped allocation: readable after a trap.
      void* host = nullptr;
      TDIAG_DETAIL_HIP(hipHostMalloc(&host, bytes + mapped_extra, mapped), device);
      std::memset(host, 0, bytes + mapped_extra);
      void* dev = nullptr;
      TDIAG_DETAIL_HIP(hipHostGetDevicePointer(&dev, host, 0), device);
      std::lock_guard lock(slots.mutex);
      slots.table_host = reinterpret_cast<std::uint64_t*>(static_cast<char*>(host) + bytes);
      slots.table_device = reinterpret_cast<std::uint64_t*>(static_cast<char*>(dev) + bytes);
      set_reserved(static_cast<buffer_header*>(host), slots.table_device, slots.table_host);
      return mapped_buffer{host, dev, bytes, true};
    }
    // Without host atomics the protocol's add and compare-and-swap must stay on the device, so
    // the buffer goes to device memory and the runtime reads it by copy. Fine-grained first:
    // coarse-grained memory is only coherent with the host at kernel boundaries, and the watchdog
    // reads while kernels run. The slot table stays host-mapped: the device only loads from it.
    device_allocation a;
    std::unique_lock lock(slots.mutex, std::defer_lock);
    try {
      TDIAG_DETAIL_HIP(hipHostMalloc(&a.table_host, mapped_extra, mapped), device);
      std::memset(a.table_host, 0, mapped_extra);
      void* table_device = nullptr;
      TDIAG_DETAIL_HIP(hipHostGetDevicePointer(&table_device, a.table_host, 0), device);
      if (hipExtMallocWithFlags(&a.device, bytes, hipDeviceMallocFinegrained) != hipSuccess) {
        (void)hipGetLastError();
        a.device = nullptr;
        TDIAG_DETAIL_HIP(hipMalloc(&a.device, bytes), device);
      }
      // The shadow is what mapped_buffer::host points at; the runtime never reads a
      // non-coherent buffer there (failure_reader.cpp copies), so it only holds the header as
      // first written. Pinned, so a copy into it needs no staging.
      TDIAG_DETAIL_HIP(hipHostMalloc(&a.shadow, bytes, hipHostMallocDefault), device);
      std::memset(a.shadow, 0, bytes);
      set_reserved(static_cast<buffer_header*>(a.shadow), table_device, a.table_host);
      write_device_memory(device, a.device, a.shadow, bytes);
      lock.lock();
      slots.separate.push_back(a); // first: if it throws, no launch sees the table
      slots.table_host = static_cast<std::uint64_t*>(a.table_host);
      slots.table_device = static_cast<std::uint64_t*>(table_device);
    } catch (...) {
      if (a.shadow != nullptr)
        (void)hipHostFree(a.shadow);
      if (a.device != nullptr)
        (void)hipFree(a.device);
      if (a.table_host != nullptr)
        (void)hipHostFree(a.table_host);
      throw;
    }
    return mapped_buffer{a.shadow, a.device, bytes, false};
  }

  void do_free_failure_buffer(int device, const mapped_buffer& buffer) override {
    auto& slots = slots_of(device);
    if (slots.bound == buffer.device)
      bind_all(device, nullptr);
    if (buffer.host_coherent) {
      {
        std::lock_guard lock(slots.mutex);
        if (slots.table_host ==
            reinterpret_cast<std::uint64_t*>(static_cast<char*>(buffer.host) + buffer.bytes))
          slots.table_host = slots.table_device = nullptr; // later launches use slot 0
      }
      TDIAG_DETAIL_HIP(hipHostFree(buffer.host), device);
      return;
    }
    device_allocation a;
    {
      std::lock_guard lock(slots.mutex);
      for (auto it = slots.separate.begin(); it != slots.separate.end(); ++it)
        if (it->device == buffer.device) {
          a = *it;
          slots.separate.erase(it);
          break;
        }
      if (a.device == nullptr)
        throw_hip(hipErrorInvalidValue, "free_failure_buffer", device);
      if (slots.table_host == a.table_host)
        slots.table_host = slots.table_device = nullptr;
    }
    TDIAG_DETAIL_HIP(hipFree(a.device), device);
    TDIAG_DETAIL_HIP(hipHostFree(a.shadow), device);
    TDIAG_DETAIL_HIP(hipHostFree(a.table_host), device);
  }

  void do_bind_failure_buffer(int device, const mapped_buffer& buffer) override {
    bind_all(device, buffer.device);
  }

  // Writes the buffer address into every registered module's device_buffer on `device`, and
  // has the runtime read each module's fallback storage, where failures went until now.
  // On the private stream: a copy on the null stream would join a capture in progress.
  void bind_all(int device, void* address) {
    auto& slots = slots_of(device);
    relaxed_capture_mode relaxed;
    const hipStream_t stream = copy_stream(device); // before the lock: it takes it
    std::lock_guard lock(slots.mutex);
    const device_scope scope(device);
    const auto modules = detail::registered_buffer_slots();
    for (std::size_t i = 0; i < modules.size(); ++i) {
      TDIAG_DETAIL_HIP(hipMemcpyToSymbolAsync(modules[i].host_shadow, &address, sizeof(address), 0,
                                              hipMemcpyHostToDevice, stream),
                       device);
      void* fallback = nullptr;
      if (modules[i].fallback_shadow != nullptr)
        TDIAG_DETAIL_HIP(hipGetSymbolAddress(&fallback, modules[i].fallback_shadow), device);
      detail::watch_module_fallback(*this, device, i, fallback, address != nullptr);
    }
    TDIAG_DETAIL_HIP(hipStreamSynchronize(stream), device);
    slots.bound = address;
    slots.bound_modules = modules.size();
  }

  // Both directions go through a private non-blocking stream: a copy on the null stream waits
  // for kernels still running, so the watchdog could neither read nor acknowledge (the
  // non-coherent buffer acknowledges by a write) the failures of a kernel that spins until they
  // are reported.
  hipStream_t copy_stream(int device) const {
    auto& s = slots_of(device);
    std::lock_guard lock(s.mutex);
    if (s.copy_stream == nullptr) {
      const device_scope scope(device);
      TDIAG_DETAIL_HIP(hipStreamCreateWithFlags(&s.copy_stream, hipStreamNonBlocking), device);
    }
    return s.copy_stream;
  }
  void do_read_device_memory(int device, const void* source, void* destination,
                             std::size_t bytes) const override {
    relaxed_capture_mode relaxed;
    const hipStream_t stream = copy_stream(device);
    TDIAG_DETAIL_HIP(hipMemcpyAsync(destination, source, bytes, hipMemcpyDefault, stream), device);
    TDIAG_DETAIL_HIP(hipStreamSynchronize(stream), device);
  }
  void do_write_device_memory(int device, void* destination, const void* source,
                              std::size_t bytes) override {
    relaxed_capture_mode relaxed;
    const hipStream_t stream = copy_stream(device);
    TDIAG_DETAIL_HIP(hipMemcpyAsync(destination, source, bytes, hipMemcpyDefault, stream), device);
    TDIAG_DETAIL_HIP(hipStreamSynchronize(stream), device);
  }

  launch_status do_launch(const launch_request& r) override {
    if (r.device < 0 || r.device >= count_)
      throw_hip(hipErrorInvalidDevice, "launch", r.device);
    auto& s = *devices_[static_cast<std::size_t>(r.device)];
    if (detail::registered_buffer_slot_count() != s.bound_modules && s.bound != nullptr)
      bind_all(r.device, s.bound); // a module loaded since the last bind
    std::uint64_t shared = r.shared_memory;
    const auto stream = static_cast<hipStream_t>(r.stream);
    hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
    if (hipStreamIsCapturing(stream, &capture) != hipSuccess) {
      (void)hipGetLastError(); // e.g. the null stream; the launch below reports a real error
      capture = hipStreamCaptureStatusNone;
    }
    const bool capturing = capture == hipStreamCaptureStatusActive;
    std::lock_guard lock(s.mutex);
    std::uint32_t slot = s.table_host != nullptr ? s.pool.acquire(capturing) : 0;
    if (slot != 0) {
      auto lds = s.lds.find(r.kernel);
      if (lds == s.lds.end()) {
        hipFuncAttributes attributes{};
        kernel_lds k;
        if (hipFuncGetAttributes(&attributes, r.kernel) == hipSuccess) {
          k.static_bytes = attributes.sharedSizeBytes;
          k.dynamic_limit = static_cast<std::uint64_t>(attributes.maxDynamicSharedSizeBytes);
        } else {
          (void)hipGetLastError(); // a kernel HIP cannot describe just launches with slot 0
        }
        lds = s.lds.emplace(r.kernel, k).first;
      }
      // Unlike CUDA the device sees only the total LDS (gpu_fail.h), so the padding makes
      // static + dynamic == slot (mod 256) rather than rounding the dynamic size alone.
      const std::uint64_t padded =
          r.shared_memory +
          ((slot - lds->second.static_bytes - r.shared_memory) & (slot_granularity - 1));
      if (padded <= lds->second.dynamic_limit) {
        __atomic_store_n(&s.table_host[launch_slots + slot], lds->second.static_bytes + padded,
                         __ATOMIC_RELAXED);
        __atomic_store_n(&s.table_host[slot], r.launch_id | (capturing ? graph_flag : 0),
                         __ATOMIC_RELEASE);
        shared = padded;
      } else {
        slot = 0; // no room for the slot bytes: the record carries launch id 0 and flags 1
      }
    }
    const dim3 grid(r.grid.x, r.grid.y, r.grid.z), block(r.block.x, r.block.y, r.block.z);
    TDIAG_DETAIL_HIP(hipLaunchKernel(r.kernel, grid, block, const_cast<void**>(r.args),
                                     static_cast<std::size_t>(shared), stream),
                     r.device);
    // The kernel is already launched: a failing event record is no launch failure (the slot just
    // stays out of use; the context is broken and the next call says so).
    if (slot != 0 && !capturing)
      (void)s.pool.launched(slot, r.launch_id, stream);
    return launch_status::ok;
  }

  void do_synchronize(int device, stream_handle stream) override {
    if (stream != nullptr) {
      TDIAG_DETAIL_HIP(hipStreamSynchronize(static_cast<hipStream_t>(stream)), device);
      return;
    }
    const device_scope scope(device);
    TDIAG_DETAIL_HIP(hipDeviceSynchronize(), device);
  }
  stream_handle do_create_stream(int device) override {
    const device_scope scope(device);
    hipStream_t s = nullptr;
    TDIAG_DETAIL_HIP(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), device);
    return s;
  }
  void do_destroy_stream(int device, stream_handle stream) override {
    TDIAG_DETAIL_HIP(hipStreamDestroy(static_cast<hipStream_t>(stream)), device);
  }

  int count_ = 0;
  std::vector<std::unique_ptr<device_slots>> devices_;
};

} // namespace

std::shared_ptr<backend> hip_backend() {
  static const auto instance = [] {
    auto b = std::make_shared<hip_backend_impl>();
    // Below CUDA (100): a machine with both picks CUDA unless TDIAG_BACKEND says otherwise.
    register_backend(b, 90);
    return std::shared_ptr<backend>(b);
  }();
  return instance;
}

} // namespace tdiag::assertions
