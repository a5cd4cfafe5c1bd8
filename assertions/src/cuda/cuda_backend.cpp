// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA back-end. Host code only (the CUDA runtime API); compiled by the host compiler and
// linked with CUDA::cudart. Device code lives in assert.h / detail/gpu_fail.h.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/cuda_backend.hpp>
#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/error.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../runtime_state.hpp"
#include "cuda_slot_api.hpp"

namespace tdiag::assertions {
namespace {

using launch_slot_pool = detail::launch_slot_pool<detail::cuda_slot_api>;
constexpr std::uint32_t launch_slots = launch_slot_pool::slots;
// Slots [launch_slot_pool::graph_first, launch_slots) belong to launches captured into CUDA
// graphs: a graph replays its kernel node with the captured dynamic shared memory size, so the
// slot keeps its launch id for the life of the process. Table values of graph slots carry
// graph_flag, which the device turns into failure_origin::flags = 2 ("replayed from a graph").
constexpr std::uint64_t graph_flag = 1ull << 63;
constexpr std::uint64_t slot_granularity = 256;

[[noreturn]] void throw_cuda(cudaError_t e, const char* call, int device) {
  diagnostic d;
  d.code = codes::cuda_call_failed;
  d.title = "CUDA call failed";
  d.message = fmt::format("{} failed on device {}: {} ({})", call, device, cudaGetErrorName(e),
                          cudaGetErrorString(e));
  d.add_field("cuda_error", static_cast<int>(e));
  d.add_field("call", call);
  if (e == cudaErrorAssert || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction)
    d.hint = "the CUDA context is now unusable: a kernel trapped (TDIAG_ASSERT_POLICY=trap or "
             "a foreign assert); restart the process";
  throw error(std::move(d));
}

#define TDIAG_DETAIL_CUDA(call, device)                                                            \
  do {                                                                                             \
    if (const cudaError_t tdiag_detail_e = (call); tdiag_detail_e != cudaSuccess)                  \
      throw_cuda(tdiag_detail_e, #call, device);                                                   \
  } while (false)

// Device set-up calls inside a stream capture (gpu/relaxed_capture_mode.hpp).
using relaxed_capture_mode = detail::relaxed_capture_mode<detail::cuda_slot_api>;

// Launch slots of one device: slot -> launch id in mapped memory, read by failing threads.
struct device_slots {
  std::mutex mutex;
  std::uint64_t* table_host = nullptr;
  std::uint64_t* table_device = nullptr;
  launch_slot_pool pool;
  cudaStream_t copy_stream = nullptr; // reads of site text: never waits for running kernels
  std::unordered_map<const void*, std::uint64_t> dynamic_limit; // per kernel, queried once
  void* bound = nullptr;                                        // failure buffer's device address
  std::size_t bound_modules = 0;                                // modules that have it
};

class cuda_backend_impl final : public backend {
public:
  cuda_backend_impl() {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess)
      count = 0;
    count_ = count;
    devices_.resize(static_cast<std::size_t>(count));
    for (auto& d : devices_)
      d = std::make_unique<device_slots>();
  }

private:
  std::string_view do_name() const noexcept override { return "cuda"; }
  int do_device_count() const override { return count_; }
  int do_current_device() const override {
    if (count_ == 1)
      return 0; // the only choice; spares a runtime call on every launch
    int d = 0;
    TDIAG_DETAIL_CUDA(cudaGetDevice(&d), -1);
    return d;
  }

  device_properties do_properties(int device) const override {
    cudaDeviceProp p{};
    TDIAG_DETAIL_CUDA(cudaGetDeviceProperties(&p, device), device);
    device_properties out;
    out.name = p.name;
    out.arch = fmt::format("sm_{}{}", p.major, p.minor);
    out.ordinal = device;
    out.max_threads_per_block = static_cast<std::uint32_t>(p.maxThreadsPerBlock);
    out.max_block_dim = {static_cast<std::uint32_t>(p.maxThreadsDim[0]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[1]),
                         static_cast<std::uint32_t>(p.maxThreadsDim[2])};
    out.max_grid_dim = {static_cast<std::uint32_t>(p.maxGridSize[0]),
                        static_cast<std::uint32_t>(p.maxGridSize[1]),
                        static_cast<std::uint32_t>(p.maxGridSize[2])};
    // The opt-in limit: a kernel may have raised its own with cudaFuncSetAttribute.
    out.max_shared_memory_per_block = p.sharedMemPerBlockOptin;
    out.warp_size = static_cast<std::uint32_t>(p.warpSize);
    out.multiprocessor_count = static_cast<std::uint32_t>(p.multiProcessorCount);
    out.host_mapped_atomics = p.canMapHostMemory != 0;
    return out;
  }

  mapped_buffer do_allocate_failure_buffer(int device, std::size_t bytes) override {
    int previous = 0;
    TDIAG_DETAIL_CUDA(cudaGetDevice(&previous), device);
    TDIAG_DETAIL_CUDA(cudaSetDevice(device), device);
    // Buffer and slot table in one pinned, mapped allocation: readable after a trap, no
    // managed memory, no compute-capability rule.
    // Slot -> launch id, then slot -> the dynamic shared memory size it was launched with: a
    // plain <<<>>> launch with an odd size decodes a slot too, and must not pass for the slot's
    // tensordiag launch (gpu_fail.h compares the two).
    // Then the trap text area (record.hpp): host memory, readable after a trap.
    const std::size_t table_bytes = 2 * launch_slots * sizeof(std::uint64_t);
    const std::size_t total = bytes + table_bytes + sizeof(trap_text_area);
    relaxed_capture_mode relaxed;
    void* host = nullptr;
    TDIAG_DETAIL_CUDA(cudaHostAlloc(&host, total, cudaHostAllocMapped | cudaHostAllocPortable),
                      device);
    std::memset(host, 0, total);
    void* dev = nullptr;
    TDIAG_DETAIL_CUDA(cudaHostGetDevicePointer(&dev, host, 0), device);
    auto& slots = *devices_.at(static_cast<std::size_t>(device));
    slots.table_host = reinterpret_cast<std::uint64_t*>(static_cast<char*>(host) + bytes);
    slots.table_device = reinterpret_cast<std::uint64_t*>(static_cast<char*>(dev) + bytes);
    auto* header = static_cast<buffer_header*>(host);
    header->reserved[0] = reinterpret_cast<std::uintptr_t>(slots.table_device);
    header->reserved[1] = reinterpret_cast<std::uintptr_t>(slots.table_device + 2 * launch_slots);
    header->reserved[2] = reinterpret_cast<std::uintptr_t>(slots.table_host + 2 * launch_slots);
    TDIAG_DETAIL_CUDA(cudaSetDevice(previous), device);
    return mapped_buffer{host, dev, bytes, true};
  }

  void do_free_failure_buffer(int device, const mapped_buffer& buffer) override {
    auto& slots = *devices_.at(static_cast<std::size_t>(device));
    if (slots.bound == buffer.device)
      bind_all(device, nullptr);
    TDIAG_DETAIL_CUDA(cudaFreeHost(buffer.host), device);
  }

  void do_bind_failure_buffer(int device, const mapped_buffer& buffer) override {
    bind_all(device, buffer.device);
  }

  // Writes the buffer address into every registered module's device_buffer on `device`, and
  // has the runtime read each module's fallback storage, where failures went until now.
  void bind_all(int device, void* address) {
    auto& slots = *devices_.at(static_cast<std::size_t>(device));
    std::lock_guard lock(slots.mutex);
    relaxed_capture_mode relaxed;
    int previous = 0;
    TDIAG_DETAIL_CUDA(cudaGetDevice(&previous), device);
    TDIAG_DETAIL_CUDA(cudaSetDevice(device), device);
    const cudaStream_t stream = copy_stream_locked(slots, device);
    const auto modules = detail::registered_buffer_slots();
    for (std::size_t i = 0; i < modules.size(); ++i) {
      TDIAG_DETAIL_CUDA(cudaMemcpyToSymbolAsync(modules[i].host_shadow, &address, sizeof(address),
                                                0, cudaMemcpyHostToDevice, stream),
                        device);
      void* fallback = nullptr;
      if (modules[i].fallback_shadow != nullptr)
        TDIAG_DETAIL_CUDA(cudaGetSymbolAddress(&fallback, modules[i].fallback_shadow), device);
      detail::watch_module_fallback(*this, device, i, fallback, address != nullptr);
    }
    TDIAG_DETAIL_CUDA(cudaStreamSynchronize(stream), device);
    slots.bound = address;
    slots.bound_modules = modules.size();
    TDIAG_DETAIL_CUDA(cudaSetDevice(previous), device);
  }

  // The device's private non-blocking stream for the runtime's own copies (the caller holds the
  // device's mutex; the current device is `device`).
  cudaStream_t copy_stream_locked(device_slots& s, int device) const {
    if (s.copy_stream == nullptr)
      TDIAG_DETAIL_CUDA(cudaStreamCreateWithFlags(&s.copy_stream, cudaStreamNonBlocking), device);
    return s.copy_stream;
  }

  // On a private non-blocking stream: a plain cudaMemcpy goes through the legacy default stream
  // and would wait for a kernel still running there, so the watchdog could not report a kernel
  // that spins until its failure has been reported.
  void do_read_device_memory(int device, const void* source, void* destination,
                             std::size_t bytes) const override {
    copy(device, destination, source, bytes);
  }
  void do_write_device_memory(int device, void* destination, const void* source,
                              std::size_t bytes) override {
    copy(device, destination, source, bytes);
  }
  void copy(int device, void* destination, const void* source, std::size_t bytes) const {
    auto& s = *devices_.at(static_cast<std::size_t>(device));
    relaxed_capture_mode relaxed;
    cudaStream_t stream = nullptr;
    {
      std::lock_guard lock(s.mutex);
      if (s.copy_stream == nullptr) {
        int previous = 0;
        TDIAG_DETAIL_CUDA(cudaGetDevice(&previous), device);
        TDIAG_DETAIL_CUDA(cudaSetDevice(device), device);
        (void)copy_stream_locked(s, device);
        TDIAG_DETAIL_CUDA(cudaSetDevice(previous), device);
      }
      stream = s.copy_stream;
    }
    TDIAG_DETAIL_CUDA(cudaMemcpyAsync(destination, source, bytes, cudaMemcpyDefault, stream),
                      device);
    TDIAG_DETAIL_CUDA(cudaStreamSynchronize(stream), device);
  }

  launch_status do_launch(const launch_request& r) override {
    if (r.device < 0 || r.device >= count_)
      throw_cuda(cudaErrorInvalidDevice, "launch", r.device);
    auto& s = *devices_[static_cast<std::size_t>(r.device)];
    if (detail::registered_buffer_slot_count() != s.bound_modules && s.bound != nullptr)
      bind_all(r.device, s.bound); // a module loaded since the last bind
    std::uint64_t shared = r.shared_memory;
    const auto stream = static_cast<cudaStream_t>(r.stream);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess) {
      (void)cudaGetLastError(); // not a sticky error; the launch below reports the real one
      capture = cudaStreamCaptureStatusNone;
    }
    const bool capturing = capture == cudaStreamCaptureStatusActive;
    std::lock_guard lock(s.mutex);
    std::uint32_t slot = s.table_host != nullptr ? s.pool.acquire(capturing) : 0;
    if (slot != 0) {
      const std::uint64_t rounded =
          (r.shared_memory + slot_granularity - 1) / slot_granularity * slot_granularity + slot;
      auto limit = s.dynamic_limit.find(r.kernel);
      if (limit == s.dynamic_limit.end()) {
        // Once per kernel; may load the module lazily, which a global capture would refuse.
        relaxed_capture_mode relaxed;
        cudaFuncAttributes attributes{};
        std::uint64_t allowed = 0;
        if (cudaFuncGetAttributes(&attributes, r.kernel) == cudaSuccess)
          allowed = static_cast<std::uint64_t>(attributes.maxDynamicSharedSizeBytes);
        limit = s.dynamic_limit.emplace(r.kernel, allowed).first;
      }
      if (rounded <= limit->second) {
        __atomic_store_n(&s.table_host[launch_slots + slot], rounded, __ATOMIC_RELAXED);
        __atomic_store_n(&s.table_host[slot], r.launch_id | (capturing ? graph_flag : 0),
                         __ATOMIC_RELEASE);
        shared = rounded;
      } else {
        slot = 0; // no room for the slot bytes: the record falls back to %gridid
      }
    }
    const dim3 grid(r.grid.x, r.grid.y, r.grid.z), block(r.block.x, r.block.y, r.block.z);
    TDIAG_DETAIL_CUDA(cudaLaunchKernel(r.kernel, grid, block, const_cast<void**>(r.args),
                                       static_cast<std::size_t>(shared), stream),
                      r.device);
    // The kernel is already launched: a failing event record is no launch failure (the slot just
    // stays out of use; the context is broken and the next call says so).
    if (slot != 0 && !capturing)
      (void)s.pool.launched(slot, r.launch_id, stream);
    return launch_status::ok;
  }

  void do_synchronize(int device, stream_handle stream) override {
    if (stream != nullptr)
      TDIAG_DETAIL_CUDA(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), device);
    else
      TDIAG_DETAIL_CUDA(cudaDeviceSynchronize(), device);
  }
  stream_handle do_create_stream(int device) override {
    cudaStream_t s = nullptr;
    TDIAG_DETAIL_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), device);
    return s;
  }
  void do_destroy_stream(int device, stream_handle stream) override {
    TDIAG_DETAIL_CUDA(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), device);
  }

  int count_ = 0;
  std::vector<std::unique_ptr<device_slots>> devices_;
};

} // namespace

std::shared_ptr<backend> cuda_backend() {
  static const auto instance = [] {
    auto b = std::make_shared<cuda_backend_impl>();
    register_backend(b, 100);
    return std::shared_ptr<backend>(b);
  }();
  return instance;
}

} // namespace tdiag::assertions
