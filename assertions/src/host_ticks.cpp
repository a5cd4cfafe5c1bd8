// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "host_ticks.hpp"

#include <chrono>
#include <thread>
#include <time.h>

namespace tdiag::assertions::detail {
namespace {

std::int64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Taken when the library loads, before any launch can be stamped.
struct anchor {
  std::uint64_t ticks = host_ticks();
  std::int64_t monotonic = clock_ns(CLOCK_MONOTONIC);
  std::int64_t realtime = clock_ns(CLOCK_REALTIME);
};
const anchor start;

} // namespace

std::int64_t realtime_ns_fallback() noexcept {
  return clock_ns(CLOCK_REALTIME);
}

std::int64_t ticks_to_realtime_ns(std::uint64_t ticks) noexcept {
#if defined(__x86_64__) || defined(__aarch64__)
  constexpr std::int64_t min_span_ns = 10'000'000;
  std::int64_t span = clock_ns(CLOCK_MONOTONIC) - start.monotonic;
  if (span < min_span_ns) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(min_span_ns - span));
    span = clock_ns(CLOCK_MONOTONIC) - start.monotonic;
  }
  const std::uint64_t elapsed_ticks = host_ticks() - start.ticks;
  if (elapsed_ticks == 0)
    return start.realtime;
  const long double ns_per_tick =
      static_cast<long double>(span) / static_cast<long double>(elapsed_ticks);
  const long double delta =
      (static_cast<long double>(ticks) - static_cast<long double>(start.ticks)) * ns_per_tick;
  return start.realtime + static_cast<std::int64_t>(delta);
#else
  return static_cast<std::int64_t>(ticks);
#endif
}

} // namespace tdiag::assertions::detail
