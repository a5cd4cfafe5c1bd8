// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/lane_table.hpp>

#include <gtest/gtest.h>

namespace tdiag::trace {
namespace {

TEST(LaneTable, InternsByKindAndKey) {
  lane_table lanes;
  const lane_id s = lanes.gpu(0, 7);
  const lane_id h = lanes.host(0, 7); // same numbers, different kind
  const lane_id m = lanes.memory(-1);
  EXPECT_NE(s, h);
  EXPECT_NE(h, m);
  EXPECT_EQ(lanes.gpu(0, 7), s);
  EXPECT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes.at(m).kind, lane_kind::device_memory);
  EXPECT_EQ(lanes.at(m).group, -1);
  EXPECT_EQ(lanes.find_gpu(0, 7), s);
  EXPECT_EQ(lanes.find_host(0, 7), h);
  EXPECT_EQ(lanes.find_memory(-1), m);
  EXPECT_EQ(lanes.find_gpu(1, 7), no_lane);
  lanes.set_name(s, 5);
  EXPECT_EQ(lanes.at(s).name, 5u);
}

} // namespace
} // namespace tdiag::trace
