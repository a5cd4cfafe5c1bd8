// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA back-end: gpu/gpu_backend.hpp over the CUDA runtime API. Host code only; compiled by
// the host compiler and linked with CUDA::cudart. Device code lives in assert.h /
// detail/gpu_fail.h. This file holds only what differs from HIP: names, error codes, attributes,
// and the launch itself, which goes to the driver (see launch_kernel).
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/cuda_backend.hpp>

#include <cuda.h> // the driver's types only: its cuLaunchKernel comes through the runtime
#include <cuda_runtime.h>

#include <fmt/format.h>

#include "../gpu/gpu_backend.hpp"

namespace tdiag::assertions {
namespace detail {
namespace {

using driver_launch_type = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                        unsigned, unsigned, unsigned, CUstream, void**, void**);

// The driver's cuLaunchKernel, asked of the runtime once (no link to libcuda); null where the
// runtime cannot give it.
driver_launch_type driver_launch() {
  static const driver_launch_type fn = [] {
    void* entry = nullptr;
#if CUDART_VERSION >= 12050
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();
      entry = nullptr;
    }
#endif
    return reinterpret_cast<driver_launch_type>(entry);
  }();
  return fn;
}

} // namespace

struct cuda_api {
  using event_type = cudaEvent_t;
  using stream_type = cudaStream_t;
  using status_type = cudaError_t;
  using capture_mode_type = cudaStreamCaptureMode;
  using device_prop_type = cudaDeviceProp;
  static constexpr status_type success = cudaSuccess;
  static constexpr status_type not_ready = cudaErrorNotReady;
  static constexpr status_type invalid_device = cudaErrorInvalidDevice;
  static constexpr status_type invalid_value = cudaErrorInvalidValue;
  static constexpr capture_mode_type relaxed = cudaStreamCaptureModeRelaxed;
  static constexpr std::string_view name = "cuda";
  static constexpr std::string_view label = "CUDA";
  static constexpr std::string_view error_field = "cuda_error";
  static constexpr std::string_view code = codes::cuda_call_failed;

  static const char* error_name(status_type e) { return cudaGetErrorName(e); }
  static const char* error_string(status_type e) { return cudaGetErrorString(e); }
  static bool kills_context(status_type e) {
    return e == cudaErrorAssert || e == cudaErrorLaunchFailure || e == cudaErrorIllegalInstruction;
  }
  static void clear_error() { (void)cudaGetLastError(); }

  static status_type create_event(event_type* event) {
    // Timing would make every record and query slower; only completion is asked.
    return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
  }
  static status_type record_event(event_type event, stream_type stream) {
    return cudaEventRecord(event, stream);
  }
  static status_type query_event(event_type event) { return cudaEventQuery(event); }
  static void destroy_event(event_type event) { (void)cudaEventDestroy(event); }
  static status_type exchange_capture_mode(capture_mode_type* mode) {
    return cudaThreadExchangeStreamCaptureMode(mode);
  }

  static status_type device_count(int* count) { return cudaGetDeviceCount(count); }
  static status_type get_device(int* device) { return cudaGetDevice(device); }
  static status_type set_device(int device) { return cudaSetDevice(device); }
  static status_type get_properties(device_prop_type* p, int device) {
    return cudaGetDeviceProperties(p, device);
  }
  static std::string arch(const device_prop_type& p) {
    return fmt::format("sm_{}{}", p.major, p.minor);
  }
  // The opt-in limit: a kernel may have raised its own with cudaFuncSetAttribute.
  static std::uint64_t max_shared_memory(const device_prop_type& p) {
    return p.sharedMemPerBlockOptin;
  }
  static bool host_mapped_atomics(int, const device_prop_type& p) {
    return p.canMapHostMemory != 0;
  }
  static bool buffer_in_host_memory(int) { return true; } // system-scope atomics on every GPU

