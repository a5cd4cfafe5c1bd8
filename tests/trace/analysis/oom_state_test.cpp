// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// live_state keeps an oom's figures and sites per segment as a replay pass moves; read_state
// counts them over the whole state. On random histories (segments made and dropped, blocks
// carved and released, events that do not match the state, blocks without stacks) the two agree
// at every oom.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/oom_analysis.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/src/oom_state.hpp"
#include "replay/src/replay_state.hpp"

namespace {

using namespace tdiag::trace;

void expect_same(const detail::oom_state& live, const detail::oom_state& whole, std::size_t event) {
  SCOPED_TRACE("event " + std::to_string(event));
  EXPECT_EQ(live.figures.reserved, whole.figures.reserved);
  EXPECT_EQ(live.figures.allocated, whole.figures.allocated);
  EXPECT_EQ(live.figures.free, whole.figures.free);
  EXPECT_EQ(live.figures.largest_free_block, whole.figures.largest_free_block);
  EXPECT_EQ(live.site_count, whole.site_count);
  ASSERT_EQ(live.sites.size(), whole.sites.size());
  for (std::size_t i = 0; i < live.sites.size(); ++i) {
    EXPECT_EQ(live.sites[i].site, whole.sites[i].site) << i;
    EXPECT_EQ(live.sites[i].stack, whole.sites[i].stack) << i;
    EXPECT_EQ(live.sites[i].bytes, whole.sites[i].bytes) << i;
    EXPECT_EQ(live.sites[i].count, whole.sites[i].count) << i;
  }
}

// A history over `slots` segment addresses: each slot's segment is made, carved into blocks of
// 1-4 units, released and dropped at random; some events name no block or the wrong size.
trace random_history(std::uint32_t seed, std::size_t events, std::size_t slots,
                     std::uint32_t oom_per_10k = 1200) {
  std::mt19937 rng(seed);
  trace t;
  const auto lane = t.lanes.memory(0);
  std::vector<stack_id> stacks{no_stack};
  for (std::uint32_t i = 0; i < 60; ++i) {
    // 60 stacks over 40 user frames (stacks share sites), one internal frame above each.
    const std::vector<frame_id> frames{
        t.stacks.intern_frame({t.strings.intern("f"), t.strings.intern("model.py"), i % 40 + 1}),
        t.stacks.intern_frame({t.strings.intern("g"), t.strings.intern("torch/nn/x.py"), i})};
    stacks.push_back(t.stacks.intern_stack(frames));
  }
  // Segments of 64 units made and dropped often, or of 512 that live long and hold more sites
  // than live_state looks along.
  const std::uint64_t units = seed % 2 == 0 ? 512 : 64;
  const std::uint32_t toggle = seed % 2 == 0 ? 1 : 15;
  const std::uint64_t unit = 512, seg_size = units * unit, base = std::uint64_t{1} << 30;
  std::vector<bool> made(slots, false);
  std::vector<std::vector<std::uint64_t>> live(slots); // offsets of allocated blocks
  for (std::size_t i = 0; i < events; ++i) {
    const auto slot = rng() % slots;
    const auto at = base + slot * 2 * seg_size;
    memory_event e;
    e.lane = lane;
    e.time = static_cast<std::int64_t>(i);
    e.stack = stacks[rng() % stacks.size()];
    const auto roll = rng() % 100;
    if (rng() % 10000 < oom_per_10k) {
      e.action = memory_action::oom;
      e.size = seg_size * 4;
    } else if (!made[slot] || roll < toggle) {
      e.action = made[slot] ? memory_action::segment_free : memory_action::segment_alloc;
      e.address = at;
      e.size = seg_size;
      made[slot] = !made[slot];
      live[slot].clear();
    } else if (roll < 55 + toggle || live[slot].empty()) {
      e.action = memory_action::alloc;
      e.address = at + (rng() % (units - 4)) * unit;
      e.size = (1 + rng() % 4) * unit;
      live[slot].push_back(e.address - at);
    } else {
      e.action = memory_action::free_completed;
      const auto k = rng() % live[slot].size();
      e.address = at + live[slot][k];
      e.size = (1 + rng() % 4) * unit; // not always the block's size
      live[slot].erase(live[slot].begin() + static_cast<std::ptrdiff_t>(k));
    }
    t.memory.push_back(e);
  }
  t.finalize();
  return t;
}

// Compares the two readings at every oom of `t`; returns how many ooms, and how many found the
// list of touched segments dropped (a reading of the whole state).
std::pair<std::size_t, std::size_t> compare_at_ooms(const trace& t) {
  const auto lane = memory_lane_of(t, 0);
  replay_pass replay(t, lane);
  replay.track_segments();
  detail::live_state live(t);
  const auto events = t.memory.lane(lane);
  std::size_t compared = 0, whole = 0;
  for (std::size_t i = 0; i < events.size() && !testing::Test::HasFailure(); ++i) {
    if (events[i].action == memory_action::oom) {
      whole += replay.all_touched() ? 1 : 0;
      expect_same(live.read(replay), detail::read_state(t, replay.state()), i);
      ++compared;
    }
    (void)replay.step();
  }
  return {compared, whole};
}

TEST(OomState, LiveStateAgreesWithTheWholeStateAtEveryOom) {
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= 12 && !HasFailure(); ++seed)
    compared += compare_at_ooms(random_history(seed, 3000, seed % 3 == 0 ? 3 : 40)).first;
  EXPECT_GT(compared, 1000u);
}

