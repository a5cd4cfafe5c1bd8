// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(MatrixRule, MmFollowsTheEinsumRules) {
  auto r = propagate(call("aten.mm.default", "4", {"f32[8,8] (S(1))", "f32[8,8] (S(0))"}));
  EXPECT_EQ(test::placements_of(r), "[P(sum)]");
  EXPECT_EQ(r.comms.total(), 0);
  EXPECT_EQ(test::placements_of(
                propagate(call("aten.mm.default", "4", {"f32[8,8] (S(0))", "f32[8,8] (R)"}))),
            "[S(0)]");
  EXPECT_EQ(test::placements_of(
                propagate(call("aten.mm.default", "4", {"f32[8,8] (R)", "f32[8,8] (S(1))"}))),
            "[S(1)]");
  // P(sum) passes through one operand when the other is replicated.
  r = propagate(call("aten.mm.default", "4", {"f32[8,8] (P(sum))", "f32[8,8] (R)"}));
  EXPECT_EQ(test::placements_of(r), "[P(sum)]");
  EXPECT_EQ(r.comms.total(), 0);
}

TEST(MatrixRule, BmmShardsTheBatch) {
  const auto r =
      propagate(call("aten.bmm.default", "2,2", {"f32[4,8,6] (S(0),R)", "f32[4,6,2] (S(0),R)"}));
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{4, 8, 2}));
  EXPECT_EQ(test::placements_of(r), "[S(0), R]");
}

TEST(MatrixRule, AddmmBiasFollowsTheProduct) {
  const auto r = propagate(
      call("aten.addmm.default", "4", {"f32[16] (R)", "f32[8,12] (R)", "f32[12,16] (S(1))"}));
  EXPECT_EQ(test::placements_of(r), "[S(1)]");
  EXPECT_EQ(to_string(r.plans[0].target), "[S(0)]");
}

TEST(MatrixRule, ContractionMismatchIsAShapeError) {
  const auto e =
      test::rejection(call("aten.mm.default", "4", {"f32[12,12] (R)", "f32[6,8] (S(0))"}));
  EXPECT_EQ(e.diag().code, codes::contraction_mismatch);
  EXPECT_EQ(e.error_kind(), error_class::user_error);
  EXPECT_NE(
      e.diag().message.find("the contraction dim is 12 (dim 1 of self) against 6 (dim 0 of mat2)"),
      std::string::npos)
      << e.diag().message;
}

} // namespace
