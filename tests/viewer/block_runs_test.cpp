// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/block_runs.hpp>

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

using namespace tdiag::view;
using tdiag::trace::block_state;

// A segment of `n` blocks of random small sizes (a few large), in random states.
tdiag::trace::segment random_segment(std::size_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  tdiag::trace::segment seg;
  seg.address = 0x7f0000000000ull;
  std::uint64_t at = seg.address;
  for (std::size_t i = 0; i < n; ++i) {
    tdiag::trace::block b;
    b.address = at;
    b.size = (rng() % 200 == 0 ? 1 + rng() % 40'000 : 1 + rng() % 4) * 512;
    b.state = static_cast<block_state>(rng() % 3);
    at += b.size;
    seg.blocks.push_back(b);
  }
  seg.total_size = at - seg.address;
  return seg;
}

TEST(BlockRuns, CoverEveryBlockInFewRuns) {
  for (const std::size_t n : {1u, 10u, 5000u, 200'000u}) {
    const auto seg = random_segment(n, static_cast<std::uint32_t>(n));
    for (const double width : {30.0, 800.0, 5000.0}) {
      std::vector<block_run> runs;
      block_runs(seg, width, 1.0, runs);
      ASSERT_FALSE(runs.empty());
      std::size_t next = 0;
      for (const auto& r : runs) {
        ASSERT_EQ(r.first, next) << "runs are contiguous";
        ASSERT_GE(r.count, 1u);
        ASSERT_GE(r.shown, r.first);
        ASSERT_LT(r.shown, r.first + r.count);
        EXPECT_LE(r.x0, r.x1);
        if (r.folded()) { // a fold spans about min_px (its last block may reach further)
          EXPECT_GE(r.x1 - r.x0, 0.0);
        }
        // A fold shows a block in use whenever its first block is in use.
        if (seg.blocks[r.first].state != block_state::inactive) {
          EXPECT_NE(seg.blocks[r.shown].state, block_state::inactive);
        }
        next = r.first + r.count;
      }
      EXPECT_EQ(next, n) << "every block is in a run";
      EXPECT_LE(runs.size(), static_cast<std::size_t>(2 * width) + 1) << n << " blocks";
      EXPECT_NEAR(runs.back().x1, width, 1e-6);
    }
  }
}

TEST(BlockRuns, WideBlocksStayThemselves) {
  tdiag::trace::segment seg;
  seg.address = 4096;
  seg.total_size = 1000;
  // 100 bytes, then 800 blocks of 1 byte, then 100 bytes: on a 1000-px bar every block is
  // one pixel or wider; on a 10-px bar the small ones fold.
  seg.blocks.push_back({4096, 100, 100, block_state::active_allocated, 1});
  for (std::uint64_t k = 0; k < 800; ++k)
    seg.blocks.push_back({4196 + k, 1, 1, block_state::active_pending_free, 2});
  seg.blocks.push_back({4996, 100, 100, block_state::inactive, 0});
  std::vector<block_run> runs;
  block_runs(seg, 1000.0, 1.0, runs);
  EXPECT_EQ(runs.size(), 802u);
  block_runs(seg, 10.0, 1.0, runs);
  ASSERT_EQ(runs.size(), 10u);
  EXPECT_EQ(runs.front().count, 1u);
  EXPECT_EQ(runs.back().count, 1u);
  EXPECT_EQ(runs[1].count, 100u);
  EXPECT_EQ(seg.blocks[runs[1].shown].state, block_state::active_pending_free);
}

TEST(BlockRuns, BlockAtFindsTheHolder) {
  const auto seg = random_segment(1000, 5);
  for (std::size_t i = 0; i < seg.blocks.size(); i += 37) {
    const auto& b = seg.blocks[i];
    EXPECT_EQ(block_at(seg, b.address), i);
    EXPECT_EQ(block_at(seg, b.address + b.size - 1), i);
  }
  EXPECT_FALSE(block_at(seg, seg.address - 1));
  EXPECT_FALSE(block_at(seg, seg.address + seg.total_size));
}

} // namespace
