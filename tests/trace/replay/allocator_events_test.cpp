// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expandable segments as PyTorch keeps them (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True):
// pages mapped grow the run that ends where they start and join the expandable run that starts
// where they end; free pages unmapped anywhere in a run (torch.cuda.empty_cache(), an
// out-of-memory retry) shrink it or cut it in two, and the dump lists each mapped run as a
// segment. The vector replay (apply_memory_event / undo_memory_event) does so, the map replay
// (replay_state, its segments whole or in fragments) follows it event by event, and the real
// snapshots of tests/data/trace/expandable (scripts/gpu/expandable-snapshots.py on an H100,
// PyTorch 2.11) replay from their dumps back to their start and forward again with no mismatch.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/splitmix.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <ostream>
#include <tuple>
#include <vector>

#include "replay/src/replay_state.hpp"

namespace tdiag::trace {
// A segment as a failed comparison prints it: [address, +size) expandable, stack, its blocks.
void PrintTo(const segment& s, std::ostream* os) {
  *os << std::hex << "[0x" << s.address << " +0x" << s.total_size << (s.is_expandable ? " exp" : "")
      << std::dec << " stack " << s.stack << ":";
  for (const auto& b : s.blocks)
    *os << std::hex << " 0x" << b.address << "+0x" << b.size << std::dec << "/"
        << static_cast<int>(b.state);
  *os << "]";
}
} // namespace tdiag::trace

namespace {

using namespace tdiag::trace;

constexpr std::uint64_t mib = std::uint64_t{1} << 20, base = 0x7f0000000000;

memory_event make_event(memory_action action, std::uint64_t address, std::uint64_t size,
                        stack_id stack = no_stack) {
  return {.action = action, .stack = stack, .address = address, .size = size};
}

// An expandable segment of 8 MiB mapped in two steps (stacks 11 and 12), then 1 MiB blocks
// allocated at 0, 1, 5 and 7 MiB: [2, 5) and [6, 7) MiB are free.
allocator_state eight_mib() {
  allocator_state s;
  EXPECT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base, 4 * mib, 11)));
  EXPECT_TRUE(
      apply_memory_event(s, make_event(memory_action::segment_map, base + 4 * mib, 4 * mib, 12)));
  for (const std::uint64_t at : {0, 1, 5, 7})
    EXPECT_TRUE(apply_memory_event(s, make_event(memory_action::alloc, base + at * mib, mib)));
  EXPECT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.reserved_bytes(), 8 * mib);
  return s;
}

// Each segment as (start, size, stack), in MiB from `base`.
using run_list = std::vector<std::tuple<std::uint64_t, std::uint64_t, stack_id>>;
run_list runs(const allocator_state& s) {
  run_list out;
  for (const auto& seg : s.segments)
    out.emplace_back((seg.address - base) / mib, seg.total_size / mib, seg.stack);
  return out;
}

TEST(AllocatorEvents, FreePagesUnmappedInsideAnExpandableSegmentCutIt) {
  const auto whole = eight_mib();
  for (const auto& [at, size, expected] :
       {std::tuple{3, 1, run_list{{0, 3, 11}, {4, 4, no_stack}}},
        std::tuple{2, 3, run_list{{0, 2, 11}, {5, 3, no_stack}}},
        std::tuple{6, 1, run_list{{0, 6, 11}, {7, 1, no_stack}}}}) {
    SCOPED_TRACE(testing::Message() << "unmap [" << at << ", " << at + size << ") MiB");
    auto s = whole;
    const auto pages = make_event(memory_action::segment_unmap, base + at * mib, size * mib);
    ASSERT_TRUE(apply_memory_event(s, pages));
    EXPECT_EQ(runs(s), expected);
    EXPECT_EQ(s.reserved_bytes(), (8 - size) * mib);
    EXPECT_EQ(s.allocated_bytes(), 4 * mib);
    for (const auto& seg : s.segments) {
      EXPECT_TRUE(seg.is_expandable);
      EXPECT_EQ(seg.blocks.front().address, seg.address);
      EXPECT_EQ(seg.blocks.back().address + seg.blocks.back().size, seg.address + seg.total_size);
    }
    // Undone, or the same pages mapped again: the one segment as it was.
    auto undone = s;
    ASSERT_TRUE(undo_memory_event(undone, pages));
    EXPECT_EQ(undone, whole);
    ASSERT_TRUE(
        apply_memory_event(s, make_event(memory_action::segment_map, pages.address, pages.size)));
    EXPECT_EQ(s, whole);
  }
}

