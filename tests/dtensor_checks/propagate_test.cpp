// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The propagator's own behaviour: selection, plans, the in-place check and the diagnostics of
// rejected calls (the bar of issue 5: op, argument, mesh dim, placements, shapes, why, fix).
#include <tensordiag/dtensor_checks/propagate.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;
using test::rejection;

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(Propagate, InPlaceErrorNamesMeshDimPlacementsAndBothFixes) {
  const auto e = rejection(call("aten.relu_.default", "2,4", {"f32[8,16] (P(sum),R)"}));
  const auto& d = e.diag();
  EXPECT_EQ(d.code, codes::inplace_placement);
  EXPECT_EQ(e.error_kind(), error_class::user_error);
  EXPECT_TRUE(has(d.message, "arg 0 (self) f32[8, 16] [P(sum), R]")) << d.message;
  EXPECT_TRUE(has(d.message, "mesh dim 0 holds P(sum) but the result would be R")) << d.message;
  EXPECT_TRUE(has(d.hint, "torch.relu(")) << d.hint;
  EXPECT_TRUE(has(d.hint, "x.redistribute(mesh, [Replicate(), Replicate()])")) << d.hint;
  EXPECT_EQ(*d.find_field("mesh_dim"), tdiag::field_value(0));
}

TEST(Propagate, ShardToPartialIsALimitationNamingTheOtherArgument) {
  const auto e = rejection(call("aten.add_.Tensor", "4", {"f32[8] (P(sum))", "f32[8] (S(0))"}));
  const auto& d = e.diag();
  EXPECT_EQ(d.code, codes::shard_to_partial);
  EXPECT_EQ(e.error_kind(), error_class::limitation);
  EXPECT_TRUE(has(d.message, "arg 1 (other) f32[8] [S(0)]: must become P(sum) on mesh dim 0"))
      << d.message;
  EXPECT_TRUE(has(d.message, "to match arg 0 (self)")) << d.message;
  EXPECT_TRUE(has(d.hint, "[Replicate()]")) << d.hint;
}

TEST(Propagate, PartialKindsCannotMix) {
  const auto e =
      rejection(call("aten.add.Tensor", "2,2", {"f32[4] (P(sum),R)", "f32[4] (P(avg),R)"}));
  EXPECT_EQ(e.diag().code, codes::partial_kinds);
  EXPECT_TRUE(has(e.diag().message, "pending avg and a pending sum")) << e.diag().message;
}

TEST(Propagate, UnknownOpListsNearestNames) {
  const auto e = rejection(call("aten.relu6.default", "2", {"f32[4] (R)"}));
  EXPECT_EQ(e.diag().code, codes::no_rule);
  EXPECT_TRUE(has(e.diag().message, "no sharding rule for aten.relu6.default")) << e.diag().message;
  EXPECT_TRUE(has(e.diag().message, "aten.relu.default")) << e.diag().message;
}

TEST(Propagate, PlacementsMustFitTheMesh) {
  const auto e = rejection(call("aten.relu.default", "2,4", {"f32[4] (R)"}));
  EXPECT_EQ(e.diag().code, codes::placement_count);
  EXPECT_TRUE(has(e.diag().message, "has 1 placements but mesh (2, 4) has 2 dims"))
      << e.diag().message;
}

TEST(Propagate, PlansAndCountsEveryInput) {
  const auto r = propagate(
      call("aten.mm.default", "2,4", {"f32[12,1] (S(0),P(sum))", "f32[1,16] (P(max),S(1))"}));
  EXPECT_EQ(test::placements_of(r), "[S(0), P(sum)]");
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{12, 16}));
  EXPECT_EQ(r.comms[collective::all_gather], 1);
  EXPECT_EQ(r.comms[collective::all_reduce], 1);
  ASSERT_EQ(r.plans.size(), 2u);
  EXPECT_TRUE(r.plans[0].empty());
  EXPECT_EQ(r.reason, selection_reason::min_cost);
}

} // namespace
