// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Stragglers, step times and rank deviations on a hand-built two-rank job.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

constexpr std::int64_t us = 1000;

void kernel(trace& t, const char* name, std::int64_t start, std::int64_t end) {
  kernel_event k;
  k.start = start * us;
  k.end = end * us;
  k.stream = 7;
  k.lane = t.lanes.gpu(0, 7);
  k.name = t.strings.intern(name);
  t.kernels.push_back(k);
}

void step(trace& t, const char* name, std::int64_t start, std::int64_t end) {
  range_event r;
  r.start = start * us;
  r.end = end * us;
  r.lane = t.lanes.host(1, 1);
  r.name = t.strings.intern(name);
  r.kind = range_kind::step;
  t.ranges.push_back(r);
}

// A c10d operator on the host thread launching one NCCL kernel (correlation `id`).
void collective(trace& t, const char* op, std::uint32_t id, std::int64_t start, std::int64_t end) {
  api_event host;
  host.start = (start - 5) * us;
  host.end = (start - 1) * us;
  host.lane = t.lanes.host(1, 1);
  host.name = t.strings.intern(op);
  host.kind = api_kind::cpu_op;
  t.api_calls.push_back(host);
  api_event launch = host;
  launch.start = (start - 4) * us;
  launch.end = (start - 2) * us;
  launch.name = t.strings.intern("cudaLaunchKernel");
  launch.kind = api_kind::runtime;
  launch.correlation = id;
  t.api_calls.push_back(launch);
  kernel(t, "ncclKernel_AllReduce_RING_LL_Sum_float", start, end);
  t.kernels.mutable_all().back().correlation = id;
}

struct two_rank_job {
  trace a, b;
  two_rank_job() {
    // Rank 0 computes 10 us, rank 1 computes 40 us, then both all-reduce until 60; twice.
    for (int i = 0; i < 2; ++i) {
      const std::int64_t base = i * 100;
      step(a, i ? "ProfilerStep#2" : "ProfilerStep#1", base, base + 100);
      step(b, i ? "ProfilerStep#2" : "ProfilerStep#1", base, base + 100);
      kernel(a, "gemm", base, base + 10);
      kernel(b, "gemm", base, base + 40);
      kernel(a, "ncclKernel_AllReduce", base + 10, base + 60);
      kernel(b, "ncclKernel_AllReduce", base + 40, base + 60);
    }
    a.finalize();
    b.finalize();
  }
};

TEST(JobStragglers, TheSlowRankArrivesLastAndTheOtherWaits) {
  two_rank_job job;
  const std::vector<rank_trace> ranks{{0, &job.a, 0}, {1, &job.b, 0}};
  const auto r = analyze_job(ranks, {}, 1);
  ASSERT_EQ(r.collectives.size(), 2u);
  for (const auto& c : r.collectives) {
    EXPECT_EQ(c.last_rank, 1);
    EXPECT_DOUBLE_EQ(c.spread_us, 30);
    EXPECT_EQ(c.wait_us, (std::vector<double>{30, 0}));
  }
  EXPECT_EQ(r.collectives[0].step, 1);
  EXPECT_EQ(r.collectives[1].step, 2);
  ASSERT_EQ(r.waits.size(), 2u);
  EXPECT_DOUBLE_EQ(r.waits[0].wait_us, 60);
  EXPECT_EQ(r.waits[1].times_last, 2u);
  EXPECT_EQ(r.waits[0].wait_by_step, (std::vector<std::pair<int, double>>{{1, 30}, {2, 30}}));

  ASSERT_EQ(r.steps.size(), 4u);
  EXPECT_DOUBLE_EQ(r.steps[0].step_us, 100);
  EXPECT_EQ(r.steps[0].start_ns, 0);
  EXPECT_EQ(r.steps[0].end_ns, 100 * us);
  EXPECT_EQ(r.collectives[0].start_ns, (std::vector<std::int64_t>{10 * us, 40 * us}));
  EXPECT_EQ(r.collectives[0].end_ns, (std::vector<std::int64_t>{60 * us, 60 * us}));
  EXPECT_DOUBLE_EQ(r.steps[0].gpu_busy_us, 60);
  EXPECT_DOUBLE_EQ(r.steps[0].compute_us, 10);
  EXPECT_DOUBLE_EQ(r.steps[0].communication_us, 50);
  EXPECT_DOUBLE_EQ(r.steps[0].gpu_idle_us(), 40);

  // gemm: 20 us on rank 0, 80 us on rank 1, median 50.
  ASSERT_FALSE(r.deviations.empty());
  EXPECT_DOUBLE_EQ(std::abs(r.deviations.front().delta_us()), 30);
}

