// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/strategy.hpp>

namespace tdiag::dtensor {

std::string_view to_string(selection_reason reason) noexcept {
  switch (reason) {
  case selection_reason::only_candidate:
    return "the only candidate";
  case selection_reason::negative_cost:
    return "the most negative cost";
  case selection_reason::no_redistribute:
    return "zero cost and no input needs to move";
  case selection_reason::zero_cost:
    return "the first zero-cost candidate (local chunking only)";
  case selection_reason::min_cost:
    return "the first candidate of minimum cost";
  }
  return "the only candidate";
}

selection select_strategy(const std::vector<scored_candidate>& candidates,
                          const std::vector<const placement_list*>& current) {
  if (candidates.size() <= 1)
    return {0, selection_reason::only_candidate};
  std::ptrdiff_t negative = -1;
  std::ptrdiff_t no_redistribute = -1;
  std::ptrdiff_t zero = -1;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double cost = candidates[i].total;
    if (cost < 0) {
      if (negative == -1 || cost < candidates[static_cast<std::size_t>(negative)].total) {
        negative = static_cast<std::ptrdiff_t>(i);
      }
    } else if (cost == 0) {
      bool matches = true;
      const auto& inputs = candidates[i].strategy.inputs;
      for (std::size_t k = 0; k < current.size() && k < inputs.size(); ++k) {
        if (*current[k] != inputs[k]) {
          matches = false;
          break;
        }
      }
      // PyTorch overwrites the index on every match: the last matching candidate wins.
      if (matches) {
        no_redistribute = static_cast<std::ptrdiff_t>(i);
      } else if (zero == -1) {
        zero = static_cast<std::ptrdiff_t>(i);
      }
    }
  }
  if (negative != -1)
    return {static_cast<std::size_t>(negative), selection_reason::negative_cost};
  if (no_redistribute != -1)
    return {static_cast<std::size_t>(no_redistribute), selection_reason::no_redistribute};
  if (zero != -1)
    return {static_cast<std::size_t>(zero), selection_reason::zero_cost};
  std::size_t best = 0;
  for (std::size_t i = 1; i < candidates.size(); ++i) {
    if (candidates[i].total < candidates[best].total)
      best = i;
  }
  return {best, selection_reason::min_cost};
}

} // namespace tdiag::dtensor
