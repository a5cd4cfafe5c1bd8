// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>

#include <gtest/gtest.h>

#include <set>

namespace tdiag::trace {
namespace {

TEST(Synthetic, DeterministicAndShapedLikeACapture) {
  const synthetic_options o{.kernels = 3000, .devices = 2, .streams_per_device = 3};
  const trace a = make_synthetic_trace(o);
  const trace b = make_synthetic_trace(o);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(a.finalized());
  EXPECT_EQ(a.kernels.size(), 3000u);
  EXPECT_EQ(a.flows.size(), a.kernels.size() + a.copies.size());
  EXPECT_GT(a.memory.size(), 0u);
  EXPECT_EQ(a.assertions.size(), 1u);
  ASSERT_TRUE(a.final_allocator_state.has_value());
  std::set<std::uint32_t> names;
  for (const auto& k : a.kernels.all()) {
    names.insert(k.name);
    EXPECT_LT(k.start, k.end);
  }
  EXPECT_EQ(names.size(), 36u);
  // Kernels on one stream never overlap.
  for (lane_id l = 0; l < a.lanes.size(); ++l) {
    auto lane = a.kernels.lane(l);
    for (std::size_t i = 1; i < lane.size(); ++i)
      EXPECT_LE(lane[i - 1].end, lane[i].start);
  }
  EXPECT_NE(make_synthetic_trace({.kernels = 3000, .seed = 9}), a);
}

} // namespace
} // namespace tdiag::trace