TEST(JobStragglers, ClockOffsetsShiftArrivalsAndCollectivesRealignThem) {
  two_rank_job job;
  // Rank 1's clock reads 15 us early: on the job clock it starts its all-reduce at 55.
  const std::vector<rank_trace> ranks{{0, &job.a, 0}, {1, &job.b, 15 * us}};
  analysis_options base;
  base.align = clock_alignment::base_time;
  const auto shifted = analyze_job(ranks, base, 1);
  ASSERT_EQ(shifted.collectives.size(), 2u);
  EXPECT_DOUBLE_EQ(shifted.collectives.front().spread_us, 45);
  // 25 us early: the kernels no longer overlap, so they are no collective on that clock.
  const std::vector<rank_trace> skewed{{0, &job.a, 0}, {1, &job.b, 25 * us}};
  const auto apart = analyze_job(skewed, base, 1);
  EXPECT_TRUE(apart.collectives.empty());
  EXPECT_EQ(apart.unmatched_collectives.size(), 4u);
  EXPECT_EQ(apart.clocks.used, clock_alignment::base_time);
  // The collectives say otherwise: a warning, and the offset they would give.
  ASSERT_EQ(apart.clocks.warnings.size(), 1u);
  EXPECT_EQ(apart.clocks.warnings[0].code, "TDIAG-TR-263");
  EXPECT_EQ(apart.clocks.ranks[1].collective_offset_ns, 0);
  for (const auto align : {clock_alignment::collectives, clock_alignment::automatic}) {
    analysis_options o;
    o.align = align; // ends coincide: the offset found is 0 again
    const auto aligned = analyze_job(skewed, o, 1);
    EXPECT_EQ(aligned.clock_offsets_ns, (std::vector<std::int64_t>{0, 0}));
    EXPECT_EQ(aligned.clocks.used, clock_alignment::collectives);
    ASSERT_EQ(aligned.collectives.size(), 2u);
    EXPECT_DOUBLE_EQ(aligned.collectives.front().spread_us, 30);
    EXPECT_TRUE(aligned.unmatched_collectives.empty());
    EXPECT_EQ(aligned.clocks.ranks[1].base_time_offset_ns, 25 * us);
    EXPECT_DOUBLE_EQ(aligned.clocks.ranks[1].disagreement_us, 25);
    EXPECT_EQ(aligned.clocks.warnings.size(), 1u);
  }
}

TEST(JobStragglers, AnExtraCollectiveOnOneRankIsAFindingNotAShift) {
  // Both ranks all-reduce over the world at 100 and 300; in between, rank 1 alone all-reduces
  // in a process group rank 0 is not part of. Matched as the n-th kernel, rank 1's extra one
  // would pair with rank 0's second and shift the rest.
  trace a, b;
  collective(a, "c10d::allreduce_", 1, 100, 150);
  collective(a, "c10d::allreduce_", 2, 300, 350);
  collective(b, "c10d::allreduce_", 1, 120, 150);
  collective(b, "c10d::allreduce_", 2, 200, 230); // the other process group
  collective(b, "c10d::allreduce_", 3, 310, 350);
  collective(b, "c10d::broadcast_", 4, 400, 420); // a different operator: never paired
  collective(a, "c10d::allgather_", 3, 400, 420);
  a.finalize();
  b.finalize();
  const std::vector<rank_trace> ranks{{0, &a, 0}, {1, &b, 0}};
  const auto r = analyze_job(ranks, {}, 1);
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].operation, "c10d::allreduce_");
  EXPECT_EQ(r.collectives[0].start_ns, (std::vector<std::int64_t>{100 * us, 120 * us}));
  EXPECT_EQ(r.collectives[1].start_ns, (std::vector<std::int64_t>{300 * us, 310 * us}));
  EXPECT_EQ(r.collectives[1].occurrence, 1u);
  EXPECT_EQ(r.waits[0].wait_us, 30);
  ASSERT_EQ(r.unmatched_collectives.size(), 3u);
  EXPECT_EQ(r.unmatched_collectives[0].rank, 0);
  EXPECT_EQ(r.unmatched_collectives[0].operation, "c10d::allgather_");
  EXPECT_EQ(r.unmatched_collectives[1].rank, 1);
  EXPECT_EQ(r.unmatched_collectives[1].start_ns, 200 * us);
  EXPECT_EQ(r.unmatched_collectives[2].operation, "c10d::broadcast_");
}

// HTA's two-rank sample: 10 SendRecv kernels per rank, only some of them the same collective
// (the trace keeps a sample of each rank's events). The true pairs end together.
TEST(JobStragglers, TheSharedTwoRankJobPairsOnlyTheSameCollectives) {
  const auto dir = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "hta" / "two_ranks";
  if (!std::filesystem::exists(dir))
    GTEST_SKIP() << "shared data absent: " << dir;
  const std::vector<std::string> inputs{dir.string()};
  const auto job = load_job(inputs);
  const auto ranks = rank_traces(job);
  const auto r = analyze_job(ranks, {}, 1);
  // Kernel starts in ms after 1682725898 s (epoch), per rank.
  auto ms = [&](std::size_t rank, std::int64_t ns) {
    const auto abs = ranks[rank].t->metadata.time_origin_ns + ns;
    return static_cast<double>(abs - 1682725898'000'000'000) / 1e6;
  };
  const std::vector<std::pair<std::string, std::pair<double, double>>> expected{
      {"c10d::alltoall_base_", {125.052, 129.911}},
      {"c10d::allreduce_", {295.662, 298.964}},
      {"c10d::_allgather_base_", {585.321, 585.405}},
      {"c10d::allreduce_", {1146.327, 1168.655}},
      {"c10d::_allgather_base_", {1185.890, 1187.182}}};
  ASSERT_EQ(r.collectives.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& c = r.collectives[i];
    EXPECT_EQ(c.operation, expected[i].first) << i;
    EXPECT_NEAR(ms(0, c.start_ns[0]), expected[i].second.first, 1e-6) << i;
    EXPECT_NEAR(ms(1, c.start_ns[1]), expected[i].second.second, 1e-6) << i;
    // One collective ends together on both ranks (within 0.35 ms here).
    EXPECT_NEAR(ms(0, c.end_ns[0]), ms(1, c.end_ns[1]), 0.35) << i;
  }
  EXPECT_EQ(r.collectives[0].step, 551);
  EXPECT_EQ(r.collectives[3].step, 552);
  // Rank 0's first SendRecv (an all-to-all of 384 elements) has no partner on rank 1.
  ASSERT_EQ(r.unmatched_collectives.size(), 10u);
  EXPECT_EQ(r.unmatched_collectives[0].rank, 0);
  EXPECT_NEAR(ms(0, r.unmatched_collectives[0].start_ns), 94.377, 1e-6);
  EXPECT_EQ(r.unmatched_collectives[5].rank, 1);
}

} // namespace
