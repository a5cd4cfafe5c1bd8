// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A launch timestamp cheap enough for every launch: the CPU's constant-rate counter (the TSC on
// x86-64, the virtual counter on AArch64), turned into wall-clock time only when a report is
// built. clock_gettime costs 6 to 25 ns where the vDSO serves it and a system call (about a
// microsecond) in sandboxes such as gVisor, which is a launch's whole budget. Not API.
#pragma once

#include <cstdint>

#if defined(__x86_64__)
#  include <x86intrin.h>
#endif

namespace tdiag::assertions::detail {

/// CLOCK_REALTIME in ns since the epoch.
std::int64_t realtime_ns_fallback() noexcept;

/// The counter now (ns since the epoch on platforms without a usable counter).
inline std::uint64_t host_ticks() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, cntvct_el0" : "=r"(v));
  return v;
#else
  return realtime_ns_fallback();
#endif
}

/// Wall-clock ns since the epoch of a host_ticks() value taken in this process. The counter's rate
/// is measured against CLOCK_MONOTONIC over the process's lifetime so far (at least 10 ms; the
/// first call may wait for that), so the error stays well under the clock's own tick.
std::int64_t ticks_to_realtime_ns(std::uint64_t ticks) noexcept;

} // namespace tdiag::assertions::detail