// The run left after pages unmapped at its start has no stack (PyTorch lists it so); pages mapped
// in front of a run start it, with their stack.
TEST(AllocatorEvents, FreePagesUnmappedAtASegmentsStartMoveIt) {
  auto whole = eight_mib();
  for (const std::uint64_t at : {0, 1})
    ASSERT_TRUE(
        apply_memory_event(whole, make_event(memory_action::free_completed, base + at * mib, mib)));
  auto s = whole;
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_unmap, base, 2 * mib)));
  EXPECT_EQ(runs(s), (run_list{{2, 6, no_stack}}));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base, mib, 13)));
  EXPECT_EQ(runs(s), (run_list{{0, 1, 13}, {2, 6, no_stack}}));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base + mib, mib, 14)));
  EXPECT_EQ(runs(s), (run_list{{0, 8, 13}}));
  EXPECT_EQ(s.segments.front().blocks, whole.segments.front().blocks);
}

TEST(AllocatorEvents, OnlyFreePagesAreUnmapped) {
  const auto whole = eight_mib();
  // Over an allocated block, over a free block and the next, past the segment's end, where no
  // segment is, none, and past 2^64.
  for (const auto& [at, size] : {std::pair{4.5, 1.0}, std::pair{6.0, 2.0}, std::pair{7.5, 1.0},
                                 std::pair{9.0, 1.0}, std::pair{3.0, 0.0}}) {
    auto s = whole;
    EXPECT_FALSE(apply_memory_event(s, make_event(memory_action::segment_unmap,
                                                  base + static_cast<std::uint64_t>(at * mib),
                                                  static_cast<std::uint64_t>(size * mib))))
        << at;
    EXPECT_EQ(s, whole) << at;
  }
  auto s = whole;
  EXPECT_FALSE(
      apply_memory_event(s, make_event(memory_action::segment_unmap, base + 3 * mib, ~base)));
  EXPECT_EQ(s, whole);
}

// A segment that is not expandable (cudaMalloc) gives pages back only at its end, and pages
// mapped before it do not join it.
TEST(AllocatorEvents, ARegularSegmentIsNeitherCutNorJoined) {
  allocator_state s;
  ASSERT_TRUE(
      apply_memory_event(s, make_event(memory_action::segment_alloc, base + 4 * mib, 4 * mib)));
  const auto alone = s;
  EXPECT_FALSE(
      apply_memory_event(s, make_event(memory_action::segment_unmap, base + 5 * mib, mib)));
  EXPECT_FALSE(
      apply_memory_event(s, make_event(memory_action::segment_unmap, base + 4 * mib, mib)));
  EXPECT_EQ(s, alone);
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_unmap, base + 7 * mib, mib)));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base, 4 * mib)));
  EXPECT_EQ(runs(s), (run_list{{0, 4, no_stack}, {4, 3, no_stack}}));
}

// Pages mapped over a segment that starts inside them (damaged input) change nothing.
TEST(AllocatorEvents, PagesMappedOverASegmentAreRefused) {
  auto s = eight_mib();
  ASSERT_TRUE(
      apply_memory_event(s, make_event(memory_action::segment_unmap, base + 2 * mib, 3 * mib)));
  const auto cut = s;
  EXPECT_FALSE(
      apply_memory_event(s, make_event(memory_action::segment_map, base + 2 * mib, 4 * mib)));
  EXPECT_FALSE(apply_memory_event(s, make_event(memory_action::segment_map, base - mib, 2 * mib)));
  EXPECT_FALSE(apply_memory_event(s, make_event(memory_action::segment_map, base + 3 * mib, 0)));
  EXPECT_EQ(s, cut);
}

