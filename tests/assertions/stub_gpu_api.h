// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A pretend GPU runtime for assertions/src/gpu/gpu_backend.hpp, so that the one back-end source
// shared by CUDA and HIP runs on the host: memory is host memory, launches only note what they
// were given, events complete at once, and every runtime call is counted. Used by
// gpu_backend_test.cpp and benchmarks/assertions/launch_overhead_bench.cpp.
#pragma once

#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/core/backend.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "../../assertions/src/gpu/gpu_backend.hpp"

namespace tdiag::test {

/// A stream of the pretend runtime; `capturing` as if cudaStreamBeginCapture had been called.
struct stub_stream {
  bool capturing = false;
};

/// Runtime calls the back-end made, by kind (relaxed counters: tests read them between launches).
struct stub_calls {
  std::atomic<std::uint64_t> launches{0}, capture_queries{0}, event_records{0}, event_queries{0},
      attribute_queries{0}, device_queries{0}, wrong_handles{0};
  std::atomic<std::uint64_t> last_shared{0};
  std::atomic<const void*> last_stream{nullptr};
  void reset() {
    for (auto* c : {&launches, &capture_queries, &event_records, &event_queries, &attribute_queries,
                    &device_queries, &wrong_handles})
      c->store(0);
  }
};
inline stub_calls stub_counts;

struct stub_gpu_api {
  struct event {};
  struct properties {
    char name[32] = "Stub GPU";
    int maxThreadsPerBlock = 1024, maxThreadsDim[3] = {1024, 1024, 64},
        maxGridSize[3] = {2147483647, 65535, 65535}, warpSize = 32, multiProcessorCount = 4;
  };
  using event_type = event*;
  using stream_type = stub_stream*;
  using status_type = int;
  using capture_mode_type = int;
  using device_prop_type = properties;
  static constexpr status_type success = 0, not_ready = 1, invalid_device = 2, invalid_value = 3;
  static constexpr capture_mode_type relaxed = 2;
  static constexpr std::string_view name = "stub", label = "Stub", error_field = "stub_error";
  static constexpr std::string_view code = assertions::codes::cuda_call_failed;
  /// What a kernel's attributes say (assertions::detail::kernel_info).
  static inline std::uint64_t static_bytes = 0, dynamic_limit = 48 * 1024;
  /// Called inside every launch with its dynamic shared memory size (under the device's lock).
  static inline std::function<void(std::size_t)> on_launch;

  static const char* error_name(status_type) { return "stubError"; }
  static const char* error_string(status_type) { return "stub error"; }
  static bool kills_context(status_type) { return false; }
  static void clear_error() {}

  static status_type create_event(event_type* e) {
    *e = new event;
    return success;
  }
  static status_type record_event(event_type, stream_type) {
    stub_counts.event_records.fetch_add(1, std::memory_order_relaxed);
    return success;
  }
  static status_type query_event(event_type) {
    stub_counts.event_queries.fetch_add(1, std::memory_order_relaxed);
    return success; // every launch finishes at once
  }
  static void destroy_event(event_type e) { delete e; }
  static status_type exchange_capture_mode(capture_mode_type*) { return success; }

  static status_type device_count(int* n) {
    *n = 1;
    return success;
  }
  static status_type get_device(int* d) {
    stub_counts.device_queries.fetch_add(1, std::memory_order_relaxed);
    *d = 0;
    return success;
  }
  static status_type set_device(int d) { return d == 0 ? success : invalid_device; }
  static status_type get_properties(device_prop_type* p, int) {
    *p = properties{};
    return success;
  }
  static std::string arch(const device_prop_type&) { return "stub_1"; }
  static std::uint64_t max_shared_memory(const device_prop_type&) { return 48 * 1024; }
  static bool host_mapped_atomics(int, const device_prop_type&) { return true; }
  static bool buffer_in_host_memory(int) { return true; }

  static status_type host_alloc_mapped(void** p, std::size_t n) {
    *p = std::calloc(n, 1);
    return *p != nullptr ? success : invalid_value;
  }
  static status_type host_alloc(void** p, std::size_t n) { return host_alloc_mapped(p, n); }
  static status_type host_device_pointer(void** d, void* h) {
    *d = h;
    return success;
  }
  static status_type host_free(void* p) {
    std::free(p);
    return success;
  }
  static status_type device_alloc(void** p, std::size_t n) { return host_alloc_mapped(p, n); }
  static status_type device_free(void* p) { return host_free(p); }
  static status_type memcpy_async(void* d, const void* s, std::size_t n, stream_type) {
    std::memcpy(d, s, n);
    return success;
  }
  // Modules of real GPU code: none in a host program (registered_buffer_slots() is empty).
  static status_type memcpy_to_symbol_async(const void*, const void*, std::size_t, stream_type) {
    return success;
  }
  static status_type symbol_address(void** p, const void*) {
    *p = nullptr;
    return success;
  }

  static status_type create_stream(stream_type* s) {
    *s = new stub_stream;
    return success;
  }
  static status_type destroy_stream(stream_type s) {
    delete s;
    return success;
  }
  static status_type stream_synchronize(stream_type) { return success; }
  static status_type device_synchronize() { return success; }
  static bool never_captured(stream_type s) { return s == nullptr; }
  static status_type is_capturing(stream_type s, bool* active) {
    stub_counts.capture_queries.fetch_add(1, std::memory_order_relaxed);
    *active = s->capturing;
    return success;
  }

  /// Every capture is sequence 77 into a graph at the stream's address.
  static status_type capture_of(stream_type s, std::uint64_t* id, const void** graph) {
    *id = 77;
    *graph = s;
    return success;
  }

  /// The launch handle of a kernel: its host address plus one (any value the launch must see).
  static void* handle_of(const void* kernel) {
    return const_cast<char*>(static_cast<const char*>(kernel)) + 1;
  }
  static status_type describe_kernel(const void* kernel, assertions::detail::kernel_info* out) {
    stub_counts.attribute_queries.fetch_add(1, std::memory_order_relaxed);
    out->static_bytes = static_bytes;
    out->dynamic_limit = dynamic_limit;
    out->handle = handle_of(kernel);
    return success;
  }
  static status_type launch_kernel(const void* kernel, void* handle, extent3, extent3, void**,
                                   std::size_t shared, stream_type stream) {
    stub_counts.launches.fetch_add(1, std::memory_order_relaxed);
    if (handle != handle_of(kernel))
      stub_counts.wrong_handles.fetch_add(1, std::memory_order_relaxed);
    stub_counts.last_shared.store(shared, std::memory_order_relaxed);
    stub_counts.last_stream.store(stream, std::memory_order_relaxed);
    if (on_launch)
      on_launch(shared);
    return success;
  }
};

} // namespace tdiag::test
