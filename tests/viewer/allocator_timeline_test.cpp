// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/viewer/allocator_timeline.hpp>
#include <tensordiag/viewer/synthetic_snapshot.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace {

using namespace tdiag::view;

TEST(AllocatorTimeline, ReplayAtRandomTimesEqualsFromScratch) {
  const auto t = make_snapshot_trace(20'000, 3);
  allocator_timeline_options o;
  o.keyframe_interval = 512;
  auto tl = allocator_timeline::build(t, 0, o);
  ASSERT_GT(tl.event_count(), 19'000u);
  EXPECT_GT(tl.keyframe_count(), 30u);
  std::mt19937_64 rng(42);
  for (int i = 0; i < 60; ++i) {
    const std::size_t n = rng() % (tl.event_count() + 1);
    const auto scratch = tl.replay_from_scratch(n);
    EXPECT_EQ(tl.state_at(n), scratch) << "n=" << n;
  }
  // Stepping forward and back, as scrubbing does.
  for (std::size_t n = 5000; n < 5100; ++n)
    ASSERT_EQ(tl.state_at(n), tl.replay_from_scratch(n));
  for (std::size_t n = 9000; n > 8900; --n)
    ASSERT_EQ(tl.state_at(n), tl.replay_from_scratch(n));
}

TEST(AllocatorTimeline, BackwardDerivationReachesTheFinalState) {
  // The generator's events are consistent, so undoing them all from the final state and
  // replaying them all again must land on the final state exactly.
  const auto t = make_snapshot_trace(8000, 9);
  auto tl = allocator_timeline::build(t, 0);
  auto final_state = *t.final_allocator_state;
  const auto& replayed = tl.state_at(tl.event_count());
  EXPECT_EQ(replayed.segments, final_state.segments);
  EXPECT_TRUE(tl.initial_state().segments.empty());
}

TEST(AllocatorTimeline, AdaptiveKeyframesStayWithinBudget) {
  const auto t = make_snapshot_trace(30'000, 5);
  allocator_timeline_options o;
  o.keyframe_budget_bytes = 1 << 20;
  auto tl = allocator_timeline::build(t, 0, o);
  EXPECT_GT(tl.keyframe_interval(), 64u);
  for (std::size_t n : {0ul, 1ul, 12'345ul, tl.event_count()})
    EXPECT_EQ(tl.state_at(n), tl.replay_from_scratch(n));
}

TEST(AllocatorTimeline, EventsUntilTime) {
  const auto t = make_snapshot_trace(1000, 1);
  auto tl = allocator_timeline::build(t, 0);
  EXPECT_EQ(tl.events_until(tl.event(0).time - 1), 0u);
  EXPECT_EQ(tl.events_until(tl.event(tl.event_count() - 1).time), tl.event_count());
  const auto mid = tl.event(500).time;
  const std::size_t n = tl.events_until(mid);
  EXPECT_GE(n, 501u);
  EXPECT_EQ(tl.event(n - 1).time, mid);
}

TEST(AllocatorTimeline, RealSnapshotReplaysConsistently) {
  const std::filesystem::path path = TDIAG_SHARED_DIR "/traces/train_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared trace not found: " << path;
  auto loaded = tdiag::trace::load_trace(path);
  auto tl = allocator_timeline::build(loaded.trace, 0);
  ASSERT_GT(tl.event_count(), 5000u);
  // The snapshot's final segments are reproduced by replaying from the derived start.
  ASSERT_TRUE(loaded.trace.final_allocator_state.has_value());
  auto expected = *loaded.trace.final_allocator_state;
  const auto& got = tl.state_at(tl.event_count());
  EXPECT_EQ(got.reserved_bytes(0), expected.reserved_bytes(0));
  EXPECT_EQ(got.segments.size(), expected.segments.size());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    const std::size_t n = rng() % (tl.event_count() + 1);
    EXPECT_EQ(tl.state_at(n), tl.replay_from_scratch(n));
  }
}

} // namespace