// The map replay's fragments of a segment keep its kind: pages mapped between a 4 MiB run (large)
// and a 2 MiB one (small) of 600 blocks make one segment, and the run after a later cut inside
// the second is the joined segment's kind, as in the vector (it was the second run's, once).
TEST(AllocatorEvents, ARunCutFromAJoinedSegmentHasItsKind) {
  constexpr std::uint64_t x = base + 64 * mib;
  std::vector<memory_event> events{make_event(memory_action::segment_map, x - 8 * mib, 4 * mib),
                                   make_event(memory_action::segment_map, x, 2 * mib)};
  for (std::uint64_t i = 0; i < 600; ++i)
    events.push_back(make_event(memory_action::alloc, x + i * 512, 512));
  events.push_back(make_event(memory_action::free_completed, x + 550 * 512, 512));
  events.push_back(make_event(memory_action::segment_map, x - 4 * mib, 4 * mib));
  events.push_back(make_event(memory_action::segment_unmap, x + 550 * 512, 512));
  allocator_state vec;
  tdiag::trace::detail::replay_state map(allocator_state{}, 0);
  for (const auto& e : events) {
    ASSERT_TRUE(apply_memory_event(vec, e));
    ASSERT_TRUE(map.step(e, false, true));
  }
  ASSERT_EQ(vec.segments.size(), 2u);
  EXPECT_EQ(vec.segments[1].type, segment_type::large);
  EXPECT_EQ(map.state().segments, vec.segments);
}

// A segment another starts inside (damaged input) is neither cut, nor moved past it, nor
// joined to the run after it: the state stays in address order, and the map replay agrees.
TEST(AllocatorEvents, ASegmentAnotherStartsInsideIsNeitherCutNorJoined) {
  allocator_state start;
  ASSERT_TRUE(apply_memory_event(start, make_event(memory_action::segment_map, base, 8 * mib)));
  segment inside = start.segments.front();
  inside.address = base + 2 * mib;
  inside.total_size = mib;
  inside.blocks = {{inside.address, mib, 0, block_state::inactive, no_stack}};
  start.segments.push_back(inside);
  ASSERT_TRUE(
      apply_memory_event(start, make_event(memory_action::segment_map, base + 8 * mib, mib)));
  ASSERT_EQ(start.segments.size(), 3u);
  for (const auto& e : {make_event(memory_action::segment_unmap, base, mib),
                        make_event(memory_action::segment_unmap, base + 4 * mib, mib),
                        make_event(memory_action::segment_map, base - mib, mib)}) {
    auto vec = start;
    tdiag::trace::detail::replay_state map(start, 0);
    const bool matched = apply_memory_event(vec, e);
    EXPECT_EQ(map.step(e, false, true), matched);
    EXPECT_TRUE(std::ranges::is_sorted(vec.segments, {}, &segment::address));
    EXPECT_EQ(map.state().segments, vec.segments);
    EXPECT_EQ(vec.segments.size(), e.action == memory_action::segment_map ? 4u : 3u);
  }
}

// Blocks that stop short of their segment's end (damaged input): pages unmapped up to the last
// one's end would leave bytes of the segment in no run, and are refused.
TEST(AllocatorEvents, PagesUnmappedBeforeAGapAreRefused) {
  allocator_state s;
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base, 4 * mib)));
  s.segments.front().blocks.front().size = 3 * mib;
  const auto gap = s;
  EXPECT_FALSE(
      apply_memory_event(s, make_event(memory_action::segment_unmap, base + mib, 2 * mib)));
  EXPECT_EQ(s, gap);
  EXPECT_TRUE(apply_memory_event(s, make_event(memory_action::segment_unmap, base + mib, mib)));
}

// A segment freed after pages grew it past the size its event gives: the effect on the totals
// counts the blocks in the grown part too (it counted the event's range only).
TEST(AllocatorEvents, AFreedSegmentsEffectCountsItsGrownPart) {
  allocator_state vec;
  tdiag::trace::detail::replay_state map(allocator_state{}, 0);
  for (const auto& e : {make_event(memory_action::segment_alloc, base, 4 * mib),
                        make_event(memory_action::segment_map, base + 4 * mib, 4 * mib),
                        make_event(memory_action::alloc, base + 6 * mib, mib),
                        make_event(memory_action::segment_free, base, 4 * mib)}) {
    const auto before = tdiag::trace::detail::totals_of(vec, 0);
    tdiag::trace::detail::replay_totals effect;
    EXPECT_EQ(map.step(e, false, true, &effect), apply_memory_event(vec, e));
    const auto after = tdiag::trace::detail::totals_of(vec, 0);
    EXPECT_EQ(effect.allocated, after.allocated - before.allocated);
    EXPECT_EQ(effect.reserved, after.reserved - before.reserved);
  }
  EXPECT_TRUE(vec.segments.empty());
}

