// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/op_registry.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

// The corpus's 37 ops are 36 aten overloads: add, sub, mul and div also take a Python scalar
// through the same overload.
TEST(OpRegistry, HoldsEveryCorpusOverload) {
  const auto& r = op_registry::builtin();
  EXPECT_EQ(r.size(), 36u);
  EXPECT_NE(r.find("aten.mm.default"), nullptr);
  EXPECT_EQ(r.find("aten.mm"), nullptr);
  EXPECT_EQ(r.resolve("mm")->name, "aten.mm.default");
  EXPECT_EQ(r.resolve("aten.add")->name, "aten.add.Tensor");
  EXPECT_EQ(r.resolve("relu_")->name, "aten.relu_.default");
  EXPECT_EQ(r.resolve("squeeze")->name, "aten.squeeze.dim");
  EXPECT_EQ(r.resolve("nonzero"), nullptr);
}

TEST(OpRegistry, SuggestsNearestNames) {
  const auto near = op_registry::builtin().nearest("aten.relu6.default", 2);
  ASSERT_EQ(near.size(), 2u);
  EXPECT_EQ(near[0], "aten.relu.default");
}

// A user's op: `mylib.rowscale(x, scale)` scales rows; any row sharding passes through, the
// scale vector follows the rows, Partials are reduced first.
rule_result rowscale_rule(const rule_context& ctx) {
  const auto& x = ctx.tensor_arg(0);
  (void)ctx.tensor_arg(1);
  rule_result r;
  r.outputs.push_back(x.meta);
  placement_list target = x.placements;
  placement_list scale;
  for (auto& p : target) {
    if (p.is_partial() || p.is_shard(1))
      p = placement::replicate();
  }
  for (const auto& p : target)
    scale.push_back(p.is_shard(0) ? placement::shard(0) : placement::replicate());
  r.candidates.push_back(candidate_strategy{{target}, {target, scale}});
  return r;
}

TEST(OpRegistry, UsersRegisterTheirOwnRules) {
  auto registry = op_registry::with_builtin_rules();
  registry.add(
      op_rule{"mylib.rowscale.default", "custom", {"self", "scale"}, false, rowscale_rule});
  const auto c =
      test::call("mylib.rowscale.default", "2,4", {"f32[8,16] (S(0),P(sum))", "f32[8] (R,R)"});
  const auto r = propagate(c, registry);
  EXPECT_EQ(test::placements_of(r), "[S(0), R]");
  EXPECT_EQ(r.comms[collective::all_reduce], 1);
  EXPECT_EQ(to_string(r.plans[1].target), "[S(0), R]");
  // The shared built-in registry does not see it.
  const auto e = test::rejection(c);
  EXPECT_EQ(e.diag().code, codes::no_rule);
  EXPECT_EQ(e.error_kind(), error_class::unknown_op);
}

TEST(OpRegistry, RejectsIncompleteRules) {
  op_registry r;
  EXPECT_THROW(r.add(op_rule{"", "x", {}, false, rowscale_rule}), tdiag::input_error);
  EXPECT_THROW(r.add(op_rule{"a.b", "x", {}, false, {}}), tdiag::input_error);
}

} // namespace