// The same with segments kept as fragments of two blocks (so that an oom reads the fragments
// its steps touched, not a whole segment of 100,000 blocks): the live figures are still the
// whole state's.
TEST(OomState, LiveStateAgreesOverFragmentedSegments) {
  const auto was = detail::replay_fragment_blocks.exchange(2);
  std::size_t compared = 0;
  for (std::uint32_t seed = 1; seed <= 12 && !HasFailure(); ++seed)
    compared += compare_at_ooms(random_history(seed, 3000, seed % 3 == 0 ? 3 : 40)).first;
  detail::replay_fragment_blocks = was;
  EXPECT_GT(compared, 1000u);
}

// Thousands of steps between two ooms over a few segments outgrow the list of touched ones: the
// next oom reads the whole state, and the ones after it follow the segments again.
TEST(OomState, ALongRunBetweenOomsIsReadWhole) {
  const auto [compared, whole] = compare_at_ooms(random_history(7, 60000, 3, 3));
  EXPECT_GT(compared, 5u);
  EXPECT_GT(whole, 0u);
  EXPECT_LT(whole, compared);
}

// Events the replay leaves out (another device's, segment events of no bytes) and a dumped
// segment of no bytes: the lane is still followed segment by segment, and at every oom the live
// figures are the whole state's.
TEST(OomState, ALaneWithEventsLeftOutIsStillFollowed) {
  auto t = random_history(5, 3000, 12);
  std::vector<memory_event> events(t.memory.all().begin(), t.memory.all().end());
  trace damaged = t;
  damaged.memory = {};
  for (std::size_t i = 0; i < events.size(); ++i) {
    damaged.memory.push_back(events[i]);
    auto odd = events[i];
    if (i % 7 == 0) {
      odd.device = 1; // on lane 0 still
      damaged.memory.push_back(odd);
    } else if (i % 11 == 0) {
      odd.action = memory_action::segment_alloc;
      odd.size = 0;
      damaged.memory.push_back(odd);
    }
  }
  allocator_state dump;
  segment empty;
  empty.address = std::uint64_t{1} << 29;
  empty.blocks.push_back({empty.address, 0, 0, block_state::inactive, no_stack});
  dump.segments.push_back(empty);
  damaged.final_allocator_state = dump;
  damaged.finalize();
  const auto [compared, whole] = compare_at_ooms(damaged);
  EXPECT_GT(compared, 100u);
  EXPECT_EQ(find_ooms(damaged).size(), compared);
}

} // namespace
