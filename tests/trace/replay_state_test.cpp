// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A lane that only ever holds implicit segments (no segment events, none in the dump) is
// replayed in an ordered map (trace/src/replay_state.hpp) rather than the state's sorted
// vector. These tests hold that replay to the vector one, event by event, on random histories
// full of the cases that do not match: frees of blocks never allocated, allocations inside live
// blocks, overlapping and zero-sized blocks, frees in one and in two steps.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/splitmix.hpp>

#include <gtest/gtest.h>

#include <array>

namespace {

using namespace tdiag::trace;

// A random history of `n` events on device 0 over few addresses, so that they collide;
// `overlapping`: some blocks also cover their neighbours' addresses.
trace random_history(std::uint64_t seed, std::size_t n, bool with_dump, bool overlapping = true) {
  constexpr std::uint64_t base = 0x7f0000000000;
  constexpr std::array<std::uint64_t, 6> sizes{0, 1, 512, 4096, 6000, 1 << 20};
  constexpr std::array<memory_action, 8> actions{
      memory_action::alloc,          memory_action::alloc,
      memory_action::alloc,          memory_action::free_requested,
      memory_action::free_completed, memory_action::free_completed,
      memory_action::free_completed, memory_action::oom};
  splitmix64 rng{seed};
  trace t;
  const auto lane = t.lanes.memory(0);
  for (std::size_t i = 0; i < n; ++i) {
    memory_event e;
    e.time = static_cast<std::int64_t>(i + 1) * 1000;
    e.lane = lane;
    e.action = actions[rng.next() % actions.size()];
    // 64 slots 4 KiB apart: a 6000-byte or 1 MiB block covers its neighbours' addresses.
    e.address = base + (rng.next() % 64) * 4096 + (rng.next() % 8 == 0 ? 512 : 0);
    e.size = sizes[rng.next() % (overlapping ? sizes.size() : 3)];
    t.memory.push_back(e);
  }
  if (with_dump)
    t.final_allocator_state = allocator_state{}; // a snapshot whose dump has no segments
  t.finalize();
  return t;
}

struct figures {
  std::int64_t allocated = 0, requested = 0, reserved = 0;
};

figures figures_of(const allocator_state& s) {
  figures f;
  for (const auto& seg : s.segments) {
    if (seg.pool != implicit_pool)
      f.reserved += static_cast<std::int64_t>(seg.total_size);
    for (const auto& b : seg.blocks)
      if (b.state == block_state::active_allocated) {
        f.allocated += static_cast<std::int64_t>(b.size);
        f.requested += static_cast<std::int64_t>(b.requested_size);
      }
  }
  return f;
}

TEST(ReplayState, SeriesAndStatesEqualTheVectorReplayAtEveryEvent) {
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const auto t = random_history(seed, 3000, false);
    const auto lane = memory_lane_of(t, 0);
    const auto events = t.memory.lane(lane);
    const auto series = memory_series_of(t, lane);
    const allocator_replay replay(t, lane, 64);
    ASSERT_EQ(series.samples.size(), events.size() + 1);

    allocator_state reference;
    reference.time = events.front().time;
    std::size_t mismatches = 0, implicit_seen = 0;
    for (std::size_t i = 0; i <= events.size(); ++i) {
      const auto f = figures_of(reference);
      ASSERT_EQ(series.samples[i].allocated, f.allocated) << "seed " << seed << " event " << i;
      ASSERT_EQ(series.samples[i].requested, f.requested) << "seed " << seed << " event " << i;
      ASSERT_EQ(series.samples[i].reserved, 0);
      if (i % 97 == 0 || i == events.size()) {
        ASSERT_EQ(replay.state_at(i), reference) << "seed " << seed << " event " << i;
        ASSERT_EQ(allocator_state_after(t, lane, i), reference)
            << "seed " << seed << " event " << i;
      }
      implicit_seen = std::max(implicit_seen, reference.segments.size());
      if (i < events.size())
        mismatches += apply_memory_event(reference, events[i]) ? 0 : 1;
    }
    EXPECT_EQ(replay.mismatches(), mismatches) << "seed " << seed;
    EXPECT_GT(mismatches, 0u) << "the history has the cases that do not match";
    EXPECT_GT(implicit_seen, 16u) << "many blocks are live at once";
  }
}

