// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A lane's forward replay split over threads (trace/replay/src/replay_split.cpp) gives the
// samples and mismatches of one thread: on random histories with dumps, clean and full of
// events that do not match, whether each part another thread replayed is taken or replayed
// again.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/splitmix.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "histories.hpp"
#include "replay/src/replay_split.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::histories::mixed_history;
using tdiag::trace::histories::random_history;

// Short histories split into parts of at least 64 events while a test runs.
class ReplaySplit : public ::testing::Test {
protected:
  void SetUp() override { detail::replay_split_min_events = 64; }
  void TearDown() override { detail::replay_split_min_events = saved_; }

  struct run {
    std::vector<memory_sample> samples;
    std::size_t missed = 0;
    detail::split_stats stats;
  };
  static run replay(const trace& t, unsigned threads) {
    run out;
    out.missed = detail::replay_samples(
        t, memory_lane_of(t, 0), threads, [&](const memory_sample& s) { out.samples.push_back(s); },
        &out.stats);
    return out;
  }
  // The split runs against one thread's; returns the parts taken and made over them.
  static std::pair<std::size_t, std::size_t> check(const trace& t, const std::string& what) {
    const auto one = replay(t, 1);
    EXPECT_EQ(one.stats.parts, 1u) << what;
    EXPECT_EQ(one.samples.size(), t.memory.lane(memory_lane_of(t, 0)).size() + 1) << what;
    std::size_t taken = 0, made = 0;
    for (const unsigned threads : {2u, 3u, 5u}) {
      const auto split = replay(t, threads);
      EXPECT_GT(split.stats.parts, 1u) << what << ", " << threads << " threads";
      EXPECT_EQ(split.samples, one.samples) << what << ", " << threads << " threads";
      EXPECT_EQ(split.missed, one.missed) << what << ", " << threads << " threads";
      taken += split.stats.taken;
      made += split.stats.parts - 1;
    }
    return {taken, made};
  }

private:
  std::size_t saved_ = detail::replay_split_min_events;
};

// A history as an allocator writes it: 2 MiB segments made, blocks allocated at the start of
// free ones and freed, segments freed once empty; the dump is where it ends.
trace clean_history(std::uint64_t seed, std::size_t n) {
  constexpr std::uint64_t base = 0x7f0000000000, segment_size = 2 << 20;
  splitmix64 rng{seed};
  trace t;
  const auto lane = t.lanes.memory(0);
  allocator_state now;
  const auto add = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    const auto time = static_cast<std::int64_t>(t.memory.size() + 1) * 1000;
    const memory_event e{.time = time,
                         .lane = lane,
                         .action = action,
                         .address = address,
                         .size = size,
                         .stream = 1};
    apply_memory_event(now, e);
    t.memory.push_back(e);
  };
  while (t.memory.size() < n) {
    const auto pick = rng.below(100);
    if (now.segments.size() < 4 || pick == 0) {
      const auto address = base + rng.below(64) * 2 * segment_size;
      if (now.find_segment(0, address) == nullptr)
        add(memory_action::segment_alloc, address, segment_size);
      continue;
    }
    auto& seg = now.segments[rng.below(now.segments.size())];
    if (pick == 1 && seg.allocated_bytes() == 0) {
      add(memory_action::segment_free, seg.address, seg.total_size);
      continue;
    }
    std::vector<block> live, free;
    for (const auto& b : seg.blocks)
      (b.state == block_state::inactive ? free : live).push_back(b);
    const std::uint64_t size = std::uint64_t{512} << rng.below(8);
    if (pick < 55 && !free.empty()) {
      const auto& b = free[rng.below(free.size())];
      if (b.size >= 2 * size)
        add(memory_action::alloc, b.address, size);
    } else if (!live.empty()) {
      const auto& b = live[rng.below(live.size())];
      add(memory_action::free_completed, b.address, b.size);
    }
  }
  t.finalize();
  t.final_allocator_state = std::move(now);
  return t;
}

