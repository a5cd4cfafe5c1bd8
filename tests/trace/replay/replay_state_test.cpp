// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A lane's segments are replayed in an ordered map (trace/replay/src/replay_state.hpp) rather than
// the state's sorted vector, each event on the segments around its address. These tests hold that
// replay to the vector one (apply_memory_event / undo_memory_event on a plain state), event by
// event, on random histories full of the cases that do not match: frees of blocks never
// allocated, allocations inside live blocks, overlapping and zero-sized blocks, frees in one
// and in two steps; and, in lanes that mix real segments with implicit blocks, segments freed
// while in use, pages mapped onto segments and unmapped from them, and overlapping segments.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/splitmix.hpp>

#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "histories.hpp"
#include "replay/src/replay_state.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::histories::mixed_history;
using tdiag::trace::histories::random_history;

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

void check_mixed_lane_states() {
  for (std::uint64_t seed = 41; seed <= 48 && !testing::Test::HasFatalFailure(); ++seed) {
    const bool with_dump = seed % 2 == 0;
    const auto t = mixed_history(seed, 3000, with_dump, seed % 4 < 2);
    const auto lane = memory_lane_of(t, 0);
    const auto events = t.memory.lane(lane);
    const bool two_step = true; // the history has free_requested events

    allocator_state reference;
    std::size_t mismatches = 0;
    if (with_dump) {
      reference = *t.final_allocator_state;
      for (std::size_t i = events.size(); i-- > 0;)
        mismatches += undo_memory_event(reference, events[i], two_step) ? 0 : 1;
    }
    reference.time = events.front().time;
    std::size_t start_mismatches = 0;
    ASSERT_EQ(initial_allocator_state(t, lane, &start_mismatches), reference) << "seed " << seed;
    EXPECT_EQ(start_mismatches, mismatches) << "seed " << seed;

    const allocator_replay replay(t, lane, 256);
    replay_cursor cursor(replay);
    std::size_t reals_seen = 0, implicit_seen = 0;
    for (std::size_t i = 0; i <= events.size(); ++i) {
      if (i % 89 == 0 || i == events.size()) {
        ASSERT_EQ(replay.state_at(i), reference) << "seed " << seed << " event " << i;
        ASSERT_EQ(allocator_state_after(t, lane, i), reference)
            << "seed " << seed << " event " << i;
        ASSERT_EQ(cursor.seek(i), reference) << "seed " << seed << " event " << i;
      }
      for (const auto& seg : reference.segments)
        ++(seg.pool == implicit_pool ? implicit_seen : reals_seen);
      if (i < events.size())
        mismatches += apply_memory_event(reference, events[i]) ? 0 : 1;
    }
    EXPECT_EQ(replay.mismatches(), mismatches) << "seed " << seed;
    EXPECT_GT(reals_seen, 1000u) << "seed " << seed << ": real segments live through the history";
    EXPECT_GT(implicit_seen, 1000u) << "seed " << seed << ": implicit blocks live beside them";
  }
}

TEST(ReplayState, MixedLaneStatesEqualTheVectorReplay) {
  check_mixed_lane_states();
}

void check_mixed_lane_series() {
  for (std::uint64_t seed = 51; seed <= 54 && !testing::Test::HasFatalFailure(); ++seed) {
    const auto t = mixed_history(seed, 3000, seed % 2 == 0, false);
    const auto lane = memory_lane_of(t, 0);
    const auto events = t.memory.lane(lane);
    const auto series = memory_series_of(t, lane);
    ASSERT_EQ(series.samples.size(), events.size() + 1);
    allocator_state s = initial_allocator_state(t, lane);
    std::int64_t reserved_seen = 0;
    for (std::size_t i = 0; i <= events.size(); ++i) {
      const auto f = figures_of(s);
      ASSERT_EQ(series.samples[i].allocated, f.allocated) << "seed " << seed << " event " << i;
      ASSERT_EQ(series.samples[i].requested, f.requested) << "seed " << seed << " event " << i;
      ASSERT_EQ(series.samples[i].reserved, f.reserved) << "seed " << seed << " event " << i;
      reserved_seen = std::max(reserved_seen, f.reserved);
      if (i < events.size())
        apply_memory_event(s, events[i]);
    }
    EXPECT_GE(reserved_seen, 4 * (64 << 10)) << "seed " << seed;
  }
}

TEST(ReplayState, MixedLaneSeriesEqualTheStatesTotals) {
  check_mixed_lane_series();
}

