// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Candidate strategies (PyTorch's OpSpec list) and the selection PyTorch 2.11 applies to them.
#pragma once

#include <tensordiag/dtensor_checks/placement.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// One candidate: the placements of every output and the placements every tensor input must
/// be redistributed to (flattened inputs, aten order).
struct candidate_strategy {
  std::vector<placement_list> outputs;
  std::vector<placement_list> inputs;
  friend bool operator==(const candidate_strategy&, const candidate_strategy&) = default;
};

/// A candidate with its redistribution cost per tensor input (µs, α–β model; +inf = invalid).
struct scored_candidate {
  candidate_strategy strategy;
  std::vector<double> costs;
  double total = 0.0;
};

/// Which rule of the selection picked the candidate.
enum class selection_reason : std::uint8_t {
  only_candidate,  ///< the rule produced a single candidate
  negative_cost,   ///< the most negative total (follow-the-input factories)
  no_redistribute, ///< zero cost and the inputs already match
  zero_cost,       ///< the first zero total (local chunking only)
  min_cost,        ///< the first minimum
};

/// "only candidate", "no redistribution needed", ...
[[nodiscard]] std::string_view to_string(selection_reason reason) noexcept;

struct selection {
  std::size_t index = 0;
  selection_reason reason = selection_reason::only_candidate;
};

/// PyTorch 2.11's `_select_min_cost_strategy`, first match wins:
/// 1. a single candidate; 2. the most negative total; 3. the last zero-total candidate whose
/// inputs already match `current`; 4. the first zero total; 5. the first minimum.
/// `current` holds the placements each tensor input has now. Precondition: `candidates` is not
/// empty.
[[nodiscard]] selection select_strategy(const std::vector<scored_candidate>& candidates,
                                        const std::vector<const placement_list*>& current);

} // namespace tdiag::dtensor
