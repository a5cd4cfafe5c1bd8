// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::sim;

std::string failures_text(const grid_result& r) {
  std::string out;
  for (const auto& op : r.ops) {
    for (const auto& d : op.failures)
      out += tdiag::to_text(d) + "\n";
  }
  return out;
}

TEST(StrategyGrid, EveryBuiltinStrategyValidatesOnEveryMesh) {
  grid_options options;
  options.max_placement_combos = 96;
  options.max_failures_kept = 100000; // classify every failure, not a sample
  const auto result =
      validate_rule_set(op_registry::builtin(), reference_registry::builtin(), options);
  EXPECT_TRUE(result.ok()) << failures_text(result);
  // Every corpus op with a rule is covered, and each produced strategies that were checked.
  EXPECT_GE(result.ops.size(), 30u);
  for (const auto& op : result.ops) {
    EXPECT_GT(op.passed, 0u) << op.op;
    fmt::print("{:32} calls {:5} rejected {:5} strategies {:5} passed {:5} failed {}\n", op.op,
               op.calls, op.rejected, op.strategies, op.passed, op.failed);
  }
  EXPECT_GT(result.strategies(), 1000u);
}

TEST(StrategyGrid, UnknownOpIsAnInputError) {
  grid_options options;
  options.ops = {"aten.nosuchop.default"};
  EXPECT_THROW(
      (void)validate_rule_set(op_registry::builtin(), reference_registry::builtin(), options),
      tdiag::input_error);
}

TEST(StrategyGrid, DefaultMeshesAreTheIssueGrid) {
  const auto meshes = default_meshes();
  ASSERT_EQ(meshes.size(), 6u);
  EXPECT_EQ(meshes[5].shape(), (std::vector<std::int64_t>{2, 2, 2}));
}

} // namespace
