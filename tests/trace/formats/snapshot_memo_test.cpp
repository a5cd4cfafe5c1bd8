// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The snapshot importer's pickle memo (trace/formats/src/snapshot/snapshot_memo.cpp): pages the
// puts have left behind are packed (runs of rows, of blocks, of blocks each with its empty
// list, settled stacks with their frames, anything else as stored) and read back as stored,
// slots of a packed page read or changed beside it until enough are to unpack it.
#include <tensordiag/trace/stack_table.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "formats/src/snapshot/snapshot_memo.hpp"

namespace {

using namespace tdiag::trace::detail;

// 300 stacks of 1-4 frames, read as the importer's memo reads its settled stacks.
tdiag::trace::stack_table make_stacks() {
  tdiag::trace::stack_table t;
  for (std::uint32_t s = 0; s < 300; ++s) {
    std::vector<tdiag::trace::frame_id> ids;
    for (std::uint32_t f = 0; f <= s % 4; ++f)
      ids.push_back(t.intern_frame({.function = s, .file = f, .line = s + f}));
    (void)t.intern_stack(ids);
  }
  return t;
}
tdiag::trace::frame_list frames_of(const void* context, std::uint32_t stack) {
  return static_cast<const tdiag::trace::stack_table*>(context)->stack(stack);
}

// What a snapshot's memo holds, in runs: entries (one row after another), inactive blocks with
// their empty frames lists, active blocks, settled stacks with their frames, strings, and runs
// broken where a row or block is skipped or a pair lacks its empty list.
std::vector<std::uint64_t> memo_like_a_snapshot(const tdiag::trace::stack_table& stacks,
                                                std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint64_t> out;
  std::uint64_t row = 0, block = 0, box = 7;
  while (out.size() < n) {
    const auto run = 1 + rng() % 3000;
    switch (rng() % 6) {
    case 0:
      for (std::uint32_t i = 0; i < run; ++i)
        out.push_back(snap::make(snap::t_row, row++));
      break;
    case 1:
      for (std::uint32_t i = 0; i < run; ++i) {
        out.push_back(snap::make(snap::t_block, block++));
        if (rng() % 50 != 0)
          out.push_back(snap::make(snap::t_empty, 0));
      }
      break;
    case 2:
      for (std::uint32_t i = 0; i < run; ++i)
        out.push_back(snap::make(snap::t_block, block++));
      break;
    case 3: {
      const auto s = static_cast<std::uint32_t>(1 + rng() % (stacks.stack_count() - 1));
      out.push_back(snap::make(snap::t_stack, s));
      for (const auto f : stacks.stack(s))
        out.push_back(snap::make(snap::t_frame, f));
      break;
    }
    case 4:
      row += rng() % 3;   // a skipped row (0: the run goes on)
      block += rng() % 3; // a skipped block
      out.push_back(snap::make(snap::t_box, box++));
      break;
    default:
      out.push_back(snap::make(snap::t_int, rng() % 1000));
      out.push_back(snap::make(snap::t_container, rng() % (1u << 27)));
      out.push_back(snap::make(snap::t_row, (std::uint64_t{1} << 28) + row)); // a wide slot
      break;
    }
  }
  out.resize(n);
  return out;
}

TEST(SnapshotMemo, PackedPagesReadBackAsStored) {
  const auto stacks = make_stacks();
  for (const std::uint32_t seed : {1u, 2u, 3u}) {
    auto want = memo_like_a_snapshot(stacks, 400'000, seed); // about 100 pages
    snap_memo memo;
    memo.set_frames(&frames_of, &stacks);
    for (std::size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE(memo.set(i, want[i]));
    // Slots never stored read as such, in a packed page too.
    ASSERT_TRUE(memo.set(want.size() + 10, want.front()));
    ASSERT_EQ(memo.size(), want.size() + 11);
    // A few slots of each packed page read, then changed (a traceback settled after a later
    // entry fetched it), and read again: the page stays packed for that; more of them unpack
    // it. Page p gets p % 40 of them, so some pages stay packed and some do not.
    std::mt19937 rng(seed);
    for (std::size_t page = 0; page < want.size() / 4096; ++page)
      for (std::size_t n = 0; n < page % 40; ++n) {
        const auto i = page * 4096 + rng() % 4096;
        std::uint64_t got = 0;
        ASSERT_TRUE(memo.find(i, got));
        ASSERT_EQ(got, want[i]) << "seed " << seed << " slot " << i;
        want[i] = snap::make(snap::t_stack, rng() % 1000);
        ASSERT_TRUE(memo.set(i, want[i]));
        ASSERT_TRUE(memo.find(i, got));
        ASSERT_EQ(got, want[i]) << "seed " << seed << " slot " << i;
      }
    for (std::size_t i = 0; i < want.size(); ++i) {
      std::uint64_t got = 0;
      ASSERT_TRUE(memo.find(i, got)) << "seed " << seed << " slot " << i;
      ASSERT_EQ(got, want[i]) << "seed " << seed << " slot " << i;
    }
    EXPECT_FALSE(memo.has(want.size() + 5));
    EXPECT_TRUE(memo.has(want.size() + 10));
  }
}

// A page of a fragmented snapshot's blocks, or of a device's rows, packs to a few bytes.
TEST(SnapshotMemo, RunsOfBlocksAndRowsPackSmall) {
  const auto stacks = make_stacks();
  snap_memo memo;
  memo.set_frames(&frames_of, &stacks);
  constexpr std::size_t n = 1'000'000;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v =
        i < n / 2 ? (i % 2 == 0 ? snap::make(snap::t_block, i / 2) : snap::make(snap::t_empty, 0))
                  : snap::make(snap::t_row, i);
    ASSERT_TRUE(memo.set(i, v));
  }
  // The 16 newest pages stay as they are (256 KiB); the other 229 pack to a few bytes each
  // (4 MiB unpacked; before runs, the block pages stayed 16 KiB and row pages took 4 KiB).
  EXPECT_LT(memo.resident_bytes(), 300'000u);
  std::uint64_t got = 0;
  ASSERT_TRUE(memo.find(4097, got));
  EXPECT_EQ(got, snap::make(snap::t_empty, 0));
  ASSERT_TRUE(memo.find(4098, got));
  EXPECT_EQ(got, snap::make(snap::t_block, 2049));
  ASSERT_TRUE(memo.find(n / 2 + 3, got));
  EXPECT_EQ(got, snap::make(snap::t_row, n / 2 + 3));
}

} // namespace