TEST_F(ReplaySplit, CleanHistoriesTakeEveryPart) {
  for (std::uint64_t seed = 41; seed <= 44; ++seed) {
    const auto t = clean_history(seed, 3000);
    const auto [taken, made] = check(t, "seed " + std::to_string(seed));
    EXPECT_EQ(taken, made) << "seed " << seed << ": the dump agrees with the history";
  }
}

// A segment the history makes has the fields its event gives (made_segment) in the forward
// replay, and the dump's in the backward one: the parts are taken all the same.
TEST_F(ReplaySplit, SegmentsTheHistoryMadeTakeTheEventsFields) {
  for (std::uint64_t seed = 45; seed <= 48; ++seed) {
    auto t = clean_history(seed, 3000);
    std::size_t changed = 0;
    for (auto& seg : t.final_allocator_state->segments)
      if (seg.pool != implicit_pool) {
        seg.pool = 7; // a private pool's (a CUDA graph's), on another stream
        seg.stream = 3;
        ++changed;
      }
    ASSERT_GT(changed, 0u) << "seed " << seed;
    const auto [taken, made] = check(t, "seed " + std::to_string(seed));
    EXPECT_EQ(taken, made) << "seed " << seed;
  }
}

// Histories whose events collide (frees of blocks never made, allocations inside live ones,
// overlapping segments): the backward and forward replays disagree, so some parts are replayed
// again, and the samples are still one thread's.
TEST_F(ReplaySplit, HistoriesThatDoNotMatchGiveOneThreadsSamples) {
  std::size_t taken = 0, made = 0;
  for (std::uint64_t seed = 51; seed <= 56; ++seed) {
    const auto [t1, m1] =
        check(mixed_history(seed, 3000, true, true), "mixed " + std::to_string(seed));
    const auto [t2, m2] = check(random_history(seed, 3000, true), "random " + std::to_string(seed));
    taken += t1 + t2;
    made += m1 + m2;
  }
  EXPECT_LT(taken, made) << "some parts are replayed again";
}

// The public entry point: summary's peaks come from it, on as many threads as given.
TEST_F(ReplaySplit, ForEachMemorySampleGivesOneThreadsSamples) {
  const auto t = mixed_history(61, 4000, true, false);
  const auto lane = memory_lane_of(t, 0);
  std::vector<memory_sample> one, four;
  std::size_t missed_one = 0, missed_four = 0;
  for_each_memory_sample(
      t, lane, [&](const memory_sample& s) { one.push_back(s); }, &missed_one);
  for_each_memory_sample(
      t, lane, [&](const memory_sample& s) { four.push_back(s); }, &missed_four, 4);
  EXPECT_EQ(four, one);
  EXPECT_EQ(missed_four, missed_one);
  EXPECT_EQ(one.size(), t.memory.lane(lane).size() + 1);
}

// The shared real snapshots (PyTorch's own, written on a GPU): the split gives one thread's
// samples, and parts are taken where the replay agrees with the dump (it does not everywhere:
// the caching allocator split blocks the replay hands out whole).
TEST_F(ReplaySplit, RealSnapshotsGiveOneThreadsSamples) {
  const std::filesystem::path shared(TDIAG_SHARED_DIR);
  std::size_t lanes = 0, taken = 0;
  for (const char* folder : {"traces", "real/snapshots"}) {
    if (!std::filesystem::is_directory(shared / folder))
      continue;
    for (const auto& entry : std::filesystem::directory_iterator(shared / folder)) {
      if (entry.path().extension() != ".pickle")
        continue;
      const auto t = import_snapshot_file(entry.path()).trace;
      const auto lane = memory_lane_of(t, 0);
      if (lane >= t.lanes.size() || t.memory.lane(lane).size() < 1000)
        continue;
      const auto [t_taken, made] = check(t, entry.path().filename().string());
      ++lanes;
      taken += t_taken;
    }
  }
  if (lanes == 0)
    GTEST_SKIP() << "shared data absent";
  EXPECT_GT(taken, 0u);
}

} // namespace
