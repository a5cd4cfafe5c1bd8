// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(ReductionRule, ShardOfAReducedDimBecomesPartial) {
  const auto r = propagate(call("aten.mean.dim", "2,4", {"f32[1,4,16] (S(1),R)", "[1]", "true"}));
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{1, 1, 16}));
  EXPECT_EQ(test::placements_of(r), "[P(avg), R]");
  EXPECT_EQ(r.comms.total(), 0);
  EXPECT_EQ(test::placements_of(propagate(call("aten.sum.default", "2,4", {"f32[3] (S(0),R)"}))),
            "[P(sum), R]");
}

TEST(ReductionRule, UnevenMeanReplicatesFirst) {
  const auto r = propagate(call("aten.mean.dim", "2,4", {"f32[12] (S(0),S(0))", "[0]", "false"}));
  EXPECT_EQ(test::placements_of(r), "[R, R]");
  EXPECT_EQ(r.comms[collective::all_gather], 2);
}

TEST(ReductionRule, OtherPartialKindsAreReduced) {
  const auto r =
      propagate(call("aten.amax.default", "2,2", {"f32[16] (P(sum),S(0))", "[0]", "false"}));
  EXPECT_EQ(test::placements_of(r), "[R, R]");
  EXPECT_EQ(r.comms[collective::all_reduce], 1);
  EXPECT_EQ(r.comms[collective::all_gather], 1);
}

TEST(ReductionRule, KeptDimsRenumber) {
  const auto r =
      propagate(call("aten.sum.dim_IntList", "2,2", {"f32[4,6,8] (S(2),S(0))", "[0]", "false"}));
  EXPECT_EQ(test::placements_of(r), "[S(1), P(sum)]");
}

TEST(ReductionRule, MaxDimReturnsValuesAndIndices) {
  const auto r = propagate(call("aten.max.dim", "2,4", {"f32[8,12] (S(0),S(1))", "1", "false"}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(test::placements_of(r, 1), "[S(0), P(max)]");
  EXPECT_EQ(r.outputs[1].meta.type, dtype::int64);
  EXPECT_EQ(r.comms[collective::all_gather], 2);
}

} // namespace
