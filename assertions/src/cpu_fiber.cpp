// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "cpu_fiber.hpp"

#include <tensordiag/assertions/codes.hpp>
#include <tensordiag/assertions/cpu_device.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

// Sanitizers must be told about stack switches, or they report false positives.
#if defined(__SANITIZE_ADDRESS__)
#  define TDIAG_DETAIL_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define TDIAG_DETAIL_ASAN 1
#  endif
#endif
#if defined(__SANITIZE_THREAD__)
#  define TDIAG_DETAIL_TSAN 1
#elif defined(__has_feature)
#  if __has_feature(thread_sanitizer)
#    define TDIAG_DETAIL_TSAN 1
#  endif
#endif
#ifdef TDIAG_DETAIL_ASAN
extern "C" {
void __sanitizer_start_switch_fiber(void** fake_stack_save, const void* bottom, size_t size);
void __sanitizer_finish_switch_fiber(void* fake_stack_save, const void** bottom_old,
                                     size_t* size_old);
void __asan_unpoison_memory_region(void const volatile* addr, size_t size);
}
#endif
#ifdef TDIAG_DETAIL_TSAN
extern "C" {
void* __tsan_get_current_fiber();
void* __tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void* fiber);
void __tsan_switch_to_fiber(void* fiber, unsigned flags);
}
#endif

// CUDA's built-in variables for kernels compiled for the CPU back-end.
thread_local uint3 threadIdx{0, 0, 0};
thread_local uint3 blockIdx{0, 0, 0};
thread_local dim3 blockDim{};
thread_local dim3 gridDim{};

namespace tdiag::assertions::cpu_detail {
namespace {

enum class fiber_state : std::uint8_t { runnable, waiting, done };

struct fiber {
  ucontext_t context{};
  char* mapping = nullptr; // guard page + stack
  std::size_t mapping_bytes = 0;
  char* stack = nullptr;
  std::size_t stack_bytes = 0;
  fiber_state state = fiber_state::done;
  uint3 index{0, 0, 0};
  std::uint32_t linear = 0;
  bool abandoned = false; // left mid-run: stack shadow and TSan fiber need a reset
  void* fake_stack = nullptr;
  void* tsan_fiber = nullptr;

