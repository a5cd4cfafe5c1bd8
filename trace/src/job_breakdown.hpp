// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The per-rank analyses over rank_rows (private to the job_* sources).
#pragma once

#include <tensordiag/trace/detail/numpy_sort.hpp>
#include <tensordiag/trace/job_analysis.hpp>

#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "job_rows.hpp"

namespace tdiag::trace::detail {

[[nodiscard]] temporal_breakdown temporal_of(const rank_rows& rows);
[[nodiscard]] std::vector<kernel_type_time> kernel_types_of(const rank_rows& rows);
[[nodiscard]] std::optional<double> comm_comp_overlap_of(const rank_rows& rows);
[[nodiscard]] std::vector<stream_idle> idle_of(const rank_rows& rows,
                                               const analysis_options& options);

struct kernel_tables {
  std::vector<kernel_summary> all; ///< by type, then sum (largest first)
  std::vector<kernel_summary> top; ///< HTA's default grouping, by type then name
};
[[nodiscard]] kernel_tables kernels_of(const trace& t, const rank_rows& rows,
                                       const analysis_options& options);

[[nodiscard]] launch_statistics launches_of(const trace& t, const rank_rows& rows,
                                            const analysis_options& options);
[[nodiscard]] std::vector<stream_queue> queues_of(const trace& t, const rank_rows& rows);

/// The queue length of a launch's stream right after the launch call enqueued it and right
/// after its GPU row started, by correlation id (the points of HTA's series).
struct queue_points {
  std::unordered_map<std::uint32_t, int> at_enqueue, at_start;
};
[[nodiscard]] queue_points queue_points_of(const trace& t, const rank_rows& rows);

/// HTA's memory bandwidth summary (job_memory_bw.cpp).
[[nodiscard]] std::vector<memory_bandwidth> memory_bw_of(const trace& t, const rank_rows& rows,
                                                         const analysis_options& options);

/// HTA's critical path of one iteration (job_critical_path.cpp).
[[nodiscard]] critical_path_result critical_path_of(const trace& t, const rank_rows& rows,
                                                    const analysis_options& options);

/// Every per-rank analysis over rows built once.
[[nodiscard]] rank_analysis analyze_rows(const trace& t, const rank_rows& rows, int rank,
                                         const analysis_options& options);

/// One collective: each rank's kernel of it, in the job's rank order.
struct matched_collective {
  std::string name, operation;
  int step = -1;
  std::size_t occurrence = 0;
  std::vector<const gpu_row*> per_rank;
};
struct collective_matches {
  std::vector<matched_collective> matched;
  std::vector<unmatched_collective> unmatched;
};
/// Communication kernels paired across ranks (job_collectives.cpp): per (launching c10d/nccl
/// operator, kernel name, ProfilerStep), in order; with `check_overlap`, a pair whose kernels
/// do not overlap on the job clock (times + offsets_ns) leaves the one that ended first
/// unmatched instead.
[[nodiscard]] collective_matches match_collectives(std::span<const rank_trace> ranks,
                                                   const std::vector<rank_rows>& rows,
                                                   std::span<const std::int64_t> offsets_ns,
                                                   bool check_overlap);

/// Beyond HTA (job_stragglers.cpp): collectives matched across ranks and who waited, GPU time
/// per ProfilerStep, kernels whose time on one rank deviates from the other ranks.
void analyze_collectives(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                         job_analysis_result& out);
[[nodiscard]] std::vector<step_time> step_times_of(const rank_rows& rows, int rank);
[[nodiscard]] std::vector<rank_deviation> deviations_of(const std::vector<rank_analysis>& ranks);

/// pandas Series.quantile (linear interpolation) of unsorted values; 0 for an empty series.
[[nodiscard]] double quantile(std::vector<double> values, double q);

} // namespace tdiag::trace::detail
