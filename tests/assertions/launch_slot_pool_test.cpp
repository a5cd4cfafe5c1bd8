// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The launch-slot pool of the GPU back-ends against a model GPU: streams run their launches and
// events in order, whenever the test says so. The property that makes launch ids exact: a slot is
// handed out again only once the launch that held it has finished.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "../../assertions/src/gpu/launch_slot_pool.hpp"

namespace {

struct model_event;
struct model_stream {
  std::deque<std::pair<std::uint64_t, model_event*>> queue; // a launch (id) or an event
  bool destroyed = false; // the user destroyed it: nothing may touch it any more
  int events_recorded = 0;
};
struct model_event {
  bool done = true; // a fresh event counts as completed, as in CUDA
};

std::set<std::uint64_t> finished;

struct model_api {
  using event_type = model_event*;
  using stream_type = model_stream*;
  using status_type = int;
  static constexpr status_type success = 0;
  static constexpr status_type not_ready = 1;
  static status_type create_event(event_type* e) {
    *e = new model_event;
    return success;
  }
  static status_type record_event(event_type e, stream_type s) {
    EXPECT_FALSE(s->destroyed) << "an event recorded into a stream destroyed after its launch";
    e->done = false;
    s->queue.push_back({0, e});
    ++s->events_recorded;
    return success;
  }
  static status_type query_event(event_type e) { return e->done ? success : not_ready; }
  static void destroy_event(event_type e) { delete e; }
};

using pool_type = tdiag::assertions::detail::launch_slot_pool<model_api>;

// Runs up to `n` items of the stream: launches finish, events complete.
void run(model_stream& s, std::size_t n) {
  for (; n > 0 && !s.queue.empty(); --n) {
    auto [id, event] = s.queue.front();
    s.queue.pop_front();
    if (event != nullptr)
      event->done = true;
    else
      finished.insert(id);
  }
}

class LaunchSlotPool : public ::testing::Test {
protected:
  void SetUp() override { finished.clear(); }

  // A launch through the pool, as the back-end makes it; the slot must not belong to a launch
  // that may still run.
  std::uint32_t launch(model_stream& s) {
    const std::uint32_t slot = pool.acquire(false);
    if (slot == 0)
      return 0;
    EXPECT_TRUE(holder[slot] == 0 || finished.count(holder[slot]) != 0)
        << "slot " << slot << " handed out while launch " << holder[slot] << " may still run";
    holder[slot] = ++next_id;
    s.queue.push_back({next_id, nullptr});
    pool.launched(slot, &s);
    return slot;
  }

  std::unique_ptr<pool_type> owned = std::make_unique<pool_type>();
  pool_type& pool = *owned;
  std::vector<std::uint64_t> holder = std::vector<std::uint64_t>(pool_type::slots, 0);
  std::uint64_t next_id = 0;
};

TEST_F(LaunchSlotPool, NoSlotWhileEveryLaunchMayStillRun) {
  model_stream s;
  int given = 0;
  for (int i = 0; i < 400; ++i)
    given += launch(s) != 0;
  EXPECT_EQ(given, static_cast<int>(pool_type::graph_first - 1)); // then 0: all in flight
  run(s, s.queue.size());
  EXPECT_NE(launch(s), 0u);
}

TEST_F(LaunchSlotPool, FewEventsForALongRunOnOneStream) {
  model_stream s;
  for (int i = 0; i < 10000; ++i) {
    ASSERT_NE(launch(s), 0u) << "launch " << i;
    run(s, 3); // the GPU keeps up, a little behind
  }
  EXPECT_LE(s.events_recorded, 10000 / 16 + 64); // about one event every 16 launches
}

TEST_F(LaunchSlotPool, StreamsLaunchingInTurnStillNeedFewEvents) {
  // Four streams in turn: a stream's events lie 64 slots apart, beyond the lookahead, so only the
  // per-stream record of its latest event frees its slots without an event at every launch.
  std::vector<model_stream> streams(4);
  int zero = 0, events = 0;
  for (int i = 0; i < 20000; ++i) {
    auto& s = streams[static_cast<std::size_t>(i) % streams.size()];
    zero += launch(s) == 0;
    run(s, 3);
  }
  for (const auto& s : streams)
    events += s.events_recorded;
  EXPECT_EQ(zero, 0);
  EXPECT_LE(events, 20000 / 16 + 4 * 64);
}

TEST_F(LaunchSlotPool, RandomStreamsNeverReuseARunningSlot) {
  std::mt19937 rng(7);
  std::vector<model_stream> streams(5);
  int zero = 0, hung = 0;
  for (int step = 0; step < 40000; ++step) {
    auto& s = streams[rng() % streams.size()];
    const bool is_hung = &s == &streams[0]; // stream 0 never runs: its 50 slots stay taken
    if (rng() % 3 != 0) {
      if (is_hung && hung == 50)
        continue;
      const bool got = launch(s) != 0;
      zero += !got;
      hung += is_hung && got;
    } else if (!is_hung) {
      run(s, rng() % 16);
    }
  }
  EXPECT_LT(zero, 40000 / 3); // slots do come back
}

// A stream may be destroyed (or start a graph capture) right after a launch on it: the pool
// touches a stream only inside a launch made on it, and the slots it kept come back once no
// slot is left to wait for them (here never: its launches never finish).
TEST_F(LaunchSlotPool, NeverTouchesAStreamAfterItsLaunch) {
  model_stream a, b;
  for (int i = 0; i < 5; ++i)
    launch(a); // a fresh stream: one event, then 4 without
  a.destroyed = true;
  int given = 0;
  for (int i = 0; i < 2000; ++i) {
    given += launch(b) != 0;
    run(b, 2);
  }
  EXPECT_GT(given, 1900); // the 5 slots `a` keeps do not starve `b`
}

} // namespace
