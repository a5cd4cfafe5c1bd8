// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The driver API, not the runtime: the injected library must not carry a second CUDA runtime
// (a process may already hold a static one), and CUstream / CUmemoryPool are what
// cudaStream_t / cudaMemPool_t are. The driver is looked up at run time, not linked: the library
// (and every test linking it) must load on machines without libcuda.so.1.
#include <tensordiag/capture/codes.hpp>
#include <tensordiag/capture/tracing_pool.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <dlfcn.h>

#include "session.hpp"

namespace tdiag::capture {
namespace {

struct driver_api {
  decltype(&::cuMemAllocAsync) mem_alloc_async = nullptr;
  decltype(&::cuMemAllocFromPoolAsync) mem_alloc_from_pool_async = nullptr;
  decltype(&::cuMemFreeAsync) mem_free_async = nullptr;
  decltype(&::cuCtxGetDevice) ctx_get_device = nullptr;
  decltype(&::cuMemGetInfo) mem_get_info = nullptr;
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  bool loaded = false;
};

template <typename Fn> void resolve(void* lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
}

const driver_api& driver() {
  static const driver_api api = [] {
    driver_api a;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr)
      return a;
    // The exported (unversioned-macro) names: cuda.h maps cuMemGetInfo to cuMemGetInfo_v2.
    resolve(lib, a.mem_alloc_async, "cuMemAllocAsync");
    resolve(lib, a.mem_alloc_from_pool_async, "cuMemAllocFromPoolAsync");
    resolve(lib, a.mem_free_async, "cuMemFreeAsync");
    resolve(lib, a.ctx_get_device, "cuCtxGetDevice");
    resolve(lib, a.mem_get_info, "cuMemGetInfo_v2");
    resolve(lib, a.get_error_name, "cuGetErrorName");
    resolve(lib, a.get_error_string, "cuGetErrorString");
    a.loaded = a.mem_alloc_async && a.mem_alloc_from_pool_async && a.mem_free_async &&
               a.ctx_get_device && a.mem_get_info && a.get_error_name && a.get_error_string;
    return a;
  }();
  return api;
}

[[noreturn]] void throw_no_driver(const char* call) {
  diagnostic d;
  d.code = codes::no_driver;
  d.title = "no CUDA driver";
  d.message = fmt::format("{}: libcuda.so.1 could not be loaded or lacks stream-ordered "
                          "allocation (CUDA 11.2+ driver needed)",
                          call);
  d.add_field("call", std::string(call));
  throw tdiag::error(std::move(d));
}

[[noreturn]] void throw_driver_error(CUresult r, const char* call, std::size_t bytes,
                                     std::string_view code) {
  const char* name = nullptr;
  const char* text = nullptr;
  driver().get_error_name(r, &name);
  driver().get_error_string(r, &text);
  diagnostic d;
  d.code = code;
  d.title = "stream-ordered allocation failed";
  d.message = fmt::format("{} of {} bytes returned {} ({})", call, bytes, name ? name : "?",
                          text ? text : "unknown error");
  d.add_field("bytes", static_cast<std::int64_t>(bytes));
  d.add_field("call", std::string(call));
  throw tdiag::error(std::move(d));
}

std::int32_t current_device() noexcept {
  CUdevice device = 0;
  return driver().ctx_get_device(&device) == CUDA_SUCCESS ? static_cast<std::int32_t>(device) : 0;
}

std::uint64_t device_free_bytes() noexcept {
  std::size_t free_bytes = 0, total = 0;
  return driver().mem_get_info(&free_bytes, &total) == CUDA_SUCCESS ? free_bytes : 0;
}

} // namespace

tracing_pool::tracing_pool(CUmemoryPool pool, std::string name)
    : pool_(pool), name_(std::move(name)) {}

void* tracing_pool::allocate(std::size_t bytes, CUstream stream) {
  const auto& cu = driver();
  if (!cu.loaded)
    throw_no_driver("tracing_pool::allocate");
  CUdeviceptr p = 0;
  const CUresult r = pool_ != nullptr ? cu.mem_alloc_from_pool_async(&p, bytes, pool_, stream)
                                      : cu.mem_alloc_async(&p, bytes, stream);
  const auto stream_id = reinterpret_cast<std::uintptr_t>(stream);
  const auto pool_id = reinterpret_cast<std::uintptr_t>(pool_);
  if (r != CUDA_SUCCESS) {
    if (auto* s = detail::session::current()) {
      detail::host_memory item;
      item.event.time = now_ns();
      item.event.action = trace::memory_action::oom;
      item.event.device = current_device();
      item.event.size = bytes;
      item.event.stream = stream_id;
      item.event.pool = pool_id;
      item.event.device_free = device_free_bytes();
      item.tag = name_;
      if (s->opts().stacks)
        item.stack = capture_raw_stack();
      s->push_memory(std::move(item));
    }
    throw_driver_error(r, pool_ ? "cuMemAllocFromPoolAsync" : "cuMemAllocAsync", bytes,
                       codes::pool_alloc_failed);
  }
  allocations_.fetch_add(1, std::memory_order_relaxed);
  const auto live = live_bytes_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  for (auto peak = peak_bytes_.load(std::memory_order_relaxed);
       live > peak && !peak_bytes_.compare_exchange_weak(peak, live, std::memory_order_relaxed);)
    ;
  void* ptr = reinterpret_cast<void*>(p);
  record_allocation(ptr, bytes, stream_id, current_device(), pool_id, name_.c_str());
  return ptr;
}

void tracing_pool::deallocate(void* p, std::size_t bytes, CUstream stream) {
  if (!driver().loaded)
    throw_no_driver("tracing_pool::deallocate");
  // Recorded before the free is queued: afterwards another thread may get the same address.
  record_free(p, bytes, reinterpret_cast<std::uintptr_t>(stream), current_device(),
              reinterpret_cast<std::uintptr_t>(pool_), name_.c_str());
  const CUresult r = driver().mem_free_async(reinterpret_cast<CUdeviceptr>(p), stream);
  if (r != CUDA_SUCCESS)
    throw_driver_error(r, "cuMemFreeAsync", bytes, codes::pool_free_failed);
  frees_.fetch_add(1, std::memory_order_relaxed);
  live_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
}

pool_stats tracing_pool::stats() const noexcept {
  return {allocations_.load(), frees_.load(), live_bytes_.load(), peak_bytes_.load()};
}

} // namespace tdiag::capture