TEST(ReplayState, InitialStateFromADumpWithoutSegmentsEqualsTheVectorUndo) {
  for (std::uint64_t seed = 11; seed <= 14; ++seed) {
    const auto t = random_history(seed, 2000, true);
    const auto lane = memory_lane_of(t, 0);
    const auto events = t.memory.lane(lane);
    const bool two_step = true; // the history has free_requested events
    allocator_state reference;
    std::size_t mismatches = 0;
    for (std::size_t i = events.size(); i-- > 0;)
      mismatches += undo_memory_event(reference, events[i], two_step) ? 0 : 1;
    reference.time = events.front().time;
    std::size_t got_mismatches = 0;
    const auto start = initial_allocator_state(t, lane, &got_mismatches);
    EXPECT_EQ(start, reference) << "seed " << seed;
    EXPECT_EQ(got_mismatches, mismatches) << "seed " << seed;
    EXPECT_FALSE(start.segments.empty()) << "undone frees leave blocks live before the history";
    // And forward from there, as the replay and the series go.
    const auto series = memory_series_of(t, lane);
    allocator_state s = reference;
    for (const auto& e : events)
      apply_memory_event(s, e);
    EXPECT_EQ(series.samples.back().allocated, figures_of(s).allocated) << "seed " << seed;
    EXPECT_EQ(allocator_state_after(t, lane, events.size()), s) << "seed " << seed;
  }
}

// Seeking between keyframes far apart (state_at, replay_cursor: more than 64 events go through
// the map) gives the vector replay's state.
TEST(ReplayState, SeeksBetweenDistantKeyframesEqualTheVectorReplay) {
  for (std::uint64_t seed = 31; seed <= 34; ++seed) {
    const auto t = random_history(seed, 4000, seed % 2 == 0);
    const auto lane = memory_lane_of(t, 0);
    const allocator_replay replay(t, lane, 1000);
    replay_cursor cursor(replay);
    splitmix64 rng{seed};
    for (int round = 0; round < 30; ++round) {
      const std::size_t index = rng.next() % (replay.size() + 1);
      const auto reference = replay.replay_from_start(index);
      ASSERT_EQ(replay.state_at(index), reference) << "seed " << seed << " event " << index;
      ASSERT_EQ(cursor.seek(index), reference) << "seed " << seed << " event " << index;
      const std::size_t ahead = std::min(index + 100 + rng.next() % 800, replay.size());
      ASSERT_EQ(cursor.seek(ahead), replay.replay_from_start(ahead))
          << "seed " << seed << " forward to " << ahead;
    }
  }
}

// A lane with one real segment is not implicit-only: the vector replay runs, with the same
// answers as before (the segment's blocks count, the implicit ones beside it too). Its series
// sums the blocks around each event, which assumes segments that do not overlap.
TEST(ReplayState, ARealSegmentKeepsTheVectorReplay) {
  auto t = random_history(21, 500, false, false);
  memory_event seg;
  seg.time = 1;
  seg.lane = memory_lane_of(t, 0);
  seg.action = memory_action::segment_alloc;
  seg.address = 0x7e0000000000;
  seg.size = 2 << 20;
  t.memory.push_back(seg);
  t.finalize();
  const auto lane = memory_lane_of(t, 0);
  const auto series = memory_series_of(t, lane);
  allocator_state reference;
  for (const auto& e : t.memory.lane(lane))
    apply_memory_event(reference, e);
  EXPECT_EQ(series.samples.back().reserved, 2 << 20);
  EXPECT_EQ(series.samples.back().allocated, figures_of(reference).allocated);
  EXPECT_EQ(allocator_state_after(t, lane, t.memory.lane(lane).size()), reference);
}

} // namespace
