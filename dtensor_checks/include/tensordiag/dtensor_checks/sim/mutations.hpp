// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Deliberately wrong sharding rules. Each wraps a built-in rule and edits its candidates into a
// claim that is numerically false (P(sum)+R for add, a Partial kept through exp, a shard kept
// through softmax's dim, ...); the strategy grid must catch every one.
#pragma once

#include <tensordiag/dtensor_checks/op_registry.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tdiag::dtensor::sim {

struct rule_mutation {
  std::string name;        ///< short id, e.g. `add-partial-plus-replicate`
  std::string op;          ///< the overload whose rule is mutated
  std::string description; ///< the wrong claim in words
  /// Edits the rule's result for one call (the call's current placements are in `ctx`).
  std::function<void(const rule_context& ctx, rule_result& result)> mutate;
};

/// The built-in set of wrong rules.
[[nodiscard]] const std::vector<rule_mutation>& builtin_mutations();

/// A copy of `base` whose rule for `m.op` is wrapped by `m.mutate`. Throws tdiag::input_error
/// when `base` has no rule for the op.
[[nodiscard]] op_registry mutated_registry(const op_registry& base, const rule_mutation& m);

} // namespace tdiag::dtensor::sim
