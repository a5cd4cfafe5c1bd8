// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/trace.hpp>

#include <gtest/gtest.h>

#include <array>

namespace tdiag::trace {
namespace {

trace make_sample() {
  trace t;
  const lane_id s7 = t.lanes.gpu(0, 7);
  const lane_id s0 = t.lanes.gpu(0, 0);
  const lane_id host = t.lanes.host(100, 200);
  t.lanes.set_name(s7, t.strings.intern("stream 7"));
  const string_id gemm = t.strings.intern("gemm");
  for (int i = 5; i >= 0; --i) {
    kernel_event k;
    k.start = i * 100;
    k.end = i * 100 + 50;
    k.lane = (i % 2) ? s7 : s0;
    k.name = gemm;
    k.stream = (i % 2) ? 7 : 0;
    k.correlation = static_cast<std::uint32_t>(i + 1);
    t.kernels.push_back(k);
    api_event a;
    a.start = i * 100 - 10;
    a.end = i * 100 - 5;
    a.lane = host;
    a.name = t.strings.intern("cudaLaunchKernel");
    a.correlation = k.correlation;
    t.api_calls.push_back(a);
  }
  return t;
}

TEST(Trace, FinalizeSortsEachLaneByTime) {
  trace t = make_sample();
  t.finalize();
  ASSERT_TRUE(t.finalized());
  const lane_id s0 = t.lanes.gpu(0, 0);
  auto lane0 = t.kernels.lane(s0);
  ASSERT_EQ(lane0.size(), 3u);
  EXPECT_EQ(lane0[0].start, 0);
  EXPECT_EQ(lane0[1].start, 200);
  EXPECT_EQ(lane0[2].start, 400);
  auto hit = t.kernels.overlapping(s0, 210, 260);
  ASSERT_EQ(hit.size(), 1u);
  EXPECT_EQ(hit[0].start, 200);
  EXPECT_EQ(t.event_count(), 12u);
  EXPECT_EQ(t.span(), (time_span{-10, 550}));
}

TEST(Trace, LinkFlowsByCorrelationAddsOneFlowPerLaunch) {
  trace t = make_sample();
  EXPECT_EQ(t.link_flows_by_correlation(), 6u);
  EXPECT_EQ(t.link_flows_by_correlation(), 0u);
  t.finalize();
  auto flows = t.flows.lane(t.lanes.host(100, 200));
  ASSERT_EQ(flows.size(), 6u);
  EXPECT_EQ(flows[0].time, -10);
  EXPECT_EQ(flows[0].target_time, 0);
}

TEST(Trace, CopyComparesEqual) {
  trace t = make_sample();
  t.finalize();
  const trace copy = t;
  EXPECT_EQ(copy, t);
  EXPECT_EQ(copy.name(copy.kernels[0].name), "gemm");
}

TEST(StackTable, InternsFramesAndStacksOnce) {
  string_table strings;
  stack_table stacks;
  const frame_id a = stacks.intern_frame({strings.intern("f"), strings.intern("a.py"), 3});
  const frame_id b = stacks.intern_frame({strings.intern("g"), strings.intern("a.py"), 9});
  EXPECT_EQ(stacks.intern_frame({strings.find("f"), strings.find("a.py"), 3}), a);
  const std::array<frame_id, 2> ab{a, b};
  const std::array<frame_id, 1> only_a{a};
  const stack_id s1 = stacks.intern_stack(ab);
  const stack_id s2 = stacks.intern_stack(only_a);
  EXPECT_NE(s1, s2);
  EXPECT_EQ(stacks.intern_stack(ab), s1);
  EXPECT_EQ(stacks.stack(s1).size(), 2u);
  EXPECT_EQ(stacks.stack(no_stack).size(), 0u);
  EXPECT_EQ(stacks.stack_count(), 3u);
  const std::array<frame_id, 1> bad{999};
  EXPECT_THROW((void)stacks.intern_stack(bad), std::out_of_range);
}

TEST(AllocatorState, FindsSegmentsAndCountsBytes) {
  allocator_state s;
  s.segments.push_back({0, 0x2000, 0x1000, 0, 0, segment_type::large, false, no_stack,
                        {{0x2000, 0x400, 0x3f0, block_state::active_allocated, no_stack},
                         {0x2400, 0xc00, 0, block_state::inactive, no_stack}}});
  s.segments.push_back({0, 0x1000, 0x800, 0, 0, segment_type::small, false, no_stack, {}});
  s.sort();
  EXPECT_EQ(s.reserved_bytes(), 0x1800u);
  EXPECT_EQ(s.allocated_bytes(0), 0x400u);
  ASSERT_NE(s.find_segment(0, 0x2fff), nullptr);
  EXPECT_EQ(s.find_segment(0, 0x2fff)->address, 0x2000u);
  EXPECT_EQ(s.find_segment(0, 0x1900), nullptr);
  EXPECT_EQ(s.find_segment(1, 0x2000), nullptr);
  EXPECT_EQ(s.segments[1].largest_free_block(), 0xc00u);
}

} // namespace
} // namespace tdiag::trace
