// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The allocator view's state comes from a worker thread: whatever the order and pace of the
// requests, what is published is the replay's state at the index it names, with its figures,
// and the last request is the one served. Run under TSan too (TDIAG_SANITIZE=thread).
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/viewer/state_seeker.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <random>

namespace {
using namespace tdiag;

trace::trace two_device_trace() {
  trace::synthetic_options o;
  o.kernels = 4'000;
  o.devices = 2;
  o.allocations_per_100_kernels = 60;
  return trace::make_synthetic_trace(o);
}

TEST(StateSeeker, PublishesTheReplayStateAtTheIndexAskedFor) {
  const auto t = two_device_trace();
  const trace::allocator_replay replay(t, trace::memory_lane_of(t, 0), 64);
  ASSERT_GT(replay.size(), 1000u);
  view::state_seeker seeker(replay);
  EXPECT_EQ(seeker.latest()->index, 0u);
  EXPECT_EQ(seeker.latest()->state, replay.initial_state());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 40; ++i) {
    const std::size_t n = rng() % (replay.size() + 1);
    seeker.request(n);
    seeker.wait();
    const auto shown = seeker.latest();
    ASSERT_EQ(shown->index, n);
    ASSERT_EQ(shown->state, replay.state_at(n)) << "after " << n << " events";
    ASSERT_EQ(shown->figures, shown->state.figures());
  }
  seeker.request(replay.size() + 100); // clamped
  seeker.wait();
  EXPECT_EQ(seeker.latest()->index, replay.size());
}

TEST(StateSeeker, TheLastOfManyRequestsIsServedAndHeldStatesStayValid) {
  const auto t = two_device_trace();
  const trace::allocator_replay replay(t, trace::memory_lane_of(t, 1), 64);
  std::atomic<int> wakes{0};
  {
    view::state_seeker seeker(replay);
    seeker.set_wake([&] { wakes.fetch_add(1); });
    std::mt19937_64 rng(11);
    std::size_t last = 0;
    for (int i = 0; i < 2'000; ++i) {
      // As frames do: ask, then draw whatever is newest, holding it while drawing.
      last = rng() % (replay.size() + 1);
      seeker.request(last);
      const auto shown = seeker.latest();
      ASSERT_LE(shown->index, replay.size());
      ASSERT_EQ(shown->figures.segments, shown->state.segments.size());
    }
    seeker.wait();
    EXPECT_EQ(seeker.latest()->index, last);
    EXPECT_EQ(seeker.latest()->state, replay.state_at(last));
  } // joined: the wake after the last publish has happened
  EXPECT_GT(wakes.load(), 0);
}

TEST(StateSeeker, GoesAwayInTheMiddleOfASeek) {
  const auto t = two_device_trace();
  const trace::allocator_replay replay(t, trace::memory_lane_of(t, 0), 1 << 20); // one keyframe
  for (int i = 0; i < 20; ++i) {
    view::state_seeker seeker(replay);
    seeker.request(replay.size() - static_cast<std::size_t>(i));
  }                                // the destructor stops the worker whatever it is doing
  view::state_seeker idle(replay); // never asked: no worker to stop
  EXPECT_EQ(idle.latest()->index, 0u);
}

} // namespace
