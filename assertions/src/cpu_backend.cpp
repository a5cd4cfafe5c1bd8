// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/assertions/assert.h>
#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/cpu_device.hpp>
#include <tensordiag/assertions/failure_buffer.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sched.h>
#include <thread>

#include "cpu_fiber.hpp"

namespace tdiag::assertions {

device_properties cpu_backend_options::default_properties() {
  device_properties p;
  p.name = "CPU (host threads)";
#if defined(__x86_64__)
  p.arch = "x86_64";
#elif defined(__aarch64__)
  p.arch = "aarch64";
#else
  p.arch = "host";
#endif
  p.max_threads_per_block = 1024;
  p.max_block_dim = {1024, 1024, 64};
  p.max_grid_dim = {2147483647u, 65535u, 65535u};
  p.max_shared_memory_per_block = 48 * 1024;
  p.warp_size = cpu::warp_size;
  p.multiprocessor_count = std::max(1u, std::thread::hardware_concurrency());
  p.host_mapped_atomics = true;
  return p;
}

cpu_backend::cpu_backend(cpu_backend_options options)
    : options_(std::move(options)),
      bound_(static_cast<std::size_t>(std::max(options_.device_count, 0))) {
  if (options_.fiber_stack_bytes == 0)
    options_.fiber_stack_bytes = cpu_detail::default_stack_bytes();
}

cpu_backend::~cpu_backend() = default;

std::shared_ptr<cpu_backend> cpu_backend::shared() {
  static const auto instance = [] {
    auto b = std::make_shared<cpu_backend>();
    register_backend(b, -100);
    return b;
  }();
  return instance;
}

void cpu_backend::check_device(int device) const {
  if (device >= 0 && device < options_.device_count)
    return;
  diagnostic d;
  d.code = codes::bad_device_ordinal;
  d.title = "invalid device ordinal";
  d.message = fmt::format("back-end '{}' has {} device(s); ordinal {} is out of range",
                          options_.name, options_.device_count, device);
  throw error(std::move(d));
}

device_properties cpu_backend::do_properties(int device) const {
  check_device(device);
  device_properties p = options_.properties;
  p.ordinal = device;
  return p;
}

mapped_buffer cpu_backend::do_allocate_failure_buffer(int device, std::size_t bytes) {
  check_device(device);
  void* p = ::operator new (bytes, std::align_val_t{64});
  std::memset(p, 0, bytes);
  return mapped_buffer{p, p, bytes, true};
}

void cpu_backend::do_free_failure_buffer(int device, const mapped_buffer& buffer) {
  check_device(device);
  void* expected = buffer.device;
  bound_[static_cast<std::size_t>(device)].compare_exchange_strong(expected, nullptr);
  ::operator delete (buffer.host, std::align_val_t{64});
}

void cpu_backend::do_bind_failure_buffer(int device, const mapped_buffer& buffer) {
  check_device(device);
  bound_[static_cast<std::size_t>(device)].store(buffer.device, std::memory_order_release);
}

void cpu_backend::do_read_device_memory(int, const void* source, void* destination,
                                        std::size_t bytes) const {
  std::memcpy(destination, source, bytes);
}

void cpu_backend::do_write_device_memory(int, void* destination, const void* source,
                                         std::size_t bytes) {
  std::memcpy(destination, source, bytes);
}

launch_status cpu_backend::do_launch(const launch_request& request) {
  check_device(request.device);
  if (request.host_invoke == nullptr) {
    diagnostic d;
    d.code = codes::not_runnable_on_cpu;
    d.title = "kernel not runnable on the CPU";
    d.message =
        "this launch came from a GPU translation unit (.cu/.hip): the CPU back-end can only "
        "run kernels compiled as C++";
    throw error(std::move(d));
  }
  auto* buffer = static_cast<buffer_header*>(
      bound_[static_cast<std::size_t>(request.device)].load(std::memory_order_acquire));
  return cpu_detail::run_grid(request, buffer, options_.fiber_stack_bytes);
}

void cpu_backend::do_synchronize(int device, stream_handle) {
  check_device(device); // launches run to completion on the launching thread
}

stream_handle cpu_backend::do_create_stream(int device) {
  check_device(device);
  std::lock_guard lock(streams_mutex_);
  streams_.push_back(std::make_unique<char>(0));
  return streams_.back().get();
}

void cpu_backend::do_destroy_stream(int device, stream_handle stream) {
  check_device(device);
  std::lock_guard lock(streams_mutex_);
  std::erase_if(streams_, [&](const std::unique_ptr<char>& s) { return s.get() == stream; });
}

namespace detail {

void cpu_fail(const site_descriptor* site, const std::uint64_t* values, const value_type* types,
              std::uint32_t count) {
  cpu_detail::launch_context* launch = cpu_detail::current_launch();
  if (launch == nullptr) {
    // Not inside a CPU-back-end kernel: there is no thread to stop. Never silent.
    fmt::print(stderr,
               "tensordiag: device assertion failed outside a kernel launch: {} at {}:{} in {}\n",
               site->expression, site->file, site->line, site->function);
    std::fflush(stderr);
    std::abort();
  }
  buffer_header* h = launch->buffer;
  if (h == nullptr)
    cpu_detail::stop_current_thread(true); // runtime off: trap, loudly
  const launch_request& r = *launch->request;
  failure_origin o{};
  o.launch_id = r.launch_id;
  o.timestamp_ns =
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
  o.block[0] = blockIdx.x;
  o.block[1] = blockIdx.y;
  o.block[2] = blockIdx.z;
  o.thread[0] = threadIdx.x;
  o.thread[1] = threadIdx.y;
  o.thread[2] = threadIdx.z;
  const int cpu_number = sched_getcpu();
  o.sm = cpu_number < 0 ? 0u : static_cast<std::uint32_t>(cpu_number);
  o.lane = launch->linear_thread % cpu::warp_size;
  publish_failure(h, site, o, values, types, count);
  const auto p = static_cast<policy>(__atomic_load_n(&h->policy, __ATOMIC_RELAXED));
  cpu_detail::stop_current_thread(p == policy::trap);
}

} // namespace detail
} // namespace tdiag::assertions
