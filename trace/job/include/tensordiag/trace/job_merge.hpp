// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A job as one trace, for a timeline of every rank: each rank's events moved onto the job's
// clock, its lanes kept apart from the other ranks' (one group of lanes per rank), and each
// collective linked across ranks by flows from every rank's kernel to the last arrival's.
#pragma once

#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace tdiag::trace {

/// Where a lane of the merged trace came from.
struct merged_lane {
  int rank = 0;
  lane_id lane = 0;       ///< the lane in that rank's trace
  std::int64_t group = 0; ///< its device (GPU and memory lanes) or process (host lanes) there
};

struct merged_job {
  /// Every rank's events on the job's clock (times plus the analysis' clock offset), finalized.
  /// Devices and processes keep their numbers unless two ranks share one; then rank r's become
  /// r * merged_group_stride + n (processes: plus r * 2^40).
  trace t;
  std::vector<merged_lane> lanes;   ///< per lane of `t`
  std::size_t collective_flows = 0; ///< flows (kind other) linking collectives across ranks
};
inline constexpr std::int64_t merged_group_stride = 1000;

/// Merges the ranks of an analysed job: `analysis` is analyze_job(ranks) without hta_compat
/// (its clock offsets and collectives; compat mode's rounded times match no kernel, so its
/// collectives are not linked). A collective is linked by a flow from each rank's kernel start to
/// the start of the last rank's kernel (which everyone waited for), correlation = 1 + its index in
/// analysis.collectives. Not thread-safe for the same output; reads the ranks only.
[[nodiscard]] merged_job merge_job(std::span<const rank_trace> ranks,
                                   const job_analysis_result& analysis);

} // namespace tdiag::trace