// A history on expandable segments in four regions of 64 pages (4 KiB here), each event chosen
// from the state the vector replay is in: pages mapped into a gap (after a run, before one,
// between two, alone), free pages unmapped (all of a run, its start, its end, inside it), blocks
// allocated in free space and freed; and some that do not match (pages mapped over a run,
// unmapped over an allocation).
std::vector<memory_event> expandable_history(std::uint64_t seed, std::size_t n) {
  constexpr std::uint64_t page = 4096, region = 64 * page, stride = 2 * region;
  splitmix64 rng{seed};
  allocator_state s;
  std::vector<memory_event> out;
  const auto push = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    auto e = make_event(action, address, size, static_cast<stack_id>(1 + rng.below(4)));
    e.time = static_cast<std::int64_t>(out.size() + 1);
    (void)apply_memory_event(s, e);
    out.push_back(e);
  };
  // A page-aligned part of [lo, hi): all of it, its start, its end or its middle.
  const auto part = [&](std::uint64_t lo, std::uint64_t hi) {
    const auto pages = (hi - lo) / page, from = rng.below(pages),
               to = from + 1 + rng.below(pages - from);
    switch (rng.below(4)) {
    case 0:
      return std::pair{lo, hi};
    case 1:
      return std::pair{lo, lo + to * page};
    case 2:
      return std::pair{lo + from * page, hi};
    default:
      return std::pair{lo + from * page, lo + to * page};
    }
  };
  while (out.size() < n) {
    const auto lo = base + rng.below(4) * stride, hi = lo + region;
    std::vector<const segment*> runs;
    std::vector<const block*> free, allocated;
    for (const auto& seg : s.segments) {
      if (seg.address < lo || seg.address >= hi)
        continue;
      runs.push_back(&seg);
      for (const auto& b : seg.blocks)
        (b.state == block_state::inactive ? free : allocated).push_back(&b);
    }
    const auto pick = rng.below(20);
    if (pick < 5) { // pages mapped into a gap (over a run, now and then)
      std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
      auto at = lo;
      for (const auto* seg : runs) {
        if (seg->address > at)
          gaps.emplace_back(at, seg->address);
        at = seg->address + seg->total_size;
      }
      if (at < hi)
        gaps.emplace_back(at, hi);
      if (gaps.empty() || rng.below(10) == 0) {
        push(memory_action::segment_map, lo + rng.below(64) * page, (1 + rng.below(4)) * page);
        continue;
      }
      const auto& gap = gaps[rng.below(gaps.size())];
      const auto [from, to] = part(gap.first, gap.second);
      push(memory_action::segment_map, from, to - from);
    } else if (pick < 9 && !free.empty()) { // free pages unmapped (over more, now and then)
      const auto* b = free[rng.below(free.size())];
      const auto first = (b->address + page - 1) / page * page,
                 last = (b->address + b->size) / page * page;
      if (first >= last || rng.below(10) == 0) {
        push(memory_action::segment_unmap, b->address, b->size + page);
        continue;
      }
      const auto [from, to] = part(first, last);
      push(memory_action::segment_unmap, from, to - from);
    } else if (pick < 15 && !free.empty()) { // a block allocated in free space
      // Inside it (an allocation past its end, now and then).
      const auto* b = free[rng.below(free.size())];
      const auto offset = b->size > 2048 ? rng.below(4) * 512 : 0;
      const auto size = std::array<std::uint64_t, 4>{512, 3000, page, 3 * page}[rng.below(4)];
      push(memory_action::alloc, b->address + offset,
           rng.below(10) == 0 ? size : std::min(size, b->size - offset));
    } else if (!allocated.empty()) { // one freed
      const auto* b = allocated[rng.below(allocated.size())];
      const auto address = b->address, size = b->size;
      push(memory_action::free_requested, address, size);
      push(memory_action::free_completed, address, size);
    }
  }
  return out;
}

