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

} // namespace
} // namespace tdiag::trace
