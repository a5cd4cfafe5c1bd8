// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// capture/src/capture_range.cpp and range_spec.hpp: range texts, and the state machine fed by a
// made-up stream of the callbacks CUPTI would deliver.
#include <tensordiag/capture/capture_range.hpp>

#include <gtest/gtest.h>

namespace tdiag::capture {
namespace {

range_gate gate(std::string_view ranges) {
  return range_gate(parse_ranges(ranges));
}

std::string error_of(std::string_view text) {
  try {
    (void)parse_range(text);
  } catch (const input_error& e) {
    EXPECT_EQ(e.report().diagnostics.front().code, codes::bad_range);
    return e.what();
  }
  return "<no error>";
}

TEST(RangeSpec, TextsParse) {
  const auto r = parse_ranges("cuda-profiler-api;nvtx:train step;launches:10:20;time:1.5:2;;");
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].kind, range_kind::profiler_api);
  EXPECT_EQ(r[1].kind, range_kind::nvtx);
  EXPECT_EQ(r[1].nvtx_name, "train step");
  EXPECT_EQ(r[2].first_launch, 10u);
  EXPECT_EQ(r[2].end_launch, 20u);
  EXPECT_EQ(r[3].delay_ns, 1'500'000'000);
  EXPECT_EQ(r[3].duration_ns, 2'000'000'000);
  const auto open = parse_range("launches:5:");
  EXPECT_EQ(open.end_launch, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(parse_range("time:3:").duration_ns, std::numeric_limits<std::int64_t>::max());
}

TEST(RangeSpec, BadTextsSayWhatIsWrong) {
  EXPECT_NE(error_of("nvtx:").find("no NVTX range name"), std::string::npos);
  EXPECT_NE(error_of("launches:20:10").find("the range is empty"), std::string::npos);
  EXPECT_NE(error_of("launches:x:10").find("whole numbers"), std::string::npos);
  EXPECT_NE(error_of("launches:10").find("expected two numbers"), std::string::npos);
  EXPECT_NE(error_of("time:-1:2").find("seconds"), std::string::npos);
  EXPECT_NE(error_of("cupti").find("'cupti': unknown kind"), std::string::npos);
  EXPECT_NE(error_of("cuda-profiler-api:1").find("unknown kind"), std::string::npos);
}

TEST(RangeGate, WithoutRangesCaptureIsAlwaysOn) {
  range_gate g({});
  EXPECT_TRUE(g.active());
  EXPECT_FALSE(g.launch());
  EXPECT_FALSE(g.watches_profiler_api() || g.watches_nvtx() || g.watches_launches());
}

TEST(RangeGate, ProfilerApiOpensAndCloses) {
  auto g = gate("cuda-profiler-api");
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.watches_profiler_api());
  EXPECT_FALSE(g.profiler_stop()); // a stop before any start changes nothing
  EXPECT_TRUE(g.profiler_start());
  EXPECT_TRUE(g.active());
  EXPECT_FALSE(g.profiler_start()); // cudaProfilerStart then cuProfilerStart: one edge
  EXPECT_TRUE(g.profiler_stop());
  EXPECT_FALSE(g.active());
  EXPECT_TRUE(g.profiler_start());
  EXPECT_EQ(g.times_opened(), 2u);
}

TEST(RangeGate, NvtxPushPopMatchesByNameAndNests) {
  auto g = gate("nvtx:step");
  const std::uint64_t t1 = 1, t2 = 2;
  EXPECT_FALSE(g.nvtx_push(t1, "forward")); // not ours
  EXPECT_TRUE(g.nvtx_push(t1, "step"));
  EXPECT_FALSE(g.nvtx_push(t1, "inner")); // nested, not ours
  EXPECT_FALSE(g.nvtx_pop(t1));           // pops "inner": still inside "step"
  EXPECT_TRUE(g.active());
  EXPECT_FALSE(g.nvtx_push(t2, "step")); // another thread's "step": already on
  EXPECT_FALSE(g.nvtx_pop(t1));          // t1's "step" closes; t2's is still open
  EXPECT_TRUE(g.active());
  EXPECT_TRUE(g.nvtx_pop(t2));
  EXPECT_FALSE(g.active());
  EXPECT_FALSE(g.nvtx_pop(t1)); // "forward"
  EXPECT_FALSE(g.nvtx_pop(t1)); // a pop of a push before capture: ignored
  EXPECT_FALSE(g.active());
}

TEST(RangeGate, NvtxStartEndByIdAcrossThreads) {
  auto g = gate("nvtx:epoch");
  EXPECT_FALSE(g.nvtx_start(7, "other"));
  EXPECT_TRUE(g.nvtx_start(8, "epoch"));
  EXPECT_FALSE(g.nvtx_end(7));
  EXPECT_TRUE(g.nvtx_end(8));
  EXPECT_FALSE(g.nvtx_end(8));
  EXPECT_FALSE(g.active());
}

TEST(RangeGate, LaunchesCountFromZeroAndStopWatchingAfterTheRange) {
  // active() before launch n (n = 0..5): launches 2 and 3 run inside.
  auto g = gate("launches:2:4");
  std::vector<bool> inside;
  for (int n = 0; n < 6; ++n) {
    inside.push_back(g.active());
    EXPECT_TRUE(g.watches_launches() || n >= 4) << n;
    g.launch();
  }
  EXPECT_EQ(inside, (std::vector<bool>{false, false, true, true, false, false}));
  EXPECT_FALSE(g.watches_launches());
  EXPECT_EQ(g.times_opened(), 1u);
  // From launch 0: open from the start.
  auto first = gate("launches:0:1");
  EXPECT_TRUE(first.active());
  EXPECT_TRUE(first.launch());
  EXPECT_FALSE(first.active());
}

TEST(RangeGate, TimeRangeFollowsTheClockAndNamesItsEdges) {
  auto g = gate("time:1:2");
  EXPECT_FALSE(g.clock(0));
  EXPECT_EQ(g.next_clock_edge(0), 1'000'000'000);
  EXPECT_TRUE(g.clock(1'000'000'000));
  EXPECT_TRUE(g.active());
  EXPECT_EQ(g.next_clock_edge(1'000'000'000), 3'000'000'000);
  EXPECT_TRUE(g.clock(3'000'000'000));
  EXPECT_FALSE(g.active());
  EXPECT_FALSE(g.next_clock_edge(3'000'000'000).has_value());
}

TEST(RangeGate, SeveralRangesCaptureTheirUnion) {
  auto g = gate("cuda-profiler-api;nvtx:step;launches:0:1");
  EXPECT_TRUE(g.active());          // launch 0 is inside
  EXPECT_FALSE(g.profiler_start()); // already on through launches: no edge
  EXPECT_FALSE(g.launch());         // launch 0 returned: launches closes, profiler keeps it on
  EXPECT_TRUE(g.active());
  EXPECT_TRUE(g.profiler_stop());
  EXPECT_TRUE(g.nvtx_push(1, "step"));
  EXPECT_TRUE(g.nvtx_pop(1));
  EXPECT_EQ(g.times_opened(), 2u);
}

} // namespace
} // namespace tdiag::capture
