// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The rows one rank's analyses read (private to the job_* sources): what HTA holds in its
// DataFrame after load, taken from the trace model. GPU rows are the ones HTA gives a stream:
// kernels, memcpy/memset and cuda_sync waits. CPU rows are host calls carrying a correlation id.
#pragma once

#include <tensordiag/trace/job_analysis.hpp>

#include <cstdint>
#include <vector>

namespace tdiag::trace::detail {

/// A [start, end) stretch of time in ns.
struct interval {
  std::int64_t start = 0, end = 0;
};

struct gpu_row {
  std::int64_t start = 0, end = 0; ///< ns; in HTA mode whole us (end may precede start by 1 us)
  std::uint64_t stream = 0;
  string_id name = no_string;
  std::uint32_t correlation = 0; ///< 0 = none
  kernel_class type = kernel_class::other;
  bool is_kernel = false; ///< kernel, memcpy or memset (HTA's kernel categories), not a sync
  std::int64_t launch_start = INT64_MIN; ///< start of the correlated CPU row; INT64_MIN = none
  double bandwidth_gbps = 0; ///< memcpy/memset: the source's GB/s, else bytes / duration; else 0
};

struct cpu_row {
  std::int64_t start = 0, end = 0;
  string_id name = no_string;
  std::uint32_t correlation = 0;
};

struct step_range {
  int step = 0;
  std::int64_t start = 0, end = 0;
};

struct rank_rows {
  /// HTA's last-step filter in force: CPU rows starting at or after `last_step_start` are gone.
  bool step_filter = false;
  std::int64_t last_step_start = 0;
  std::vector<gpu_row> gpu; ///< sorted by start (stable)
  std::vector<cpu_row> cpu; ///< calls with a correlation id, sorted by start
  std::vector<int> steps;
  std::vector<step_range> step_ranges; ///< host ProfilerStep ranges left, by start
  /// reach[i]: the latest end among rows 0..i (see first_reaching).
  std::vector<std::int64_t> gpu_reach, step_reach;
};

/// Over rows in start order with their reach: the first row that may hold `time` or anything
/// after it. Every row before it ended at or before `time`.
[[nodiscard]] std::size_t first_reaching(const std::vector<std::int64_t>& reach,
                                         std::int64_t time) noexcept;

/// The times the analyses see: exact ns, or in HTA mode (hta_compat on a trace with fractional
/// ts) ceil(ts) / floor(ts + dur) in whole us, as HTA's round_down_time_stamps.
class row_clock {
public:
  row_clock(const trace& t, const analysis_options& options);
  [[nodiscard]] interval operator()(std::int64_t start, std::int64_t end) const noexcept;

private:
  bool round_ = false;
  std::int64_t rebase_ = 0; ///< the whole us the importer took off epoch timestamps
};

/// Builds the rows, applying HTA's rounding and last-step filtering when options.hta_compat.
[[nodiscard]] rank_rows build_rows(const trace& t, const analysis_options& options);

/// Intervals merged the way HTA's merge_kernel_intervals does (a row joins the
/// group when it starts at or before the running maximum end), in start order.
[[nodiscard]] std::vector<interval> merge_intervals(std::vector<interval> rows);

inline double to_us(std::int64_t ns) noexcept {
  return static_cast<double>(ns) / 1000.0;
}

} // namespace tdiag::trace::detail
