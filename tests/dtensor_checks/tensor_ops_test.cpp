// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(CatRule, OperandsProposeWithTheCatDimReplicated) {
  const auto r = propagate(
      call("aten.cat.default", "4,2", {"[f32[16,6] (S(0),S(0)); f32[12,6] (S(0),S(1))]", "0"}));
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{28, 6}));
  EXPECT_EQ(test::placements_of(r), "[R, S(1)]");
  EXPECT_EQ(r.comms[collective::all_gather], 3);
}

TEST(CatRule, MismatchedShapesAreRejected) {
  const auto e =
      test::rejection(call("aten.cat.default", "2", {"[f32[4,6] (R); f32[4,5] (R)]", "0"}));
  EXPECT_EQ(e.diag().code, codes::shape_mismatch);
}

TEST(SplitRule, EveryPieceTakesTheSamePlacements) {
  const auto r = propagate(call("aten.split.Tensor", "2,2", {"f32[10,4] (S(0),P(sum))", "4", "0"}));
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_EQ(r.outputs[2].shape(), (shape_t{2, 4}));
  EXPECT_EQ(test::placements_of(r, 2), "[R, P(sum)]");
}

TEST(EmbeddingRule, CostSelectsAmongRowColAndBatchSharding) {
  auto r =
      propagate(call("aten.embedding.default", "2,4", {"f32[8,8] (S(0),R)", "i64[8,16] (S(0),R)"}));
  EXPECT_EQ(test::placements_of(r), "[S(0), S(2)]");
  EXPECT_EQ(r.comms[collective::all_gather], 1);
  r = propagate(call("aten.embedding.default", "2,4", {"f32[4,6] (R,S(0))", "i64[8,4] (S(1),R)"}));
  EXPECT_EQ(test::placements_of(r), "[S(1), P(sum)]");
  EXPECT_TRUE(r.outputs[0].placements[1].masked);
}

} // namespace
