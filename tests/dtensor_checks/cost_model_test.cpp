// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/cost_model.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {
using namespace tdiag::dtensor;

TEST(MeshTopology, CpuMeshIsInterHostOnEveryDim) {
  const auto topo = mesh_topology::build(device_mesh({2, 4}));
  EXPECT_DOUBLE_EQ(topo.latency[0], 2.7);
  EXPECT_DOUBLE_EQ(topo.latency[1], 2.7);
  EXPECT_NEAR(topo.bandwidth[1], 87.7 * 0.22, 1e-12);
  const auto gpu = mesh_topology::build(device_mesh({2, 4}), 8);
  EXPECT_DOUBLE_EQ(gpu.latency[1], 0.6);
  EXPECT_DOUBLE_EQ(gpu.latency[0], 0.6);
}

TEST(CollectiveCosts, LatencyBoundFiguresMatchPyTorch) {
  for (auto [n, gather, reduce] : {std::tuple{2, 9.3, 12.0}, {4, 14.7, 22.8}, {8, 25.5, 44.4}}) {
    const auto topo = mesh_topology::build(device_mesh({n}));
    EXPECT_NEAR(all_gather_cost(0.0, topo, 0), gather, 1e-9) << n;
    EXPECT_NEAR(reduce_scatter_cost(0.0, topo, 0), gather, 1e-9) << n;
    EXPECT_NEAR(all_reduce_cost(0.0, topo, 0), reduce, 1e-9) << n;
  }
}

TEST(RedistributeCost, WalksThePlan) {
  const device_mesh mesh({2, 4});
  const auto topo = mesh_topology::build(mesh);
  const tensor_meta meta{{8, 8}, {8, 1}, dtype::float32};
  const auto R = parse_placements("R,R");
  EXPECT_EQ(redistribute_cost(mesh, meta, R, parse_placements("S(0),P(max)"), topo), 0.0);
  EXPECT_EQ(
      redistribute_cost(mesh, meta, parse_placements("S(0),R"), parse_placements("S(0),R"), topo),
      0.0);
  EXPECT_TRUE(std::isinf(redistribute_cost(mesh, meta, parse_placements("S(0),R"),
                                           parse_placements("P(sum),R"), topo)));
  EXPECT_TRUE(std::isinf(redistribute_cost(mesh, meta, parse_placements("P(avg),R"),
                                           parse_placements("P(sum),R"), topo)));
  // S→S' pays the all-gather plus PyTorch's 1.0 penalty.
  const double s2s =
      redistribute_cost(mesh, meta, parse_placements("R,S(0)"), parse_placements("R,S(1)"), topo);
  EXPECT_NEAR(s2s, all_gather_cost(256.0 / 4 / (1 << 30), topo, 1) + 1.0, 1e-9);
  // R→S shrinks the bytes of later steps: sharding first is (slightly) cheaper than reducing all.
  const double rs_first = redistribute_cost(mesh, meta, parse_placements("P(sum),R"),
                                            parse_placements("S(0),S(1)"), topo);
  EXPECT_GT(rs_first, 0.0);
}

} // namespace