// The map keeps a segment of many blocks as fragments (a block made or dropped moved every later
// one of a 160,000-block vector). With fragments of one to three blocks every segment of the
// histories above is cut, joined and cut again as its blocks change: the states, the series
// and the mismatches stay the vector replay's.
TEST(ReplayState, SegmentsKeptAsFragmentsReplayAsWholeOnes) {
  for (const std::size_t blocks : {1, 2, 3}) {
    SCOPED_TRACE("fragments of " + std::to_string(blocks) + " blocks");
    const auto was = detail::replay_fragment_blocks.exchange(blocks);
    check_mixed_lane_states();
    check_mixed_lane_series();
    // The histories without overlapping segments are replayed in fragments indeed.
    const auto t = mixed_history(43, 3000, false, false);
    const auto events = t.memory.lane(memory_lane_of(t, 0));
    detail::replay_state r(allocator_state{}, 0);
    std::size_t most = 0;
    for (const auto& e : events) {
      r.step(e, false, true);
      most = std::max(most, r.fragment_count());
    }
    EXPECT_GE(most, 4u);
    detail::replay_fragment_blocks = was;
  }
}

// A lane with one real segment: the segment's blocks count, the implicit ones beside it too.
// Its series sums the blocks around each event, which assumes segments that do not overlap.
TEST(ReplayState, ARealSegmentBesideImplicitBlocks) {
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

// A search answers again for the addresses up to the next segment's (replay_state::take_out):
// events that come back to a segment, to the gap above it, and to segments made and dropped in
// that gap, step for step as the vector replay goes; and a copy taken halfway replays on its own.
TEST(ReplayState, SearchesAgainAsSegmentsComeAndGo) {
  constexpr std::uint64_t base = 0x7f0000000000, mib = 1 << 20;
  trace t;
  const auto lane = t.lanes.memory(0);
  const auto add = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    memory_event e;
    e.time = static_cast<std::int64_t>(t.memory.size() + 1);
    e.lane = lane;
    e.action = action;
    e.address = address;
    e.size = size;
    t.memory.push_back(e);
  };
  using enum memory_action;
  add(segment_alloc, base, 2 * mib);
  add(segment_alloc, base + 16 * mib, 2 * mib);
  for (int round = 0; round < 3; ++round) {
    add(alloc, base + 4096, 512);                // in the first segment
    add(alloc, base + 8 * mib, 4096);            // in the gap: a block of its own
    add(alloc, base + 16 * mib + 8192, 1024);    // in the last segment
    add(free_completed, base + 8 * mib, 4096);   // the gap again
    add(segment_alloc, base + 8 * mib, 2 * mib); // a segment made in the gap ...
    add(alloc, base + 8 * mib + 512, 512);       // ... and searched in
    add(alloc, base + 2 * mib + 64, 64);         // between the first two segments
    add(free_completed, base + 4096, 512);
    add(free_completed, base + 8 * mib + 512, 512);
    add(segment_free, base + 8 * mib, 2 * mib); // dropped
    add(free_completed, base + 2 * mib + 64, 64);
    add(alloc, base + 8 * mib + 512, 512); // where it was: a block of its own again
    add(free_completed, base + 8 * mib + 512, 512);
    add(free_completed, base + 16 * mib + 8192, 1024);
  }
  t.finalize();
  const auto events = t.memory.lane(memory_lane_of(t, 0));

  allocator_state reference;
  detail::replay_state r(allocator_state{}, 0);
  std::optional<detail::replay_state> copy;
  std::size_t copy_at = events.size() / 2;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i == copy_at) {
      copy.emplace(r);
      ASSERT_EQ(copy->state(), r.state()) << "a copy, its time included";
    }
    const bool matched = apply_memory_event(reference, events[i]);
    EXPECT_EQ(r.step(events[i], false, false), matched) << "event " << i;
    if (copy)
      copy->step(events[i], false, false);
    ASSERT_EQ(r.state().segments, reference.segments) << "event " << i;
  }
  EXPECT_EQ(std::move(*copy).take().segments, reference.segments);
  const auto series = memory_series_of(t, memory_lane_of(t, 0));
  EXPECT_EQ(series.samples.back().reserved, 4 * static_cast<std::int64_t>(mib));
  EXPECT_EQ(series.samples.back().allocated, 0);
}

// An expandable segment grows while it holds blocks: pages mapped at its end grow its last
// fragment only, and pages unmapped from its end shrink it (backward, the mappings undone), so
// the segment stays in fragments all along; every state is the vector replay's.
TEST(ReplayState, AnExpandableSegmentGrowsInFragments) {
  const auto was = detail::replay_fragment_blocks.exchange(2);
  constexpr std::uint64_t base = std::uint64_t{1} << 40, mib = std::uint64_t{1} << 20;
  std::vector<memory_event> events;
  const auto push = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    events.push_back({.time = static_cast<std::int64_t>(events.size()),
                      .action = action,
                      .address = address,
                      .size = size});
  };
  push(memory_action::segment_map, base, 8 * mib);
  for (std::uint64_t i = 0; i < 200; ++i) {
    push(memory_action::alloc, base + i * 8 * mib, 2 * mib);
    push(memory_action::segment_map, base + (i + 1) * 8 * mib, 8 * mib);
  }
  allocator_state reference;
  detail::replay_state r(allocator_state{}, 0);
  std::size_t fragments = 0;
  for (const auto& e : events) {
    ASSERT_TRUE(apply_memory_event(reference, e));
    ASSERT_TRUE(r.step(e, false, false));
    fragments = std::max(fragments, r.fragment_count());
  }
  EXPECT_GT(fragments, 100u);
  ASSERT_EQ(r.state().segments, reference.segments);
  // Backward from the end: each mapping undone unmaps the pages at the end.
  detail::replay_state back(reference, 0);
  for (std::size_t i = events.size(); i-- > 0;) {
    ASSERT_TRUE(undo_memory_event(reference, events[i], false)) << i;
    ASSERT_TRUE(back.step(events[i], true, false)) << i;
    if (i % 37 == 0) {
      ASSERT_EQ(back.state().segments, reference.segments) << i;
    }
  }
  EXPECT_TRUE(back.state().segments.empty());
  detail::replay_fragment_blocks = was;
}

