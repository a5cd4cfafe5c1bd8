// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/synthetic_history.hpp>

#include <gtest/gtest.h>

namespace {

using namespace tdiag;

// The final state is the one a replay of the events reaches: the allocator view shows it.
void expect_consistent(const trace::trace& t) {
  const trace::allocator_replay replay(t, trace::memory_lane_of(t, 0), trace::replay_options{});
  EXPECT_EQ(replay.size(), t.memory.size());
  ASSERT_TRUE(t.final_allocator_state.has_value());
  EXPECT_EQ(replay.replay_from_start(replay.size()).segments, t.final_allocator_state->segments);
}

TEST(SyntheticSnapshot, IsConsistent) {
  const auto t = trace::make_snapshot_trace(20'000);
  EXPECT_GE(t.memory.size(), 20'000u);
  expect_consistent(t);
}

TEST(SyntheticSnapshot, FragmentedHasOneSegmentOfManyBlocks) {
  const auto t = trace::make_fragmented_snapshot_trace(60'000, 8192);
  EXPECT_GE(t.memory.size(), 60'000u);
  expect_consistent(t);
  const auto& segments = t.final_allocator_state->segments;
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments.front().blocks.size(), 8193u) << "frees never merge blocks";
  EXPECT_EQ(segments.front().total_size, 8192u * 512u + (2u << 20));
}

} // namespace
