// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Stragglers, step times and rank deviations on a hand-built two-rank job.
#include <tensordiag/trace/job_analysis.hpp>

#include <gtest/gtest.h>

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
  // Rank 1's clock reads 25 us early: on the job clock it starts its all-reduce at 65.
  const std::vector<rank_trace> ranks{{0, &job.a, 0}, {1, &job.b, 25 * us}};
  const auto shifted = analyze_job(ranks, {}, 1);
  EXPECT_DOUBLE_EQ(shifted.collectives.front().spread_us, 55);
  analysis_options o;
  o.align_collectives = true; // ends coincide: the offset found is 0 again
  const auto aligned = analyze_job(ranks, o, 1);
  EXPECT_EQ(aligned.clock_offsets_ns, (std::vector<std::int64_t>{0, 0}));
  EXPECT_DOUBLE_EQ(aligned.collectives.front().spread_us, 30);
}

} // namespace