// What a map keyed by address cannot hold is left out of the replay: events of another device
// and segment events of no bytes change nothing and are counted as not matching, and the start's
// segments of no bytes, of another device or at an address taken stay as they are. The states
// are those of the history without them (each was quadratic on the state's vector).
TEST(ReplayState, WhatTheMapCannotHoldIsLeftOut) {
  const auto clean = mixed_history(61, 3000, false, false);
  const auto events = clean.memory.lane(memory_lane_of(clean, 0));
  std::vector<memory_event> damaged;
  std::size_t left_out = 0;
  for (std::size_t i = 0; i < events.size(); ++i) {
    damaged.push_back(events[i]);
    auto odd = events[i];
    if (i % 7 == 0) {
      odd.device = 1;
      left_out += odd.action != memory_action::oom ? 1 : 0;
    } else if (i % 11 == 0) {
      odd.action = i % 22 == 0 ? memory_action::segment_alloc : memory_action::segment_free;
      odd.size = 0;
      ++left_out;
    } else {
      continue;
    }
    damaged.push_back(odd);
  }
  ASSERT_GT(left_out, 500u);
  // The start: a segment of no bytes, one of device 1, and two at one address.
  allocator_state start;
  const auto segment_of = [](std::int32_t device, std::uint64_t address, std::uint64_t size) {
    segment s;
    s.device = device;
    s.address = address;
    s.total_size = size;
    s.blocks.push_back({address, size, 0, block_state::inactive, no_stack});
    return s;
  };
  constexpr std::uint64_t far = std::uint64_t{1} << 44;
  start.segments = {segment_of(0, far, 0), segment_of(0, far + 4096, 4096),
                    segment_of(0, far + 4096, 8192), segment_of(1, 4096, 4096)};
  allocator_state reference_start;
  reference_start.segments = {start.segments[1]};

  detail::replay_state r(start, 0), reference(reference_start, 0);
  std::size_t mismatches = 0, reference_mismatches = 0;
  for (const auto& e : damaged)
    mismatches += r.step(e, false, true) ? 0 : 1;
  for (const auto& e : events)
    reference_mismatches += reference.step(e, false, true) ? 0 : 1;
  EXPECT_EQ(mismatches, reference_mismatches + left_out);
  EXPECT_EQ(r.segment_count(), reference.segment_count() + 3);
  auto got = std::move(r).take().segments;
  const auto expected = std::move(reference).take().segments;
  // The three left out, in (device, address) order, the one of device 1 last.
  ASSERT_EQ(got.size(), expected.size() + 3);
  EXPECT_EQ(got.back(), start.segments[3]);
  const auto zero = std::ranges::find(got, start.segments[0]);
  ASSERT_NE(zero, got.end());
  got.erase(zero);
  const auto second = std::ranges::find(got, start.segments[2]);
  ASSERT_NE(second, got.end());
  got.erase(second);
  got.pop_back();
  EXPECT_EQ(got, expected);
}

// A dump's segment whose blocks leave its end uncovered (a damaged snapshot): an allocation
// there finds no block, matches nothing and changes no total, as block_at finds none (the
// block before it, allocated, is not its block).
TEST(ReplayState, AnEventPastTheLastBlockChangesNothing) {
  constexpr std::uint64_t base = 0x7f0000000000;
  trace t;
  const auto lane = t.lanes.memory(0);
  memory_event e;
  e.time = 1000;
  e.lane = lane;
  e.action = memory_action::alloc;
  e.address = base + 0x2000;
  e.size = 512;
  t.memory.push_back(e);
  allocator_state dump;
  segment seg;
  seg.address = base;
  seg.total_size = 0x4000;
  seg.type = segment_type::large;
  seg.blocks = {{base, 0x1000, 0x1000, block_state::active_allocated, no_stack}};
  dump.segments = {seg};
  t.final_allocator_state = dump;
  t.finalize();
  std::size_t mismatches = 0;
  std::vector<memory_sample> samples;
  for_each_memory_sample(
      t, lane, [&](const memory_sample& s) { samples.push_back(s); }, &mismatches);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].allocated, 0x1000);
  EXPECT_EQ(samples[1].allocated, 0x1000);
  EXPECT_EQ(samples[1].requested, 0x1000);
  EXPECT_EQ(mismatches, 1u);
}

} // namespace
