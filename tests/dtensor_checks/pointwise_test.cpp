// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Pointwise rules (src/rules/pointwise.cpp): the followed operand, Partial linearity per op
// kind, broadcasting, in-place, copy_ and clone.
#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

struct expectation {
  const char* op;
  const char* mesh;
  std::vector<const char*> args;
  const char* out;
  std::int64_t all_reduce;
  std::int64_t reduce_scatter;
  std::int64_t all_gather;
};

TEST(PointwiseRule, PartialLinearityPerOpKind) {
  const std::vector<expectation> cases{
      {"aten.mul.Tensor", "4", {"f32[8] (P(sum))", "f32[8] (R)"}, "[P(sum)]", 0, 0, 0},
      {"aten.mul.Tensor", "4", {"f32[8] (P(max))", "f32[8] (R)"}, "[R]", 1, 0, 0},
      {"aten.add.Tensor", "4", {"f32[8,4] (P(max))", "f32[8,4] (S(1))"}, "[S(1)]", 0, 1, 0},
      {"aten.add.Tensor", "4", {"f32[8] (P(sum))", "2.0"}, "[R]", 1, 0, 0},
      {"aten.mul.Tensor", "4", {"f32[8] (P(sum))", "2.0"}, "[P(sum)]", 0, 0, 0},
      {"aten.add.Tensor", "4", {"f32[8] (P(sum))", "f32[8] (R)"}, "[P(sum)]", 0, 0, 0},
      {"aten.div.Tensor", "4", {"f32[8] (R)", "f32[8] (P(sum))"}, "[R]", 1, 0, 0},
      {"aten.div.Tensor", "8", {"f32[4] (P(sum))", "f32[4] (S(0))"}, "[S(0)]", 0, 1, 0},
      {"aten.neg.default", "4", {"f32[8] (P(max))"}, "[R]", 1, 0, 0},
      {"aten.neg.default", "4", {"f32[8] (P(avg))"}, "[P(avg)]", 0, 0, 0},
      {"aten.maximum.default", "4", {"f32[8] (P(max))", "f32[8] (R)"}, "[P(max)]", 0, 0, 0},
      {"aten.exp.default", "2,2", {"f32[8,4] (S(1),P(sum))"}, "[S(1), R]", 1, 0, 0},
      {"aten.clone.default", "2,2", {"f32[8,4] (P(max),S(0))"}, "[P(max), S(0)]", 0, 0, 0},
      {"aten.mul.Tensor", "4", {"f32[2,16] (S(1))", "f32[2,16] (S(0))"}, "[S(1)]", 0, 0, 1},
  };
  for (const auto& c : cases) {
    op_call oc;
    oc.op = c.op;
    oc.mesh = parse_mesh(c.mesh);
    for (auto a : c.args)
      oc.args.push_back(parse_arg(a, oc.mesh.ndim()));
    const auto r = propagate(oc);
    EXPECT_EQ(test::placements_of(r), c.out) << c.op << " " << c.args[0];
    EXPECT_EQ(r.comms[collective::all_reduce], c.all_reduce) << c.op << " " << c.args[0];
    EXPECT_EQ(r.comms[collective::reduce_scatter], c.reduce_scatter) << c.op << " " << c.args[0];
    EXPECT_EQ(r.comms[collective::all_gather], c.all_gather) << c.op << " " << c.args[0];
  }
}

TEST(PointwiseRule, FollowsTheMostShardedOperandAndBroadcasts) {
  const auto r =
      propagate(call("aten.add.Tensor", "2,4", {"f32[16] (R,S(0))", "f32[4,16] (S(0),S(1))"}));
  EXPECT_EQ(r.outputs[0].shape(), (shape_t{4, 16}));
  EXPECT_EQ(test::placements_of(r), "[S(0), S(1)]");
  EXPECT_EQ(to_string(r.plans[0].target), "[R, S(0)]");
}

TEST(PointwiseRule, ShapeMismatchNamesTheDims) {
  const auto e =
      test::rejection(call("aten.add.Tensor", "4", {"f32[4,16] (R)", "f32[4,8] (S(0))"}));
  EXPECT_EQ(e.diag().code, codes::shape_mismatch);
  EXPECT_NE(e.diag().message.find("dim -1 (counted from the right) is 16 in self and 8 in other"),
            std::string::npos)
      << e.diag().message;
}

TEST(PointwiseRule, InPlaceKeepsSelfOrFails) {
  EXPECT_EQ(
      test::placements_of(propagate(call("aten.mul_.Tensor", "2,2", {"f32[12] (S(0),R)", "2.0"}))),
      "[S(0), R]");
  const auto e = test::rejection(call("aten.mul_.Tensor", "4", {"f32[8] (P(max))", "2.0"}));
  EXPECT_EQ(e.diag().code, codes::inplace_placement);
}

TEST(PointwiseRule, CopyReducesAPartialOfAnotherKind) {
  const auto r = propagate(call("aten.copy_.default", "4", {"f32[8] (P(sum))", "f32[8] (P(avg))"}));
  EXPECT_EQ(test::placements_of(r), "[P(sum)]");
  EXPECT_EQ(r.comms[collective::all_reduce], 1);
  EXPECT_EQ(test::rejection(call("aten.copy_.default", "4", {"f32[8] (P(sum))", "f32[8] (S(0))"}))
                .diag()
                .code,
            codes::shard_to_partial);
}

} // namespace
