// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/redistribute.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

redistribution_plan plan(const device_mesh& mesh, const char* from, const char* to,
                         const shape_t& shape = {16, 16}, plan_options options = {}) {
  const tensor_meta meta{shape, contiguous_strides(shape), dtype::float32};
  return plan_redistribution(mesh, meta, parse_placements(from), parse_placements(to),
                             mesh_topology::build(mesh), options);
}

TEST(TransitionCollective, OneMappingForPlansAndPython) {
  const auto c = [](const char* from, const char* to, plan_options o = {}) {
    return transition_collective(*parse_placement(from), *parse_placement(to), o);
  };
  EXPECT_EQ(c("S(0)", "R"), collective::all_gather);
  EXPECT_EQ(c("P(sum)", "R"), collective::all_reduce);
  EXPECT_EQ(c("P(avg)", "S(1)"), collective::reduce_scatter);
  EXPECT_EQ(c("S(0)", "S(1)"), collective::all_to_all);
  EXPECT_EQ(c("R", "S(0)"), collective::none);
  EXPECT_EQ(c("R", "P(sum)"), collective::none);
  EXPECT_EQ(c("S(0)", "P(sum)"), collective::none); // refused: a step_problem, not a collective
  EXPECT_EQ(c("P(max)", "P(sum)"), collective::none);
  EXPECT_EQ(c("P(max)", "P(sum)", {.reduce_mismatched_partials = true}), collective::all_reduce);
  // The plan's steps carry the same answer.
  const auto p = plan(device_mesh({4}), "S(0)", "S(1)");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].comm, c("S(0)", "S(1)"));
  EXPECT_EQ(p.steps[0].counted, collective::all_gather);
}

TEST(PlanRedistribution, ClearsNestedShardingInnerFirst) {
  const auto p = plan(device_mesh({2, 2}), "S(0),S(0)", "R,S(0)");
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].mesh_dim, 1u);
  EXPECT_EQ(p.steps[0].to, placement::replicate());
  EXPECT_EQ(p.steps[1].mesh_dim, 0u);
  EXPECT_EQ(p.steps[1].to, placement::replicate());
  EXPECT_EQ(p.steps[2].mesh_dim, 1u);
  EXPECT_EQ(p.steps[2].to, placement::shard(0));
  EXPECT_EQ(p.counts()[collective::all_gather], 2);
}

TEST(PlanRedistribution, CountsCollectivesAsTheCorpus) {
  const device_mesh mesh({2, 4});
  auto p = plan(mesh, "P(sum),S(1)", "S(0),R");
  EXPECT_EQ(p.counts()[collective::reduce_scatter], 1);
  EXPECT_EQ(p.counts()[collective::all_gather], 1);
  p = plan(device_mesh({4}), "S(0)", "S(1)");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].comm, collective::all_to_all);
  EXPECT_EQ(p.steps[0].counted, collective::all_gather);
  p = plan(device_mesh({4}), "R", "P(sum)");
  EXPECT_EQ(p.counts().total(), 0);
}

TEST(PlanRedistribution, FlagsImpossibleSteps) {
  auto p = plan(device_mesh({4}), "S(0)", "P(sum)");
  ASSERT_NE(p.first_problem(), nullptr);
  EXPECT_EQ(p.first_problem()->problem, step_problem::shard_to_partial);
  p = plan(device_mesh({4}), "P(avg)", "P(sum)");
  EXPECT_EQ(p.first_problem()->problem, step_problem::partial_to_partial);
  p = plan(device_mesh({4}), "P(avg)", "P(sum)", {16}, plan_options{true});
  EXPECT_EQ(p.first_problem(), nullptr);
  EXPECT_EQ(p.counts()[collective::all_reduce], 1);
}

TEST(PlanRedistribution, DescribesSteps) {
  const device_mesh mesh({2, 4});
  const auto p = plan(mesh, "R,S(0)", "R,R", {12, 64});
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_EQ(p.steps[0].bytes_per_rank, 3072);
  EXPECT_EQ(to_string(p.steps[0], mesh),
            "S(0)→R on mesh dim 1: all_gather, 3,072 bytes per rank, 14.8 µs");
}

} // namespace
