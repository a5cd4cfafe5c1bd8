// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The replay's search over its segments (trace/replay/src/key_index.hpp) answers as the map it
// indexes would: the entry of the last key at or below an address and the key after it, through
// inserts and erases that split runs and empty them.
#include <tensordiag/trace/splitmix.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "replay/src/key_index.hpp"
#include "replay/src/replay_state.hpp"

namespace {

using tdiag::trace::block;
using tdiag::trace::segment;
using tdiag::trace::splitmix64;
using tdiag::trace::detail::blocks_at_or_below;
using tdiag::trace::detail::count_at_or_below;
using tdiag::trace::detail::key_index;

TEST(KeyIndex, CountsAsUpperBoundDoes) {
  splitmix64 rng{7};
  for (std::size_t n = 0; n < 70; ++n) {
    std::vector<std::uint64_t> keys(n);
    for (auto& k : keys)
      k = rng.next() % 40; // duplicates
    std::sort(keys.begin(), keys.end());
    for (std::uint64_t key = 0; key < 42; ++key) {
      const auto want =
          static_cast<std::size_t>(std::upper_bound(keys.begin(), keys.end(), key) - keys.begin());
      ASSERT_EQ(count_at_or_below(keys.data(), keys.size(), key, [](std::uint64_t k) { return k; }),
                want)
          << n << " keys, key " << key;
    }
  }
  const std::vector<std::uint64_t> top{0, ~std::uint64_t{0}};
  EXPECT_EQ(count_at_or_below(top.data(), top.size(), ~std::uint64_t{0},
                              [](std::uint64_t k) { return k; }),
            2u);
}

// The search from where an address's offset points finds what a binary search finds: in segments
// whose blocks tile them evenly or not at all (a few huge ones among small, gaps where a damaged
// dump left them), at every block's edges and outside the segment.
TEST(KeyIndex, GallopFromTheOffsetCountsAsABinarySearch) {
  splitmix64 rng{5};
  for (int round = 0; round < 300; ++round) {
    segment seg;
    seg.address = 0x7f0000000000 + rng.next() % 4096 * 512;
    const auto n = rng.next() % 400;
    std::uint64_t at = seg.address + (round % 3 == 0 ? rng.next() % 4 * 512 : 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto size = round % 2 == 0 ? 512 * (1 + rng.next() % 8)
                                       : (rng.next() % 10 == 0 ? 1 << 24 : 512 + rng.next() % 9000);
      seg.blocks.push_back(block{at, size});
      at += size + (round % 5 == 0 ? rng.next() % 3 * 512 : 0);
    }
    seg.total_size = at - seg.address + rng.next() % 3 * 512;
    const auto key = [](const block& b) { return b.address; };
    const auto check = [&](std::uint64_t address) {
      ASSERT_EQ(blocks_at_or_below(seg, address),
                count_at_or_below(seg.blocks.data(), seg.blocks.size(), address, key))
          << "round " << round << ", address " << address;
    };
    for (const auto& b : seg.blocks) {
      check(b.address);
      check(b.address - 1);
      check(b.address + b.size - 1);
    }
    for (int k = 0; k < 50; ++k)
      check(seg.address + rng.next() % (seg.total_size + 1));
    check(seg.address - 1);
    check(seg.address + seg.total_size);
    check(0);
    check(~std::uint64_t{0});
  }
}

// Inserts and erases at random over a few thousand keys (runs split past 256 and are dropped
// when emptied); after each, floor() is checked against the map at keys, beside them and far off.
TEST(KeyIndex, FloorMatchesTheMapThroughInsertsAndErases) {
  using map = std::map<std::uint64_t, int>;
  map m;
  key_index<map::iterator> index;
  splitmix64 rng{11};
  const auto check = [&](std::uint64_t address) {
    const auto f = index.floor(address);
    const auto next = m.upper_bound(address);
    if (next == m.begin()) {
      ASSERT_FALSE(f.found) << address;
      return;
    }
    ASSERT_TRUE(f.found) << address;
    EXPECT_EQ(f.at, std::prev(next)) << address;
    EXPECT_EQ(f.next, next == m.end() ? ~std::uint64_t{0} : next->first) << address;
  };
  std::size_t peak = 0;
  for (int step = 0; step < 40'000; ++step) {
    // Mostly inserts at first, mostly erases at the end: the index fills and empties.
    const bool grow = rng.next() % 40'000 > static_cast<std::uint64_t>(step);
    const std::uint64_t key = (rng.next() % 6000) * 4096;
    if (grow) {
      if (const auto [it, made] = m.try_emplace(key, step); made)
        index.insert(key, it);
    } else if (const auto it = m.find(key); it != m.end()) {
      index.erase(key);
      m.erase(it);
    }
    ASSERT_EQ(index.size(), m.size());
    peak = std::max(peak, m.size());
    if (step % 16 == 0) {
      check(key);
      check(key + 1);
      check(key == 0 ? 0 : key - 1);
      check(rng.next() % (6000 * 4096));
      check(~std::uint64_t{0});
      check(0);
    }
  }
  // The walk filled many runs of 256 and emptied most of them.
  EXPECT_GT(peak, 2000u);
  EXPECT_LT(m.size(), peak / 2);
}

} // namespace