// The map replay, its segments whole and in fragments of 1 to 3 blocks (a run cut or joined
// inside, before or after a fragment), gives the vector replay's states, matches and effects on
// the totals, forward and backward.
TEST(AllocatorEvents, CutsAndJoinsReplayInFragmentsAsOnAVector) {
  for (const std::size_t per : {1, 2, 3, 256}) {
    SCOPED_TRACE(testing::Message() << "fragments of " << per << " blocks");
    const auto was = tdiag::trace::detail::replay_fragment_blocks.exchange(per);
    std::size_t cuts = 0, joins = 0, misses = 0, most_fragments = 0;
    for (std::uint64_t seed = 1; seed <= 12 && !testing::Test::HasFatalFailure(); ++seed) {
      SCOPED_TRACE(testing::Message() << "seed " << seed);
      const auto events = expandable_history(seed, 1500);
      allocator_state vec;
      tdiag::trace::detail::replay_state map(allocator_state{}, 0);
      for (std::size_t i = 0; i < events.size(); ++i) {
        const auto& e = events[i];
        const auto before = tdiag::trace::detail::totals_of(vec, 0);
        const auto runs_before = vec.segments.size();
        tdiag::trace::detail::replay_totals effect;
        const bool matched = apply_memory_event(vec, e);
        ASSERT_EQ(map.step(e, false, true, &effect), matched) << "event " << i;
        const auto after = tdiag::trace::detail::totals_of(vec, 0);
        ASSERT_EQ(effect.reserved, after.reserved - before.reserved) << "event " << i;
        ASSERT_EQ(effect.allocated, after.allocated - before.allocated) << "event " << i;
        ASSERT_EQ(effect.requested, after.requested - before.requested) << "event " << i;
        ASSERT_EQ(map.state().segments, vec.segments) << "event " << i;
        cuts += matched && e.action == memory_action::segment_unmap &&
                vec.segments.size() > runs_before;
        joins +=
            matched && e.action == memory_action::segment_map && vec.segments.size() <= runs_before;
        misses += matched ? 0 : 1;
        most_fragments = std::max(most_fragments, map.fragment_count());
      }
      tdiag::trace::detail::replay_state back(vec, 0);
      for (std::size_t i = events.size(); i-- > 0;) {
        const bool matched = undo_memory_event(vec, events[i], true);
        ASSERT_EQ(back.step(events[i], true, true), matched) << "undoing event " << i;
        ASSERT_EQ(back.state().segments, vec.segments) << "undoing event " << i;
      }
    }
    EXPECT_GT(cuts, 300u);
    EXPECT_GT(joins, 300u);
    EXPECT_GT(misses, 100u);
    if (per < 256) {
      EXPECT_GE(most_fragments, 8u);
    }
    tdiag::trace::detail::replay_fragment_blocks = was;
  }
}

// The real snapshots replay back from their dumps and forward again with no mismatch, and end
// where their dumps are. Before runs were cut and joined: 2, 1, 41 and 24 mismatches (middle,
// ends, churn, oom), the reserved bytes of the first three 20, 40 and 60 MiB above their dumps'.
TEST(AllocatorEvents, RealExpandableSnapshotsReplayWithNoMismatch) {
  const auto dir = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/trace/expandable";
  std::size_t files = 0, unmaps = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".pickle")
      continue;
    SCOPED_TRACE(entry.path().filename().string());
    ++files;
    const auto t = load_trace(entry.path()).trace;
    ASSERT_TRUE(t.final_allocator_state.has_value());
    const auto lane = memory_lane_of(t, 0);
    const auto events = t.memory.lane(lane);
    unmaps += static_cast<std::size_t>(
        std::ranges::count(events, memory_action::segment_unmap, &memory_event::action));
    std::size_t back = 0, forward = 0;
    (void)initial_allocator_state(t, lane, &back);
    const auto end = allocator_state_after(t, lane, events.size(), &forward);
    EXPECT_EQ(back, 0u);
    EXPECT_EQ(forward, 0u);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> got, dumped;
    for (const auto& seg : end.segments)
      got.emplace_back(seg.address, seg.total_size);
    for (const auto& seg : t.final_allocator_state->segments)
      dumped.emplace_back(seg.address, seg.total_size);
    EXPECT_EQ(got, dumped);
    EXPECT_EQ(end.allocated_bytes(), t.final_allocator_state->allocated_bytes());
  }
  EXPECT_EQ(files, 5u);
  EXPECT_GE(unmaps, 27u);
}

} // namespace