  fiber(std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    stack_bytes = (bytes + page - 1) / page * page;
    mapping_bytes = stack_bytes + page;
    void* p = mmap(nullptr, mapping_bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (p == MAP_FAILED) {
      diagnostic d;
      d.code = codes::fiber_stack;
      d.title = "cannot allocate a CPU fiber stack";
      d.message =
          fmt::format("mmap of {} bytes for a CPU-back-end thread stack failed", mapping_bytes);
      d.hint = "lower TDIAG_CPU_STACK_KB or the block size";
      throw error(std::move(d));
    }
    mapping = static_cast<char*>(p);
    mprotect(mapping, page, PROT_NONE); // overflow faults instead of corrupting a neighbour
    stack = mapping + page;
    getcontext(&context);
#ifdef TDIAG_DETAIL_TSAN
    tsan_fiber = __tsan_create_fiber(0);
#endif
  }
  ~fiber() {
#ifdef TDIAG_DETAIL_TSAN
    if (tsan_fiber)
      __tsan_destroy_fiber(tsan_fiber);
#endif
    if (mapping)
      munmap(mapping, mapping_bytes);
  }
  fiber(const fiber&) = delete;
  fiber& operator=(const fiber&) = delete;
};

struct scheduler {
  std::vector<std::unique_ptr<fiber>> fibers;
  ucontext_t main_context{};
  fiber* current = nullptr;
  launch_context launch;
  bool active = false;
  bool abort = false;
  std::exception_ptr error;
  std::vector<std::max_align_t> shared_memory;
  const void* main_stack_bottom = nullptr;
  std::size_t main_stack_size = 0;
  void* main_fake_stack = nullptr;
  void* main_tsan_fiber = nullptr;
};

thread_local scheduler* active_scheduler = nullptr;

scheduler& local_scheduler() {
  thread_local scheduler s;
  return s;
}

void fiber_entry();

void start(fiber& f) {
  if (f.abandoned) {
#ifdef TDIAG_DETAIL_ASAN
    __asan_unpoison_memory_region(f.stack, f.stack_bytes);
#endif
#ifdef TDIAG_DETAIL_TSAN
    __tsan_destroy_fiber(f.tsan_fiber);
    f.tsan_fiber = __tsan_create_fiber(0);
#endif
    f.abandoned = false;
  }
  f.context.uc_stack.ss_sp = f.stack;
  f.context.uc_stack.ss_size = f.stack_bytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, fiber_entry, 0);
  f.state = fiber_state::runnable;
}

void resume(scheduler& s, fiber& f) {
  s.current = &f;
  s.launch.linear_thread = f.linear;
  threadIdx = f.index;
#ifdef TDIAG_DETAIL_ASAN
  __sanitizer_start_switch_fiber(&s.main_fake_stack, f.stack, f.stack_bytes);
#endif
#ifdef TDIAG_DETAIL_TSAN
  __tsan_switch_to_fiber(f.tsan_fiber, 0);
#endif
  swapcontext(&s.main_context, &f.context);
#ifdef TDIAG_DETAIL_ASAN
  __sanitizer_finish_switch_fiber(s.main_fake_stack, nullptr, nullptr);
#endif
  s.current = nullptr;
}

// From a fiber back to the scheduler; returns when the scheduler resumes this fiber (never when
// `leaving`).
void to_scheduler(scheduler& s, fiber& f, bool leaving) {
#ifdef TDIAG_DETAIL_ASAN
  __sanitizer_start_switch_fiber(leaving ? nullptr : &f.fake_stack, s.main_stack_bottom,
                                 s.main_stack_size);
#endif
#ifdef TDIAG_DETAIL_TSAN
  __tsan_switch_to_fiber(s.main_tsan_fiber, 0);
#endif
  swapcontext(&f.context, &s.main_context);
#ifdef TDIAG_DETAIL_ASAN
  __sanitizer_finish_switch_fiber(f.fake_stack, &s.main_stack_bottom, &s.main_stack_size);
#endif
  (void)leaving;
}

void fiber_entry() {
  scheduler& s = *active_scheduler;
#ifdef TDIAG_DETAIL_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &s.main_stack_bottom, &s.main_stack_size);
#endif
  fiber& f = *s.current;
  try {
    s.launch.request->host_invoke(s.launch.request->kernel, s.launch.request->args);
  } catch (...) {
    if (!s.error)
      s.error = std::current_exception();
    s.abort = true;
  }
  f.state = fiber_state::done;
  f.abandoned = true; // fiber_entry's own frame never returns: reset sanitizer state on reuse
  to_scheduler(s, f, true);
  std::abort(); // unreachable: a finished fiber is never resumed
}

void prepare_fibers(scheduler& s, std::size_t count, std::size_t stack_bytes) {
  if (!s.fibers.empty() && s.fibers.front()->stack_bytes < stack_bytes)
    s.fibers.clear();
  while (s.fibers.size() < count)
    s.fibers.push_back(std::make_unique<fiber>(stack_bytes));
}

} // namespace

std::size_t default_stack_bytes() noexcept {
  if (const char* env = std::getenv("TDIAG_CPU_STACK_KB"); env && *env) {
    const long kb = std::strtol(env, nullptr, 10);
    if (kb >= 16)
      return static_cast<std::size_t>(kb) * 1024;
  }
#if defined(TDIAG_DETAIL_ASAN) || defined(TDIAG_DETAIL_TSAN)
  return 256 * 1024;
#else
  return 64 * 1024;
#endif
}

launch_status run_grid(const launch_request& request, buffer_header* buffer,
                       std::size_t stack_bytes) {
  scheduler& s = local_scheduler();
  if (s.active) {
    diagnostic d;
    d.code = codes::nested_launch;
    d.title = "kernel launched from a kernel";
    d.message = "the CPU back-end does not run launches from inside a kernel (dynamic parallelism)";
    throw error(std::move(d));
  }
  s.active = true;
  s.abort = false;
  s.error = nullptr;
  s.launch = launch_context{&request, buffer, 0};
  active_scheduler = &s;
#ifdef TDIAG_DETAIL_TSAN
  s.main_tsan_fiber = __tsan_get_current_fiber();
#endif
  const std::size_t threads = static_cast<std::size_t>(request.block.volume());
  prepare_fibers(s, threads, stack_bytes);
  s.shared_memory.assign((request.shared_memory + sizeof(std::max_align_t) - 1) /
                             sizeof(std::max_align_t),
                         std::max_align_t{});
  gridDim = dim3(request.grid.x, request.grid.y, request.grid.z);
  blockDim = dim3(request.block.x, request.block.y, request.block.z);

  for (std::uint32_t bz = 0; bz < request.grid.z && !s.abort; ++bz)
    for (std::uint32_t by = 0; by < request.grid.y && !s.abort; ++by)
      for (std::uint32_t bx = 0; bx < request.grid.x && !s.abort; ++bx) {
        blockIdx = uint3{bx, by, bz};
        if (!s.shared_memory.empty())
          std::memset(static_cast<void*>(s.shared_memory.data()), 0,
                      s.shared_memory.size() * sizeof(std::max_align_t));
        for (std::size_t i = 0; i < threads; ++i) {
          fiber& f = *s.fibers[i];
          const auto li = static_cast<std::uint32_t>(i);
          f.linear = li;
          f.index = uint3{li % request.block.x, (li / request.block.x) % request.block.y,
                          li / (request.block.x * request.block.y)};
          start(f);
        }
        std::size_t live = threads;
        while (live > 0 && !s.abort) {
          for (std::size_t i = 0; i < threads && !s.abort; ++i) {
            fiber& f = *s.fibers[i];
            if (f.state != fiber_state::runnable)
              continue;
            resume(s, f);
            if (f.state == fiber_state::done)
              --live;
          }
          // Every live thread now waits at the barrier; threads that exited do not count, as on
          // sm_70+ GPUs: release the barrier.
          for (std::size_t i = 0; i < threads; ++i)
            if (s.fibers[i]->state == fiber_state::waiting)
              s.fibers[i]->state = fiber_state::runnable;
        }
        if (s.abort)
          for (std::size_t i = 0; i < threads; ++i)
            if (s.fibers[i]->state != fiber_state::done)
              s.fibers[i]->abandoned = true;
      }
  s.active = false;
  active_scheduler = nullptr;
  if (s.error)
    std::rethrow_exception(std::exchange(s.error, nullptr));
  return s.abort ? launch_status::trapped : launch_status::ok;
}

launch_context* current_launch() noexcept {
  return active_scheduler && active_scheduler->current ? &active_scheduler->launch : nullptr;
}

void stop_current_thread(bool abort_launch) noexcept {
  scheduler& s = *active_scheduler;
  fiber& f = *s.current;
  f.state = fiber_state::done;
  f.abandoned = true;
  if (abort_launch)
    s.abort = true;
  to_scheduler(s, f, true);
  std::abort(); // unreachable
}

} // namespace tdiag::assertions::cpu_detail

namespace tdiag::assertions::cpu {

void sync_threads() noexcept {
  auto* s = cpu_detail::active_scheduler;
  if (s == nullptr || s->current == nullptr)
    return;
  auto& f = *s->current;
  f.state = cpu_detail::fiber_state::waiting;
  cpu_detail::to_scheduler(*s, f, false);
}

void* dynamic_shared_memory() noexcept {
  auto* s = cpu_detail::active_scheduler;
  if (s == nullptr || s->shared_memory.empty())
    return nullptr;
  return s->shared_memory.data();
}

bool in_kernel() noexcept {
  return cpu_detail::current_launch() != nullptr;
}

} // namespace tdiag::assertions::cpu
