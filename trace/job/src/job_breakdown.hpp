// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The per-rank analyses over rank_rows (private to the job_* sources).
#pragma once

#include <tensordiag/trace/detail/numpy_sort.hpp>
#include <tensordiag/trace/job_analysis.hpp>

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
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

/// What makes communication kernels one collective: process group, launching operator, kernel
/// name, ProfilerStep.
struct collective_identity {
  std::string group, operation, name;
  int step = -1;
  bool operator<(const collective_identity& o) const {
    return std::tie(group, operation, name, step) < std::tie(o.group, o.operation, o.name, o.step);
  }
};
/// One collective: the kernel of each member of its process group, in the job's rank order.
struct matched_collective {
  const collective_identity* id = nullptr; ///< group, operation, kernel name, step
  std::int64_t seq = -1;
  int step = -1;
  std::size_t occurrence = 0;
  std::vector<std::size_t> members;       ///< places in the job's input order
  std::vector<const gpu_row*> per_member; ///< per_member[i] ran on members[i]
};
struct collective_matches {
  std::vector<matched_collective> matched;
  std::vector<unmatched_collective> unmatched;
};
struct comm_kernel {
  const gpu_row* row = nullptr;
  std::int64_t seq = -1;
};
/// One identity's kernels, per place in the job (start order), and the members that pair them.
struct kernel_group {
  std::vector<std::vector<comm_kernel>> per_rank;
  std::vector<std::size_t> members;
  bool all_seq = false; ///< every member's kernel has a sequence number: paired by it
};
using collective_kernels = std::map<collective_identity, kernel_group>;
/// Every communication kernel of the job by identity, with its group's members: gathered once,
/// then paired on as many clocks as the alignment tries (pair_collectives).
[[nodiscard]] collective_kernels gather_collectives(std::span<const rank_trace> ranks,
                                                    const std::vector<rank_rows>& rows,
                                                    unsigned threads);
/// Communication kernels paired across the ranks of their process group (job_collectives.cpp):
/// per (process group, launching c10d/nccl operator, kernel name, ProfilerStep), by sequence
/// number where every kernel has one, else in order; in order, with `check_overlap`, a pair
/// whose kernels do not overlap on the job clock (times + offsets_ns) leaves the one that ended
/// first unmatched instead. A group with fewer than two of the job's ranks pairs nothing. The
/// matches point into `groups`. Without `keep_unmatched` the kernels left over are not listed
/// (a trial pairing on a wrong clock leaves most of them).
[[nodiscard]] collective_matches pair_collectives(const collective_kernels& groups,
                                                  std::span<const rank_trace> ranks,
                                                  std::span<const std::int64_t> offsets_ns,
                                                  bool check_overlap, bool keep_unmatched = true);
/// The ranks of "Process Group Ranks" ("[0, 1, 2]" or a JSON array as written), or nothing
/// when they are not all there (PyTorch cuts long lists: "[0, 1, ..., 127]") or not a list.
[[nodiscard]] std::optional<std::vector<int>> parse_group_ranks(std::string_view text);

/// The job's clock (job_clocks.cpp): the offsets `align` asks for (the collectives' where the
/// ranks share matched ones, else the base time), how well they fit, and the collectives paired
/// on them with the overlap test.
struct aligned_job {
  std::vector<std::int64_t> offsets; ///< per place, added to its times
  job_clocks clocks;
  collective_matches matches;
};
[[nodiscard]] aligned_job align_clocks(std::span<const rank_trace> ranks,
                                       const collective_kernels& kernels, clock_alignment align);

/// Why each collective's last rank was late (job_straggler_causes.cpp): fills every
/// collective's cause and the lateness of the ranks in out.waits (by rank).
void explain_stragglers(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                        job_analysis_result& out, unsigned threads);

/// Beyond HTA (job_stragglers.cpp): collectives matched across ranks and who waited, GPU time
/// per ProfilerStep, kernels whose time on one rank deviates from the other ranks.
void analyze_collectives(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                         job_analysis_result& out, unsigned threads);
[[nodiscard]] std::vector<step_time> step_times_of(const rank_rows& rows, int rank);
[[nodiscard]] std::vector<rank_deviation> deviations_of(const std::vector<rank_analysis>& ranks);

/// pandas Series.quantile (linear interpolation) of unsorted values; 0 for an empty series.
[[nodiscard]] double quantile(std::vector<double> values, double q);

} // namespace tdiag::trace::detail
