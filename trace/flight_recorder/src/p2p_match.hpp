// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Point-to-point calls paired across peers by p2p_seq_id (p2p_match.cpp): a send or recv that
// never completed and whose peer never posted the matching call names that peer.
#pragma once

#include <vector>

#include "job_index.hpp"

namespace tdiag::trace::fr::detail {

struct p2p_findings {
  std::vector<culprit> culprits;    ///< peers that never posted the matching call
  std::vector<mismatch> mismatches; ///< per unmatched call (p2p, MISSING_RANKS)
  std::vector<int> waits_explained; ///< ranks whose p2p wait a culprit above explains
};

/// Pairs every group's sends and recvs across their peers.
[[nodiscard]] p2p_findings match_p2p(const job_index& job);

} // namespace tdiag::trace::fr::detail
