// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/sharding_rule.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

TEST(ExpandMeshDimRules, FirstMeshDimVariesSlowest) {
  const device_mesh mesh({2, 2});
  const auto R = placement::replicate();
  const auto S0 = placement::shard(0);
  const std::vector<mesh_dim_rule> rules{{R, R}, {S0, S0}};
  const auto c = expand_mesh_dim_rules(mesh, rules, 1, {{8}});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(to_string(c[1].outputs[0]), "[R, S(0)]");
  EXPECT_EQ(to_string(c[2].outputs[0]), "[S(0), R]");
  EXPECT_EQ(to_string(c[3].inputs[0]), "[S(0), S(0)]");
}

TEST(ExpandMeshDimRules, DropsUnshardableAndMixedPartials) {
  const device_mesh mesh({2, 4});
  const auto R = placement::replicate();
  const auto S0 = placement::shard(0);
  const auto Pmax = placement::partial(reduce_op::max);
  const auto Psum = placement::partial(reduce_op::sum);
  // A size-4 dim cannot be sharded 8 ways; P(max) with P(sum) in one spec is invalid.
  const auto c = expand_mesh_dim_rules(mesh, {{S0, S0}, {Pmax, Pmax}, {Psum, Psum}}, 1, {{4}});
  for (const auto& cand : c) {
    EXPECT_NE(to_string(cand.inputs[0]), "[S(0), S(0)]");
    EXPECT_NE(to_string(cand.inputs[0]), "[P(max), P(sum)]");
  }
  EXPECT_EQ(c.size(), 9u - 1 - 2);
  (void)R;
}

TEST(IsShardable, UsesTheProductOfMeshSizes) {
  const device_mesh mesh({2, 4});
  EXPECT_TRUE(is_shardable({8}, parse_placements("S(0),S(0)"), mesh));
  EXPECT_FALSE(is_shardable({6}, parse_placements("S(0),S(0)"), mesh));
  EXPECT_TRUE(is_shardable({1, 4}, parse_placements("R,S(1)"), mesh));
  EXPECT_FALSE(is_shardable({4}, parse_placements("R,S(1)"), mesh));
}

} // namespace
