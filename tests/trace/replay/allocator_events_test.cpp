// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expandable segments as PyTorch writes them: pages mapped at the end of a run grow it, free
// pages unmapped anywhere in it (empty_cache, an OOM's retry) cut it, and the dump lists each
// mapped run as a segment. The replay cuts and joins the runs so, forward and undone, and a
// history that ends in such a dump replays back to its start with no mismatch.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>

#include <gtest/gtest.h>

#include <vector>

#include "replay/src/replay_state.hpp"

namespace {

using namespace tdiag::trace;

constexpr std::uint64_t mib = std::uint64_t{1} << 20, base = 0x7f0000000000;

memory_event make_event(memory_action action, std::uint64_t address, std::uint64_t size) {
  memory_event e;
  e.action = action;
  e.address = address;
  e.size = size;
  return e;
}

// An expandable segment of 8 MiB mapped in two steps, then 1 MiB blocks allocated at 0, 1, 5 and
// 7 MiB: [2, 5) and [6, 7) MiB are free.
std::vector<memory_event> eight_mib_history() {
  std::vector<memory_event> h{make_event(memory_action::segment_map, base, 4 * mib),
                              make_event(memory_action::segment_map, base + 4 * mib, 4 * mib)};
  for (const std::uint64_t at : {0, 1, 5, 7})
    h.push_back(make_event(memory_action::alloc, base + at * mib, mib));
  return h;
}

allocator_state eight_mib() {
  allocator_state s;
  for (const auto& e : eight_mib_history())
    EXPECT_TRUE(apply_memory_event(s, e));
  EXPECT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.reserved_bytes(), 8 * mib);
  return s;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> runs(const allocator_state& s) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const auto& seg : s.segments)
    out.emplace_back((seg.address - base) / mib, seg.total_size / mib);
  return out;
}

using run_list = std::vector<std::pair<std::uint64_t, std::uint64_t>>;

TEST(AllocatorEvents, FreePagesUnmappedInsideASegmentSplitItAndMappedAgainJoinIt) {
  const auto whole = eight_mib();
  for (const auto& [at, size, expected] :
       {std::tuple{3, 1, run_list{{0, 3}, {4, 4}}}, std::tuple{2, 3, run_list{{0, 2}, {5, 3}}},
        std::tuple{6, 1, run_list{{0, 6}, {7, 1}}}}) {
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

TEST(AllocatorEvents, FreePagesUnmappedAtASegmentsStartMoveIt) {
  auto whole = eight_mib();
  for (const std::uint64_t at : {0, 1})
    ASSERT_TRUE(
        apply_memory_event(whole, make_event(memory_action::free_completed, base + at * mib, mib)));
  auto s = whole;
  const auto pages = make_event(memory_action::segment_unmap, base, 2 * mib);
  ASSERT_TRUE(apply_memory_event(s, pages));
  EXPECT_EQ(runs(s), (run_list{{2, 6}}));
  ASSERT_TRUE(undo_memory_event(s, pages));
  EXPECT_EQ(s, whole);
}

TEST(AllocatorEvents, OnlyFreePagesAreUnmapped) {
  const auto whole = eight_mib();
  // Over an allocated block, over a free block and the next, past the segment's end, and where
  // no segment is.
  for (const auto& [at, size] :
       {std::pair{4.5, 1.0}, std::pair{6.0, 2.0}, std::pair{7.5, 1.0}, std::pair{9.0, 1.0}}) {
    auto s = whole;
    EXPECT_FALSE(apply_memory_event(s, make_event(memory_action::segment_unmap,
                                                  base + static_cast<std::uint64_t>(at * mib),
                                                  static_cast<std::uint64_t>(size * mib))))
        << at;
    EXPECT_EQ(s, whole) << at;
  }
}

// Pages mapped at a run's end join only the expandable segment that starts where they end.
TEST(AllocatorEvents, PagesMappedBeforeARegularSegmentDoNotJoinIt) {
  allocator_state s;
  ASSERT_TRUE(
      apply_memory_event(s, make_event(memory_action::segment_alloc, base + 4 * mib, 2 * mib)));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, base, 4 * mib)));
  EXPECT_EQ(runs(s), (run_list{{0, 4}, {4, 2}}));
}

// A history that maps a segment, allocates, frees and unmaps runs out of its middle, against the
// dump PyTorch would write at its end (each mapped run a segment): the map replay, whole or in
// fragments, derives the start back from the dump with no mismatch and steps as the state's own
// events do, and the reserved bytes fall by the pages unmapped.
TEST(AllocatorEvents, AHistoryEndingInRunsReplaysBackToItsStart) {
  auto history = eight_mib_history();
  history.push_back(make_event(memory_action::free_completed, base + 5 * mib, mib));
  history.push_back(make_event(memory_action::segment_unmap, base + 3 * mib, 4 * mib));
  history.push_back(make_event(memory_action::segment_unmap, base + 2 * mib, mib));
  trace t;
  const auto lane = t.lanes.memory(0);
  for (std::size_t i = 0; i < history.size(); ++i) {
    history[i].lane = lane;
    history[i].time = static_cast<std::int64_t>(i + 1) * 1000;
    t.memory.push_back(history[i]);
  }
  t.finalize();
  allocator_state end;
  for (const auto& e : history)
    ASSERT_TRUE(apply_memory_event(end, e));
  ASSERT_EQ(runs(end), (run_list{{0, 2}, {7, 1}}));
  t.final_allocator_state = end;

  for (const std::size_t blocks : {256, 1}) {
    SCOPED_TRACE(testing::Message() << "fragments of " << blocks << " blocks");
    const auto was = tdiag::trace::detail::replay_fragment_blocks.exchange(blocks);
    std::size_t mismatches = 1;
    const auto start = initial_allocator_state(t, memory_lane_of(t, 0), &mismatches);
    EXPECT_EQ(mismatches, 0u);
    EXPECT_TRUE(start.segments.empty());
    tdiag::trace::detail::replay_state r(start, 0);
    allocator_state reference;
    for (const auto& e : history) {
      EXPECT_TRUE(r.step(e, false, false));
      apply_memory_event(reference, e);
      reference.time = e.time;
      EXPECT_EQ(r.state(), reference);
    }
    const auto series = memory_series_of(t, memory_lane_of(t, 0));
    ASSERT_EQ(series.samples.size(), history.size() + 1);
    EXPECT_EQ(series.samples[history.size() - 2].reserved, static_cast<std::int64_t>(8 * mib));
    EXPECT_EQ(series.samples[history.size() - 1].reserved, static_cast<std::int64_t>(4 * mib));
    EXPECT_EQ(series.samples.back().reserved, static_cast<std::int64_t>(3 * mib));
    tdiag::trace::detail::replay_fragment_blocks = was;
  }
}

} // namespace
