// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_state.hpp>

#include <gtest/gtest.h>

#include <array>

namespace tdiag::trace {
namespace {

TEST(AllocatorState, FindsSegmentsAndCountsBytes) {
  allocator_state s;
  s.segments.push_back({0,
                        0x2000,
                        0x1000,
                        0,
                        0,
                        segment_type::large,
                        false,
                        no_stack,
                        {{0x2000, 0x400, 0x3f0, block_state::active_allocated, no_stack},
                         {0x2400, 0xc00, 0, block_state::inactive, no_stack}}});
  s.segments.push_back({0, 0x1000, 0x800, 0, 0, segment_type::small, false, no_stack, {}});
  s.sort();
  EXPECT_EQ(s.reserved_bytes(), 0x1800u);
  EXPECT_EQ(s.allocated_bytes(0), 0x400u);
  ASSERT_NE(s.find_segment(0, 0x2fff), nullptr);
  EXPECT_EQ(s.find_segment(0, 0x2fff)->address, 0x2000u);
  EXPECT_EQ(s.find_segment(0, 0x1900), nullptr);
  EXPECT_EQ(s.find_segment(1, 0x2000), nullptr);
  EXPECT_EQ(s.segments[1].largest_free_block(), 0xc00u);
}

TEST(AllocatorState, FiguresCountEveryBlockStateOnce) {
  allocator_state s;
  s.segments.push_back({0,
                        0x1000,
                        0x1000,
                        0,
                        0,
                        segment_type::large,
                        false,
                        no_stack,
                        {{0x1000, 0x100, 0x100, block_state::active_allocated, no_stack},
                         {0x1100, 0x300, 0, block_state::inactive, no_stack},
                         {0x1400, 0x200, 0x1f0, block_state::active_pending_free, no_stack},
                         {0x1600, 0xa00, 0, block_state::inactive, no_stack}}});
  // An implicit segment (Kineto, CUPTI) holds an allocated block but is not reserved memory.
  s.segments.push_back({0,
                        0x9000,
                        0x40,
                        0,
                        implicit_pool,
                        segment_type::unknown,
                        false,
                        no_stack,
                        {{0x9000, 0x40, 0x40, block_state::active_allocated, no_stack}}});
  s.segments.push_back({1,
                        0x1000,
                        0x2000,
                        0,
                        0,
                        segment_type::large,
                        false,
                        no_stack,
                        {{0x1000, 0x2000, 0, block_state::inactive, no_stack}}});
  s.sort();
  const state_figures f = s.figures(0);
  EXPECT_EQ(f.reserved, 0x1000u);
  EXPECT_EQ(f.reserved, s.reserved_bytes(0));
  EXPECT_EQ(f.allocated, 0x140u);
  EXPECT_EQ(f.allocated, s.allocated_bytes(0));
  EXPECT_EQ(f.pending_free, 0x200u);
  EXPECT_EQ(f.free, 0xd00u);
  EXPECT_EQ(f.largest_free_block, 0xa00u);
  EXPECT_EQ(f.largest_segment, 0x1000u);
  EXPECT_EQ(f.segments, 2u);
  EXPECT_EQ(f.allocated_blocks, 2u);
  EXPECT_DOUBLE_EQ(f.fragmentation(), 1.0 - 0xa00 / static_cast<double>(0xd00));

  const state_figures all = s.figures();
  EXPECT_EQ(all.reserved, 0x3000u);
  EXPECT_EQ(all.free, 0x2d00u);
  EXPECT_EQ(all.largest_free_block, 0x2000u);
  EXPECT_EQ(all.largest_segment, 0x2000u);
  EXPECT_EQ(all.segments, 3u);
  EXPECT_EQ(s.figures(7), state_figures{});
  EXPECT_DOUBLE_EQ(state_figures{}.fragmentation(), 0.0);
}

// sort() leaves a state already in order as it is (replays sort a finalized trace's state
// again) and sorts any other, blocks sharing an address among them.
TEST(AllocatorState, SortOrdersSegmentsAndBlocksAndKeepsOrderedOnes) {
  const auto free_block = [](std::uint64_t address, std::uint64_t size) {
    return block{address, size, 0, block_state::inactive, no_stack};
  };
  allocator_state s;
  s.segments.push_back({1, 0x1000, 0x100, 0, 0, segment_type::small, false, no_stack, {}});
  s.segments.push_back({0,
                        0x3000,
                        0x300,
                        0,
                        0,
                        segment_type::large,
                        false,
                        no_stack,
                        {free_block(0x3200, 0x100), free_block(0x3000, 0x100),
                         free_block(0x3100, 0x80), free_block(0x3100, 0x100)}});
  s.segments.push_back({0, 0x2000, 0x100, 0, 0, segment_type::small, false, no_stack, {}});
  s.sort();
  ASSERT_EQ(s.segments.size(), 3u);
  EXPECT_EQ(s.segments[0].address, 0x2000u);
  EXPECT_EQ(s.segments[1].address, 0x3000u);
  EXPECT_EQ(s.segments[2].device, 1);
  const auto& blocks = s.segments[1].blocks;
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].address, 0x3000u);
  EXPECT_EQ(blocks[1].address, 0x3100u);
  EXPECT_EQ(blocks[2].address, 0x3100u);
  EXPECT_EQ(blocks[1].size + blocks[2].size, 0x180u);
  EXPECT_EQ(blocks[3].address, 0x3200u);

  s.segments[1].blocks.erase(s.segments[1].blocks.begin() + 1);
  const allocator_state ordered = s;
  s.sort();
  EXPECT_EQ(s, ordered);
}

} // namespace
} // namespace tdiag::trace
