// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures from Python (pickle / json + gzip): the dump's active_allocated blocks, and
// the last Device Type 1 [memory] event's "Total Allocated" / "Total Reserved".
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using namespace tdiag::trace;

std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

TEST(MemorySeries, SnapshotEndsAtTheDumpAndMatchesTheReplay) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto lane = memory_lane_of(t, 0);
  const auto series = memory_series_of(t, lane);
  EXPECT_FALSE(series.reported);
  ASSERT_EQ(series.samples.size(), 5899u);
  EXPECT_EQ(series.samples.front().allocated, 0);
  EXPECT_EQ(series.samples.back().allocated, 222617600);
  EXPECT_EQ(series.samples.back().requested, 219471872);
  EXPECT_EQ(series.samples.back().reserved, 994050048);
  // The incremental totals equal the replayed state's at every 97th event.
  const allocator_replay replay(t, lane);
  for (std::size_t i = 0; i <= replay.size(); i += 97) {
    const auto s = replay.state_at(i);
    ASSERT_EQ(series.samples[i].allocated, static_cast<std::int64_t>(s.allocated_bytes())) << i;
    ASSERT_EQ(series.samples[i].reserved, static_cast<std::int64_t>(s.reserved_bytes())) << i;
  }
}

TEST(MemorySeries, KinetoTakesTheReportedTotals) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_kineto_file(path).trace;
  const auto series = memory_series_of(t, memory_lane_of(t, 0));
  EXPECT_TRUE(series.reported);
  ASSERT_EQ(series.samples.size(), 979u);
  EXPECT_EQ(series.samples.back().allocated, 146960384);
  EXPECT_EQ(series.samples.back().reserved, 629145600);
  EXPECT_EQ(series.samples.back().requested, -1);
}

TEST(MemorySeries, EmptyLaneHasNoSamples) {
  trace t;
  const auto lane = t.lanes.memory(3);
  t.finalize();
  EXPECT_TRUE(memory_series_of(t, lane).samples.empty());
  EXPECT_EQ(memory_lane_of(t, 3), lane);
  EXPECT_EQ(memory_lane_of(t, 4), t.lanes.size());
}

// Two allocations of nearly 2^63 bytes each: the running totals saturate instead of
// overflowing (signed overflow is undefined; the fuzzers found it under UBSan).
TEST(MemorySeries, HugeSizesSaturate) {
  const std::string json = R"({"traceEvents": [
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 1, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 4096, "Bytes": 9223372036854775807}},
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 2, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 64, "Bytes": 4000}}]})";
  const auto t = import_kineto(std::as_bytes(std::span(json)), "huge.json").trace;
  const auto series = memory_series_of(t, memory_lane_of(t, 0));
  ASSERT_FALSE(series.samples.empty());
  EXPECT_EQ(series.samples.back().allocated, INT64_MAX);
  for (const auto& sample : series.samples)
    EXPECT_GE(sample.allocated, 0);
}

// One segment cut into 512-byte blocks, a quarter of them freed and reallocated in turn (a
// fragmented cache): the incremental totals, which look only at the blocks around each event,
// equal the replayed state's at every event. (Summing whole segments instead made a 300,000-event
// snapshot with one 131,072-block segment take over two minutes.)
TEST(MemorySeries, AFragmentedSegmentMatchesTheReplayAtEveryEvent) {
  constexpr std::uint64_t base = 0x7f0000000000, block = 512, blocks = 256;
  trace t;
  const auto lane = t.lanes.memory(0);
  std::int64_t time = 0;
  const auto add = [&](memory_action a, std::uint64_t address, std::uint64_t size) {
    memory_event e;
    e.time = ++time;
    e.lane = lane;
    e.action = a;
    e.address = address;
    e.size = size;
    t.memory.push_back(e);
  };
  // A 2 MiB segment is the small pool's: a rest of 512 bytes or more is split off, not given away.
  constexpr std::uint64_t segment_bytes = std::uint64_t{2} << 20;
  add(memory_action::segment_alloc, base, segment_bytes);
  for (std::uint64_t i = 0; i < blocks; ++i)
    add(memory_action::alloc, base + i * block, block);
  for (std::uint64_t round = 0; round < 4; ++round)
    for (std::uint64_t i = round % 4; i < blocks; i += 4) {
      add(memory_action::free_completed, base + i * block, block);
      add(memory_action::alloc, base + i * block, i % 8 == 0 ? block / 2 : block);
    }
  add(memory_action::free_completed, base + (blocks - 1) * block, block); // merges with the rest
  t.finalize();
  const auto series = memory_series_of(t, lane);
  const allocator_replay replay(t, lane);
  EXPECT_EQ(replay.mismatches(), 0u) << "every event applies: the segment really fragments";
  ASSERT_EQ(series.samples.size(), replay.size() + 1);
  replay_cursor cursor(replay);
  for (std::size_t i = 0; i <= replay.size(); ++i) {
    const auto& s = cursor.seek(i);
    ASSERT_EQ(series.samples[i].allocated, static_cast<std::int64_t>(s.allocated_bytes())) << i;
    ASSERT_EQ(series.samples[i].reserved, static_cast<std::int64_t>(s.reserved_bytes())) << i;
  }
  EXPECT_EQ(series.samples.back().reserved, static_cast<std::int64_t>(segment_bytes));
  EXPECT_GT(cursor.seek(replay.size()).segments.at(0).blocks.size(), blocks / 2);
}

} // namespace
