// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(SoftmaxRule, ReplicatesTheSoftmaxDimAndPartials) {
  const auto r =
      propagate(call("aten._softmax.default", "2,2", {"f32[4,8] (S(0),S(1))", "-1", "false"}));
  EXPECT_EQ(test::placements_of(r), "[S(0), R]");
  EXPECT_EQ(r.comms[collective::all_gather], 1);
  EXPECT_EQ(test::placements_of(propagate(
                call("aten._log_softmax.default", "4", {"f32[4,8] (P(sum))", "1", "false"}))),
            "[R]");
}

TEST(LayerNormRule, NormalisedDimsReplicateAndStatsFollow) {
  const auto r =
      propagate(call("aten.native_layer_norm.default", "2,2",
                     {"f32[4,6,8] (S(0),S(2))", "[8]", "f32[8] (R,R)", "f32[8] (S(0),R)", "1e-5"}));
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_EQ(test::placements_of(r, 0), "[S(0), R]");
  EXPECT_EQ(r.outputs[1].shape(), (shape_t{4, 6, 1}));
  EXPECT_EQ(test::placements_of(r, 2), "[S(0), R]");
  EXPECT_EQ(r.comms[collective::all_gather], 2); // input dim 2 and the bias
}

TEST(LayerNormRule, NormalizedShapeMustMatch) {
  const auto e = test::rejection(call("aten.native_layer_norm.default", "2",
                                      {"f32[4,8] (R)", "[6]", "f32[6] (R)", "f32[6] (R)", "1e-5"}));
  EXPECT_EQ(e.diag().code, codes::shape_mismatch);
}

} // namespace
