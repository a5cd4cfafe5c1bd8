// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/trace.hpp>

#include <gtest/gtest.h>

#include <array>
#include <tuple>

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

TEST(Trace, FinalizeKeepsSyncWaitsOnTheirRows) {
  trace t;
  const lane_id s8 = t.lanes.gpu(0, 8), s9 = t.lanes.gpu(0, 9);
  // Inserted late-first on two lanes: finalize() reverses each lane and puts lane 8 first.
  for (const auto& [lane, start, correlation] :
       std::array<std::tuple<lane_id, std::int64_t, std::uint32_t>, 4>{
           {{s9, 50, 1}, {s8, 40, 2}, {s9, 30, 3}, {s8, 20, 4}}}) {
    range_event r;
    r.start = start;
    r.end = start + 5;
    r.lane = lane;
    r.kind = range_kind::gpu_sync;
    r.correlation = correlation;
    t.ranges.push_back(r);
  }
  t.sync_waits = {{2, 22, 7}, {0, 11, 7}}; // rows with correlation 3 and 1, out of order
  t.finalize();
  ASSERT_EQ(t.sync_waits.size(), 2u);
  for (const auto& w : t.sync_waits)
    EXPECT_EQ(t.ranges.all()[w.range_index].correlation, w.record_correlation / 11 == 1 ? 1u : 3u);
  EXPECT_LT(t.sync_waits[0].range_index, t.sync_waits[1].range_index);
  ASSERT_NE(t.sync_wait_of(t.sync_waits[1].range_index), nullptr);
  EXPECT_EQ(t.sync_wait_of(t.sync_waits[1].range_index)->record_correlation,
            t.sync_waits[1].record_correlation);
  EXPECT_EQ(t.sync_wait_of(0), nullptr); // lane 8's first row (correlation 4) waits on nothing
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

} // namespace
} // namespace tdiag::trace
