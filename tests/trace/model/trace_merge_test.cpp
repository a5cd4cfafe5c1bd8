// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/trace_merge.hpp>

#include <gtest/gtest.h>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

TEST(TraceMerge, MergingIntoAnEmptyTraceKeepsEverything) {
  const trace src = make_synthetic_trace({.kernels = 500, .devices = 2});
  trace dst;
  merge_trace(dst, src);
  dst.finalize();
  EXPECT_EQ(test::canonical_events(dst), test::canonical_events(src));
  EXPECT_EQ(test::canonical_state(dst), test::canonical_state(src));
  EXPECT_EQ(dst.metadata.format, "synthetic");
  EXPECT_EQ(dst.lanes.size(), src.lanes.size());
}

TEST(TraceMerge, TwoTracesShareStringsAndLanes) {
  const trace a = make_synthetic_trace({.kernels = 200, .seed = 1});
  const trace b = make_synthetic_trace({.kernels = 300, .seed = 2});
  trace dst;
  merge_trace(dst, a);
  merge_trace(dst, b);
  dst.finalize();
  EXPECT_EQ(dst.event_count(), a.event_count() + b.event_count());
  // Same names and lanes in both: interned once.
  EXPECT_EQ(dst.strings.size(), std::max(a.strings.size(), b.strings.size()));
  EXPECT_EQ(dst.lanes.size(), a.lanes.size());
  auto expected = test::canonical_events(a);
  const auto more = test::canonical_events(b);
  expected.insert(expected.end(), more.begin(), more.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(test::canonical_events(dst), expected);
}

TEST(IdRemapper, MapsOutOfRangeIdsToNone) {
  trace src;
  const lane_id l = src.lanes.gpu(0, 1);
  trace dst;
  (void)dst.strings.intern("already here");
  id_remapper map(dst, src);
  EXPECT_EQ(map.string(12345), no_string);
  EXPECT_EQ(map.stack(777), no_stack);
  EXPECT_EQ(map.frame(3), 0u);
  const lane_id mapped = map.lane(l);
  EXPECT_EQ(dst.lanes.at(mapped).kind, lane_kind::gpu_stream);
  const lane_id unknown = map.lane(99);
  EXPECT_EQ(dst.name(dst.lanes.at(unknown).name), "unknown lane");
  kernel_event k;
  k.lane = l;
  k.name = 4242;
  map.remap(k);
  EXPECT_EQ(k.lane, mapped);
  EXPECT_EQ(k.name, no_string);
}

memory_event memory(std::int64_t time, memory_action action, std::uint64_t address,
                    std::uint64_t size, lane_id lane) {
  memory_event e;
  e.time = time;
  e.action = action;
  e.address = address;
  e.size = size;
  e.lane = lane;
  return e;
}

TEST(AllocatorHistory, BlocksJoinTheCapturedSegmentsOnTheCapturesAxis) {
  // The capture: one cudaMalloc'd segment at 1 us, freed at 90 us; its axis starts at epoch T.
  const std::int64_t epoch = 1'764'000'000'000'000'000;
  trace captured;
  captured.metadata.time_origin_ns = epoch;
  const lane_id cap_lane = captured.lanes.memory(0);
  captured.memory.push_back(memory(1'000, memory_action::segment_alloc, 0x1000, 4096, cap_lane));
  captured.memory.push_back(memory(90'000, memory_action::segment_free, 0x1000, 4096, cap_lane));
  captured.finalize();
  // The history began 5 us after the capture: a segment it also saw, and one block with a stack.
  trace history;
  history.metadata.time_origin_ns = epoch + 5'000;
  (void)history.strings.intern("unrelated");
  const lane_id hist_lane = history.lanes.memory(0);
  const frame f{history.strings.intern("forward"), history.strings.intern("train.py"), 42};
  const frame_id fid = history.stacks.intern_frame(f);
  const stack_id sid = history.stacks.intern_stack(std::span(&fid, 1));
  history.memory.push_back(memory(0, memory_action::segment_alloc, 0x1000, 4096, hist_lane));
  auto block = memory(10, memory_action::alloc, 0x1000, 512, hist_lane);
  block.stack = sid;
  history.memory.push_back(block);
  history.memory.push_back(memory(20, memory_action::free_requested, 0x1000, 512, hist_lane));
  history.memory.push_back(memory(30, memory_action::free_completed, 0x1000, 512, hist_lane));
  history.metadata.dropped_records = 7;
  history.finalize();

  const auto merged = merge_allocator_history(captured, history);
  captured.finalize();
  EXPECT_EQ(merged.events, 3u);
  EXPECT_EQ(merged.segment_events, 1u);
  EXPECT_EQ(merged.offset_ns, 5'000);
  EXPECT_EQ(captured.metadata.dropped_records, 7u);
  const auto all = captured.memory.all();
  ASSERT_EQ(all.size(), 5u);
  std::vector<std::pair<std::int64_t, memory_action>> seen;
  for (const auto& e : all) {
    seen.emplace_back(e.time, e.action);
    EXPECT_EQ(e.lane, cap_lane);
  }
  const std::vector<std::pair<std::int64_t, memory_action>> expected = {
      {1'000, memory_action::segment_alloc},
      {5'010, memory_action::alloc},
      {5'020, memory_action::free_requested},
      {5'030, memory_action::free_completed},
      {90'000, memory_action::segment_free}};
  EXPECT_EQ(seen, expected);
  // The block's stack, re-interned in the captured trace's tables.
  const auto frames = captured.stacks.stack(all[1].stack);
  ASSERT_EQ(frames.size(), 1u);
  const frame& g = captured.stacks.frame_at(frames[0]);
  EXPECT_EQ(captured.name(g.function), "forward");
  EXPECT_EQ(captured.name(g.file), "train.py");
  EXPECT_EQ(g.line, 42u);
}

TEST(AllocatorHistory, WithoutBothOriginsTimesStayAsTheyAre) {
  trace captured;
  trace history;
  history.metadata.time_origin_ns = 123;
  const lane_id lane = history.lanes.memory(1);
  history.memory.push_back(memory(77, memory_action::oom, 0, 1 << 20, lane));
  history.finalize();
  const auto merged = merge_allocator_history(captured, history);
  captured.finalize();
  EXPECT_EQ(merged.offset_ns, 0);
  ASSERT_EQ(captured.memory.size(), 1u);
  EXPECT_EQ(captured.memory[0].time, 77);
  EXPECT_EQ(captured.memory[0].action, memory_action::oom);
}

} // namespace
} // namespace tdiag::trace
