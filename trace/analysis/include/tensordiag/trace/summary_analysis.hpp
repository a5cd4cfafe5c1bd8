// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace summary`: event counts by kind, the time span, peak allocated and reserved bytes
// per device and when, kernels by total time, and how busy each GPU stream was.
// Diagnostic codes TDIAG-TR-200..203 (notes).
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tdiag::trace {

struct kernel_stat {
  string_id name = no_string;
  std::size_t count = 0;
  std::int64_t total_ns = 0;
  std::int64_t max_ns = 0;
  std::size_t longest = 0; ///< index in trace::kernels.all() of the first kernel of the group
                           ///< that lasted max_ns (the first of the group when none lasted > 0)
  [[nodiscard]] std::int64_t mean_ns() const noexcept {
    return count == 0 ? 0 : total_ns / static_cast<std::int64_t>(count);
  }
};

struct memory_peak {
  lane_id lane = 0;
  std::int32_t device = 0;
  std::size_t events = 0;
  /// Bytes in allocated blocks (as torch.cuda.memory_allocated() counts them) and reserved
  /// from the driver, from memory_series_of(); -1 when unknown.
  std::int64_t peak_allocated = -1, peak_allocated_time = 0;
  std::int64_t peak_reserved = -1, peak_reserved_time = 0;
  std::int64_t final_allocated = -1, final_reserved = -1;
  std::size_t oom_events = 0;
  /// Bytes the program asked for (block sizes less rounding); -1 when the source does not say.
  std::int64_t peak_requested = -1, peak_requested_time = 0, final_requested = -1;
  /// Events the replay found not to match its state (an alloc inside a live block, a free of a
  /// block that is not there, a segment freed in use): the figures count them as applied. With
  /// `reported` totals, the allocations and frees whose total did not move by their bytes.
  std::size_t mismatched_events = 0;
  /// The figures are the totals the source reported with each event (Kineto [memory]).
  bool reported = false;
};

struct stream_stat {
  lane_id lane = 0;
  std::int64_t device = 0;
  std::uint64_t stream = 0;
  std::size_t kernels = 0, copies = 0;
  std::int64_t busy_ns = 0;
  double busy_fraction = 0; ///< busy time over the span of all GPU activity
};

struct summary_result {
  std::vector<std::pair<std::string, std::size_t>> counts; ///< kind -> events, in a fixed order
  time_span span;
  time_span gpu_span;
  std::vector<memory_peak> memory;
  std::vector<kernel_stat> kernels; ///< by total time, longest first
  std::vector<stream_stat> streams;
};

/// Peak allocated/reserved bytes of one memory lane, from memory_series_of(): the totals the
/// events carry (Kineto) or the replayed allocator state (snapshots).
/// `threads`: how many threads its replay may take (for_each_memory_sample).
[[nodiscard]] memory_peak memory_peak_of(const trace& t, lane_id lane, unsigned threads = 1);
/// memory_peak_of() of every device memory lane that has events, in lane order (lanes on threads).
[[nodiscard]] std::vector<memory_peak> memory_peaks(const trace& t);
/// Kernels grouped by name, longest total first (then by name): the one grouping that the CLI,
/// `tdiag capture`, the viewer's tables and Python present.
[[nodiscard]] std::vector<kernel_stat> kernel_stats(const trace& t);

/// `t` must be finalized.
[[nodiscard]] summary_result summarize(const trace& t);
/// Memory devices and streams a summary report lists at most, each: those with the highest
/// peak reserved bytes and the busiest, then one note for the rest.
inline constexpr std::size_t summary_lanes_listed = 64;
/// The report: an overview, one note per memory device, the `top` kernels and a note per
/// stream (summary_lanes_listed of each at most).
[[nodiscard]] report summary_report(const trace& t, const summary_result& s, std::size_t top = 10);

} // namespace tdiag::trace
