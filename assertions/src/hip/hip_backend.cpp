// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The HIP back-end: gpu/gpu_backend.hpp over the HIP runtime API. Host code only; compiled by
// hipcc (library tensordiag_assertions_hip). Device code lives in assert.h / detail/gpu_fail.h.
// This file holds only what differs from CUDA: names, error codes, attributes. Compiled for
// gfx90a and gfx1030 but never run on AMD hardware.
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/hip_backend.hpp>

#include <hip/hip_runtime_api.h>

#include <string_view>

#include "../gpu/gpu_backend.hpp"

namespace tdiag::assertions {
namespace detail {

struct hip_api {
  using event_type = hipEvent_t;
  using stream_type = hipStream_t;
  using status_type = hipError_t;
  using capture_mode_type = hipStreamCaptureMode;
  using device_prop_type = hipDeviceProp_t;
  static constexpr status_type success = hipSuccess;
  static constexpr status_type not_ready = hipErrorNotReady;
  static constexpr status_type invalid_device = hipErrorInvalidDevice;
  static constexpr status_type invalid_value = hipErrorInvalidValue;
  static constexpr capture_mode_type relaxed = hipStreamCaptureModeRelaxed;
  static constexpr std::string_view name = "hip";
  static constexpr std::string_view label = "HIP";
  static constexpr std::string_view error_field = "hip_error";
  static constexpr std::string_view code = codes::hip_call_failed;

  static const char* error_name(status_type e) { return hipGetErrorName(e); }
  static const char* error_string(status_type e) { return hipGetErrorString(e); }
  static bool kills_context(status_type e) {
    return e == hipErrorAssert || e == hipErrorLaunchFailure || e == hipErrorIllegalAddress;
  }
  static void clear_error() { (void)hipGetLastError(); }

  static status_type create_event(event_type* event) {
    // Timing would make every record and query slower; only completion is asked.
    return hipEventCreateWithFlags(event, hipEventDisableTiming);
  }
  static status_type record_event(event_type event, stream_type stream) {
    return hipEventRecord(event, stream);
  }
  static status_type query_event(event_type event) { return hipEventQuery(event); }
  static void destroy_event(event_type event) { (void)hipEventDestroy(event); }
  static status_type exchange_capture_mode(capture_mode_type* mode) {
    return hipThreadExchangeStreamCaptureMode(mode);
  }

  static status_type device_count(int* count) { return hipGetDeviceCount(count); }
  static status_type get_device(int* device) { return hipGetDevice(device); }
  static status_type set_device(int device) { return hipSetDevice(device); }
  static status_type get_properties(device_prop_type* p, int device) {
    return hipGetDeviceProperties(p, device);
  }
  // "gfx90a:sramecc+:xnack-": the processor is what --offload-arch and the reports name; the
  // target features after ':' describe the code object, not the device.
  static std::string arch(const device_prop_type& p) {
    const std::string_view a(p.gcnArchName);
    return std::string(a.substr(0, a.find(':')));
  }
  // AMD has no opt-in above this: a work-group may use the whole LDS of its CU.
  static std::uint64_t max_shared_memory(const device_prop_type& p) { return p.sharedMemPerBlock; }
  // Whether device atomics reach host memory over the link (PCIe atomics, or xGMI to the CPU).
  // hipamd's hipDeviceGetAttribute of the ROCm 5 era has no case for it and answers
  // hipErrorInvalidValue (read in its source, not run): an unknown answer counts as "no", since
  // device memory is correct everywhere, only slower to read.
  static bool buffer_in_host_memory(int device) {
    int value = 0;
    if (hipDeviceGetAttribute(&value, hipDeviceAttributeHostNativeAtomicSupported, device) !=
        hipSuccess) {
      (void)hipGetLastError();
      return false;
    }
    return value != 0;
  }
  static bool host_mapped_atomics(int device, const device_prop_type&) {
    return buffer_in_host_memory(device);
  }

