// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One process group's analysis: its collectives compared across members seq by seq (the first
// call divergence and the first state divergence), then who holds it where it is stuck.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "job_index.hpp"

namespace tdiag::trace::fr::detail {

struct divergences {
  std::optional<mismatch> call;  ///< first op, size or dtype divergence
  bool call_tie = false;         ///< no majority: which side deviated cannot be told
  std::optional<mismatch> state; ///< first completion or start divergence
};

/// Compares the group's collectives across its members in sequence order.
[[nodiscard]] divergences compare_group(const job_index& job, const group_data& g);

struct group_verdict {
  std::vector<culprit> culprits;
  std::optional<mismatch> missing; ///< ranks that never issued the collective the others wait in
  bool stuck = false;
  std::vector<int> waiting;
  std::int64_t last_seq = -1;
  std::string last_op;
  std::string verdict;
  std::vector<std::string> unknowns;
};

/// Names the ranks that hold the group, given its divergences.
[[nodiscard]] group_verdict judge_group(const job_index& job, const group_data& g,
                                        const divergences& div);

/// The member's entry with collective seq `seq`, or null.
[[nodiscard]] const entry* find_seq(const job_index& job, const member_data& m, std::int64_t seq);

/// A culprit's evidence: its own entry's seq, op, state and frames.
void attach_entry(const job_index& job, std::uint32_t rank_index, const entry& e, progress p,
                  culprit& c);

} // namespace tdiag::trace::fr::detail