  static status_type host_alloc_mapped(void** p, std::size_t n) {
    return cudaHostAlloc(p, n, cudaHostAllocMapped | cudaHostAllocPortable);
  }
  static status_type host_alloc(void** p, std::size_t n) { return cudaMallocHost(p, n); }
  static status_type host_device_pointer(void** device, void* host) {
    return cudaHostGetDevicePointer(device, host, 0);
  }
  static status_type host_free(void* p) { return cudaFreeHost(p); }
  static status_type device_alloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
  static status_type device_free(void* p) { return cudaFree(p); }
  static status_type memcpy_async(void* d, const void* s, std::size_t n, stream_type stream) {
    return cudaMemcpyAsync(d, s, n, cudaMemcpyDefault, stream);
  }
  static status_type memcpy_to_symbol_async(const void* symbol, const void* s, std::size_t n,
                                            stream_type stream) {
    return cudaMemcpyToSymbolAsync(symbol, s, n, 0, cudaMemcpyHostToDevice, stream);
  }
  static status_type symbol_address(void** p, const void* symbol) {
    return cudaGetSymbolAddress(p, symbol);
  }

  static status_type create_stream(stream_type* s) {
    return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking);
  }
  static status_type destroy_stream(stream_type s) { return cudaStreamDestroy(s); }
  static status_type stream_synchronize(stream_type s) { return cudaStreamSynchronize(s); }
  static status_type device_synchronize() { return cudaDeviceSynchronize(); }
  // The legacy stream joins no capture (a launch there during a global capture fails anyway).
  static bool never_captured(stream_type s) { return s == nullptr || s == cudaStreamLegacy; }
  static status_type is_capturing(stream_type s, bool* active) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    const status_type e = cudaStreamIsCapturing(s, &status);
    *active = status == cudaStreamCaptureStatusActive;
    return e;
  }

  static status_type capture_of(stream_type s, std::uint64_t* id, const void** graph) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long capture = 0;
    cudaGraph_t g = nullptr;
    const status_type e = cudaStreamGetCaptureInfo(s, &status, &capture, &g);
    *id = capture;
    *graph = g;
    return e;
  }

  // The device reads %dynamic_smem_size, the dynamic part alone. The handle is the kernel's
  // function in the current device's context.
  static status_type describe_kernel(const void* kernel, kernel_info* out) {
    cudaFuncAttributes a{};
    const status_type e = cudaFuncGetAttributes(&a, kernel);
    out->static_bytes = 0;
    out->dynamic_limit = static_cast<std::uint64_t>(a.maxDynamicSharedSizeBytes);
    cudaFunction_t function = nullptr;
    if (e == cudaSuccess && driver_launch() != nullptr &&
        cudaGetFuncBySymbol(&function, kernel) != cudaSuccess) {
      (void)cudaGetLastError(); // launched by its address then
      function = nullptr;
    }
    out->handle = function;
    return e;
  }
  // By the driver where the kernel has a handle: the runtime's cudaLaunchKernel costs about
  // 100 ns more per launch on an H200 host, twice what a registered launch may add over a plain
  // one (benchmarks/RESULTS.md). A launch the driver refuses launched nothing; it goes to the
  // runtime, which says why in its own terms (and keeps its last-error state as for any launch).
  static status_type launch_kernel(const void* kernel, void* handle, extent3 grid, extent3 block,
                                   void** args, std::size_t shared, stream_type stream) {
    if (handle != nullptr &&
        driver_launch()(static_cast<CUfunction>(handle), grid.x, grid.y, grid.z, block.x, block.y,
                        block.z, static_cast<unsigned>(shared), reinterpret_cast<CUstream>(stream),
                        args, nullptr) == CUDA_SUCCESS)
      return cudaSuccess;
    return cudaLaunchKernel(kernel, dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z),
                            args, shared, stream);
  }
};

} // namespace detail

std::shared_ptr<backend> cuda_backend() {
  static const auto instance = [] {
    auto b = std::make_shared<detail::gpu_backend<detail::cuda_api>>();
    register_backend(b, 100);
    return std::shared_ptr<backend>(b);
  }();
  return instance;
}

} // namespace tdiag::assertions