  // Coherent: device writes reach the host while the kernel runs (the watchdog reads them).
  // Portable: any device may launch with it, as on CUDA.
  static status_type host_alloc_mapped(void** p, std::size_t n) {
    return hipHostMalloc(p, n, hipHostMallocMapped | hipHostMallocCoherent | hipHostMallocPortable);
  }
  static status_type host_alloc(void** p, std::size_t n) {
    return hipHostMalloc(p, n, hipHostMallocDefault);
  }
  static status_type host_device_pointer(void** device, void* host) {
    return hipHostGetDevicePointer(device, host, 0);
  }
  static status_type host_free(void* p) { return hipHostFree(p); }
  // Fine-grained first: coarse-grained memory is coherent with the host only at kernel ends.
  static status_type device_alloc(void** p, std::size_t n) {
    if (hipExtMallocWithFlags(p, n, hipDeviceMallocFinegrained) == hipSuccess)
      return hipSuccess;
    (void)hipGetLastError();
    *p = nullptr;
    return hipMalloc(p, n);
  }
  static status_type device_free(void* p) { return hipFree(p); }
  static status_type memcpy_async(void* d, const void* s, std::size_t n, stream_type stream) {
    return hipMemcpyAsync(d, s, n, hipMemcpyDefault, stream);
  }
  static status_type memcpy_to_symbol_async(const void* symbol, const void* s, std::size_t n,
                                            stream_type stream) {
    return hipMemcpyToSymbolAsync(symbol, s, n, 0, hipMemcpyHostToDevice, stream);
  }
  static status_type symbol_address(void** p, const void* symbol) {
    return hipGetSymbolAddress(p, symbol);
  }

  static status_type create_stream(stream_type* s) {
    return hipStreamCreateWithFlags(s, hipStreamNonBlocking);
  }
  static status_type destroy_stream(stream_type s) { return hipStreamDestroy(s); }
  static status_type stream_synchronize(stream_type s) { return hipStreamSynchronize(s); }
  static status_type device_synchronize() { return hipDeviceSynchronize(); }
  // The null stream cannot be captured (hipStreamIsCapturing answers an error for it).
  static bool never_captured(stream_type s) { return s == nullptr; }
  static status_type is_capturing(stream_type s, bool* active) {
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    const status_type e = hipStreamIsCapturing(s, &status);
    *active = status == hipStreamCaptureStatusActive;
    return e;
  }

  static status_type capture_of(stream_type s, std::uint64_t* id, const void** graph) {
    hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
    unsigned long long capture = 0;
    hipGraph_t g = nullptr;
    const status_type e = hipStreamGetCaptureInfo_v2(s, &status, &capture, &g);
    *id = capture;
    *graph = g;
    return e;
  }

  // Unlike CUDA the device sees only the total LDS, static + dynamic (gpu_fail.h).
  static status_type describe_kernel(const void* kernel, kernel_info* out) {
    hipFuncAttributes a{};
    const status_type e = hipFuncGetAttributes(&a, kernel);
    out->static_bytes = a.sharedSizeBytes;
    out->dynamic_limit = static_cast<std::uint64_t>(a.maxDynamicSharedSizeBytes);
    return e;
  }
  // HIP launches by the kernel's host address (no handle).
  static status_type launch_kernel(const void* kernel, void* /*handle*/, extent3 grid,
                                   extent3 block, void** args, std::size_t shared,
                                   stream_type stream) {
    return hipLaunchKernel(kernel, dim3(grid.x, grid.y, grid.z), dim3(block.x, block.y, block.z),
                           args, shared, stream);
  }
};

} // namespace detail

std::shared_ptr<backend> hip_backend() {
  static const auto instance = [] {
    auto b = std::make_shared<detail::gpu_backend<detail::hip_api>>();
    // Below CUDA (100): a machine with both picks CUDA unless TDIAG_BACKEND says otherwise.
    register_backend(b, 90);
    return std::shared_ptr<backend>(b);
  }();
  return instance;
}

} // namespace tdiag::assertions
