// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace diff A B`: what grew and shrank between two snapshots or traces: memory alive at
// the end by allocation site, peak memory by device, and kernel time by kernel name.
// Diagnostic codes: TDIAG-TR-230 overview, 231 a site grew (warning), 232 a site shrank or
// disappeared, 233 a kernel's total time changed.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace tdiag::trace {

struct diff_row {
  std::string key;           ///< site ("train.py:42 (main)") or kernel name
  std::int64_t a = 0, b = 0; ///< bytes (sites) or total ns (kernels)
  std::size_t count_a = 0, count_b = 0;
  /// b - a, saturating within +-INT64_MAX (so std::abs of it is defined).
  [[nodiscard]] std::int64_t delta() const noexcept {
    constexpr std::int64_t most = std::numeric_limits<std::int64_t>::max();
    std::int64_t d = 0;
    if (__builtin_sub_overflow(b, a, &d) || d == -most - 1)
      return b > a ? most : -most;
    return d;
  }
};

struct diff_result {
  std::vector<diff_row> sites;   ///< by |delta|, largest first
  std::vector<diff_row> kernels; ///< by |delta|, largest first
  std::int64_t live_a = 0, live_b = 0;
  std::int64_t peak_allocated_a = -1, peak_allocated_b = -1;
  std::int64_t peak_reserved_a = -1, peak_reserved_b = -1;
  /// Allocations (and their bytes) each trace's memory events leave open that its dump does not
  /// hold (leak_result::open_not_in_dump): the live figures follow the dump.
  std::pair<std::size_t, std::uint64_t> disagree_a{0, 0}, disagree_b{0, 0};
};

[[nodiscard]] diff_result diff_traces(const trace& a, const trace& b);
[[nodiscard]] report diff_report(const trace& a, const trace& b, const diff_result& r,
                                 std::size_t top = 10);

} // namespace tdiag::trace
