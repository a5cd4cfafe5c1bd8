// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A job merged into one trace for the viewer: every rank on the job's clock, its lanes apart,
// its collectives linked to the last arrival.
#include <tensordiag/trace/job_load.hpp>
#include <tensordiag/trace/job_merge.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

constexpr std::int64_t us = 1000;

// Both ranks on GPU 0, stream 7 and process 1 (as one trace loaded twice would be): rank 1
// computes longer, then both all-reduce.
std::string rank_json(int compute_us) {
  return fmt::format(R"({{"traceEvents": [
 {{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0,
   "dur": 5}},
 {{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "args": {{"Device Type": 1,
   "Device Id": 0, "Addr": 64, "Bytes": 512, "Total Allocated": 512, "Total Reserved": 2048}}}},
 {{"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 0, "dur": {0},
   "args": {{"stream": 7}}}},
 {{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, "ts": {0},
   "dur": {1}, "args": {{"stream": 7}}}}]}})",
                     compute_us, 60 - compute_us);
}

struct colliding_job {
  load_result a = import_kineto(tdiag::trace::test::as_bytes(rank_json(10)), "a.json");
  load_result b = import_kineto(tdiag::trace::test::as_bytes(rank_json(40)), "b.json");
  colliding_job() {
    a.trace.finalize();
    b.trace.finalize();
  }
};

TEST(JobMerge, RanksKeepTheirLanesAndTheJobClock) {
  colliding_job job;
  const std::vector<rank_trace> ranks{{0, &job.a.trace, 0}, {1, &job.b.trace, 5 * us}};
  analysis_options base; // the job clock of these ranks' base times, not of their all-reduce
  base.align = clock_alignment::base_time;
  const auto analysis = analyze_job(ranks, base, 1);
  const auto m = merge_job(ranks, analysis);
  EXPECT_EQ(m.t.kernels.size(), 4u);
  EXPECT_EQ(m.t.api_calls.size(), 2u);
  // Each rank's GPU 0 memory: its events keep their lane's device, so the curves stay apart.
  std::set<std::int32_t> memory_devices;
  for (const auto& e : m.t.memory.all()) {
    memory_devices.insert(e.device);
    ASSERT_LT(e.lane, m.t.lanes.size());
    EXPECT_EQ(m.t.lanes.at(e.lane).group, e.device);
  }
  EXPECT_EQ(memory_devices, (std::set<std::int32_t>{0, merged_group_stride}));
  // Both ranks had GPU 0 and process 1: rank 1's move by the stride, so the lanes stay apart.
  std::set<std::int64_t> gpu_groups, host_groups;
  for (lane_id l = 0; l < m.t.lanes.size(); ++l) {
    const auto& ln = m.t.lanes.at(l);
    (ln.kind == lane_kind::host_thread ? host_groups : gpu_groups).insert(ln.group);
    EXPECT_EQ(m.lanes[l].group, ln.kind == lane_kind::host_thread ? 1 : 0);
  }
  EXPECT_EQ(gpu_groups, (std::set<std::int64_t>{0, merged_group_stride}));
  EXPECT_EQ(host_groups.size(), 2u);
  // Rank 1's events are 5 us later on the job's clock.
  std::int64_t latest_end = 0;
  for (const auto& k : m.t.kernels.all())
    latest_end = std::max(latest_end, k.end);
  EXPECT_EQ(latest_end, 65 * us);
  // The all-reduce: one flow from rank 0's kernel to rank 1's (the last arrival).
  EXPECT_EQ(m.collective_flows, 1u);
  ASSERT_EQ(m.t.flows.size(), 1u);
  const auto& f = m.t.flows.all()[0];
  EXPECT_EQ(f.kind, flow_kind::other);
  EXPECT_EQ(f.time, 10 * us);
  EXPECT_EQ(f.target_time, 45 * us);
  EXPECT_EQ(m.lanes[f.lane].rank, 0);
  EXPECT_EQ(m.lanes[f.target_lane].rank, 1);
}

// Every rank numbers its correlation ids from 1: merged, a kernel keeps its own rank's launch
// and no other rank's, and the collective links take ids of their own.
TEST(JobMerge, CorrelationIdsStayWithinTheirRank) {
  const std::string json = R"({"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 0,
  "dur": 5, "args": {"correlation": 5}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 10, "dur": 20,
  "args": {"stream": 7, "correlation": 5}}]})";
  auto a = import_kineto(tdiag::trace::test::as_bytes(json), "a.json");
  auto b = import_kineto(tdiag::trace::test::as_bytes(json), "b.json");
  a.trace.finalize();
  b.trace.finalize();
  const std::vector<rank_trace> ranks{{0, &a.trace, 0}, {1, &b.trace, 0}};
  const auto m = merge_job(ranks, analyze_job(ranks, {}, 1));
  ASSERT_EQ(m.t.kernels.size(), 2u);
  ASSERT_EQ(m.t.api_calls.size(), 2u);
  std::map<int, std::uint32_t> kernel_id, launch_id;
  for (const auto& k : m.t.kernels.all())
    kernel_id[m.lanes[k.lane].rank] = k.correlation;
  for (const auto& c : m.t.api_calls.all())
    launch_id[m.lanes[c.lane].rank] = c.correlation;
  EXPECT_NE(kernel_id[0], kernel_id[1]) << "the two ranks' id 5 stay apart";
  EXPECT_EQ(kernel_id[0], launch_id[0]);
  EXPECT_EQ(kernel_id[1], launch_id[1]);
  for (const auto& f : m.t.flows.all())
    EXPECT_EQ(m.lanes[f.lane].rank, m.lanes[f.target_lane].rank) << "no launch flow across ranks";
}

TEST(JobMerge, TwoRanksOfTheSharedJob) {
  const auto dir = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "hta" / "two_ranks";
  if (!std::filesystem::exists(dir))
    GTEST_SKIP() << "shared data absent: " << dir;
  const std::vector<std::string> inputs{dir.string()};
  const auto job = load_job(inputs);
  const auto ranks = rank_traces(job);
  const auto analysis = analyze_job(ranks);
  const auto m = merge_job(ranks, analysis);
  std::size_t events = 0;
  for (const auto& r : ranks)
    events += r.t->event_count();
  EXPECT_EQ(m.t.event_count(), events + m.collective_flows);
  // The ranks drive GPUs 0 and 1: their numbers stay.
  std::set<std::pair<int, std::int64_t>> devices;
  for (lane_id l = 0; l < m.t.lanes.size(); ++l)
    if (m.t.lanes.at(l).kind == lane_kind::gpu_stream)
      devices.insert({m.lanes[l].rank, m.t.lanes.at(l).group});
  EXPECT_EQ(devices, (std::set<std::pair<int, std::int64_t>>{{0, 0}, {1, 1}}));
  ASSERT_FALSE(analysis.collectives.empty());
  EXPECT_EQ(m.collective_flows, analysis.collectives.size());
}

} // namespace
