// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(ViewRule, ShardsFollowTheirDims) {
  auto r = propagate(call("aten.view.default", "2,4", {"f32[2,8,1] (R,S(2))", "[16,1]"}));
  EXPECT_EQ(test::placements_of(r), "[R, S(1)]");
  r = propagate(call("aten.view.default", "4", {"f32[8,6] (S(0))", "[-1]"}));
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{48}));
  EXPECT_EQ(test::placements_of(r), "[S(0)]");
  // A split whose first piece does not divide replicates (even under strict view).
  r = propagate(call("aten.view.default", "4", {"f32[12] (S(0))", "[2,6]"}));
  EXPECT_EQ(test::placements_of(r), "[R]");
  EXPECT_EQ(r.comms[collective::all_gather], 1);
}

TEST(ViewRule, StrictViewRefusesToFlattenALaterShardedDim) {
  const auto e = test::rejection(call("aten.view.default", "2", {"f32[6,3] (S(1))", "[18]"}));
  EXPECT_EQ(e.diag().code, codes::flatten_sharded);
  EXPECT_NE(e.diag().message.find("dims 0 (size 6), 1 (size 3) would be merged"), std::string::npos)
      << e.diag().message;
  EXPECT_NE(e.diag().hint.find("reshape"), std::string::npos);
}

TEST(ViewRule, StrictViewRefusesUnevenFlatten) {
  const auto e = test::rejection(call("aten.view.default", "4", {"f32[6,4] (S(0))", "[24]"}));
  EXPECT_EQ(e.diag().code, codes::flatten_uneven);
  EXPECT_NE(e.diag().message.find("the ranks hold [2, 2, 2, 0] rows"), std::string::npos)
      << e.diag().message;
}

TEST(ViewRule, LocalViewsMustAgree) {
  const auto e =
      test::rejection(call("aten.view.default", "4,2", {"f32[12,3] (S(0),S(0))", "[36]"}));
  EXPECT_EQ(e.diag().code, codes::view_local_mismatch);
  EXPECT_EQ(e.error_kind(), error_class::limitation);
}

TEST(ViewRule, BadSizesAreShapeErrors) {
  EXPECT_EQ(test::rejection(call("aten.view.default", "4", {"f32[6,4] (R)", "[5,5]"})).diag().code,
            codes::view_size);
}

TEST(ViewOps, PermutationsAndSingletons) {
  EXPECT_EQ(test::placements_of(propagate(
                call("aten.transpose.int", "2,2", {"f32[4,6,8] (S(0),S(2))", "0", "-1"}))),
            "[S(2), S(0)]");
  EXPECT_EQ(test::placements_of(
                propagate(call("aten.permute.default", "2", {"f32[4,6,8] (S(2))", "[2,0,1]"}))),
            "[S(0)]");
  EXPECT_EQ(test::placements_of(propagate(call("aten.t.default", "2", {"f32[4,6] (S(0))"}))),
            "[S(1)]");
  EXPECT_EQ(
      test::placements_of(propagate(call("aten.unsqueeze.default", "2", {"f32[4,6] (S(1))", "0"}))),
      "[S(2)]");
  auto r = propagate(call("aten.squeeze.dim", "2", {"f32[4,1,6] (S(1))", "1"}));
  EXPECT_EQ(test::placements_of(r), "[R]");
  EXPECT_EQ(r.comms[collective::all_gather], 1);
  EXPECT_EQ(test::placements_of(propagate(call("aten.squeeze.dim", "2", {"f32[4,6] (S(1))", "1"}))),
            "[S(1)]");
}

TEST(ViewOps, ExpandOfAShardedSizeOneDimIsRefused) {
  EXPECT_EQ(test::placements_of(
                propagate(call("aten.expand.default", "2", {"f32[4,1] (S(0))", "[3,4,5]"}))),
            "[S(1)]");
  const auto e = test::rejection(call("aten.expand.default", "2", {"f32[1,12] (S(0))", "[12,12]"}));
  EXPECT_EQ(e.diag().code, codes::expand_sharded);
  EXPECT_NE(e.diag().hint.find("[Replicate()]"), std::string::npos) << e.diag().hint;
}

} // namespace
