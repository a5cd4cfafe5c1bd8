// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/dtensor_checks/sim/mutations.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::sim;

TEST(RuleMutations, EveryWrongRuleIsCaught) {
  ASSERT_GE(builtin_mutations().size(), 10u);
  for (const auto& m : builtin_mutations()) {
    const auto rules = mutated_registry(op_registry::builtin(), m);
    grid_options options;
    options.ops = {m.op};
    options.max_placement_combos = 96;
    options.max_failures_kept = 1;
    const auto result = validate_rule_set(rules, reference_registry::builtin(), options);
    ASSERT_EQ(result.ops.size(), 1u);
    EXPECT_GT(result.failed(), 0u) << m.name << ": " << m.description << " was not caught";
    if (result.failed() != 0) {
      const auto& d = result.ops[0].failures.front();
      fmt::print("{:38} caught in {:4} of {:4} strategies: {}\n", m.name, result.failed(),
                 result.strategies(), d.message.substr(0, 160));
      EXPECT_TRUE(d.find_field("mesh_dims") != nullptr || d.find_field("mesh_dim") != nullptr)
          << d.message;
    }
  }
}

TEST(RuleMutations, MutationLeavesOtherRulesAlone) {
  const auto& m = builtin_mutations().front();
  const auto rules = mutated_registry(op_registry::builtin(), m);
  EXPECT_EQ(rules.size(), op_registry::builtin().size());
  grid_options options;
  options.ops = {"aten.sub.Tensor"};
  options.max_placement_combos = 32;
  EXPECT_TRUE(validate_rule_set(rules, reference_registry::builtin(), options).ok());
}

TEST(RuleMutations, UnknownOpCannotBeMutated) {
  rule_mutation m{"x", "aten.nosuch.default", "", [](const rule_context&, rule_result&) {}};
  EXPECT_THROW((void)mutated_registry(op_registry::builtin(), m), tdiag::input_error);
}

} // namespace
