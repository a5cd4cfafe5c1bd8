// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Why the last rank was late: delays planted on one rank of a synthetic job whose clocks are
// off by up to +-5 ms, found on the default clock.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/synthetic_job.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace tdiag::trace;

constexpr std::int64_t us = 1000;

std::vector<rank_trace> ranks_of(const synthetic_job& job) {
  std::vector<rank_trace> out;
  for (std::size_t r = 0; r < job.traces.size(); ++r)
    out.push_back({static_cast<int>(r), &job.traces[r], 0});
  return out;
}

// The collectives more than `us_late` late.
std::vector<const collective_wait*> late(const job_analysis_result& r, double us_late) {
  std::vector<const collective_wait*> out;
  for (const auto& c : r.collectives)
    if (c.cause.late_us > us_late)
      out.push_back(&c);
  return out;
}

TEST(JobStragglerCauses, APlantedKernelAndAPlantedHostGapAreNamed) {
  synthetic_job_options o;
  o.ranks = 8;
  o.tensor_parallel = 4;
  o.delays = {{6, 2, 5, planted_delay::kind::kernel, 2'000 * us},
              {3, 3, 0, planted_delay::kind::host_gap, 3'000 * us}};
  const auto job = make_synthetic_job(o);
  const auto r = analyze_job(ranks_of(job), {}, 1);
  EXPECT_EQ(r.clocks.used, clock_alignment::collectives);
  // The delays leave the clocks alone: every collective still ends together.
  for (std::size_t i = 0; i < job.traces.size(); ++i)
    EXPECT_LE(std::abs(r.clock_offsets_ns[i] - job.expected_offset_ns(i)), 2 * us) << i;
  // The tensor-parallel all-reduce the planted rank was late for, then each data-parallel one
  // of that step: there the planted rank is late for the same reason, and the others because
  // their tensor-parallel all-reduce waited for it.
  const auto slow = late(r, 1'000);
  ASSERT_EQ(slow.size(), 10u);
  for (const auto* c : slow) {
    const int planted = c->step == 2 ? 6 : 3;
    if (c->last_rank == planted)
      EXPECT_EQ(c->cause.cause, c->step == 2 ? late_cause::compute : late_cause::host_gap);
    else
      EXPECT_EQ(c->cause.cause, late_cause::collective) << c->step << " " << c->last_rank;
  }
  ASSERT_EQ(slow[0]->group, "2"); // ranks 4..7
  ASSERT_EQ(slow[5]->group, "1"); // ranks 0..3
  const auto& k = *slow[0];       // the kernel, in step 2
  EXPECT_EQ(k.step, 2);
  EXPECT_EQ(k.last_rank, 6);
  EXPECT_EQ(k.operation, "c10d::allreduce_");
  EXPECT_EQ(k.cause.cause, late_cause::compute);
  EXPECT_NEAR(k.cause.late_us, 2'000, 100);
  EXPECT_NEAR(k.cause.excess_us[static_cast<int>(late_cause::compute)], 2'000, 100);
  ASSERT_FALSE(k.cause.kernels.empty());
  EXPECT_EQ(k.cause.kernels[0].name, "planted_slow_kernel");
  EXPECT_NEAR(k.cause.kernels[0].excess_us(), 2'000, 1);
  EXPECT_EQ(k.cause.focus_end_ns - k.cause.focus_start_ns, 2'000 * us);
  EXPECT_GE(k.cause.focus_start_ns, k.cause.window_start_ns);
  EXPECT_LE(k.cause.focus_end_ns, k.cause.window_end_ns);

  const auto& g = *slow[5]; // the host gap, in step 3
  EXPECT_EQ(g.step, 3);
  EXPECT_EQ(g.last_rank, 3);
  EXPECT_EQ(g.cause.cause, late_cause::host_gap);
  EXPECT_GT(g.cause.excess_us[static_cast<int>(late_cause::host_gap)], 2'500);
  EXPECT_NE(g.cause.gap_host.find("DataLoader"), std::string::npos) << g.cause.gap_host;
  EXPECT_GT(g.cause.gap_end_ns - g.cause.gap_start_ns, 2'900 * us);
  EXPECT_EQ(g.cause.focus_start_ns, g.cause.gap_start_ns);

  // Summed per rank and per step.
  const auto& w6 = r.waits[6];
  EXPECT_GE(w6.late_by_cause_us[static_cast<int>(late_cause::compute)], 1'900);
  bool step2 = false;
  for (const auto& s : w6.late_by_step)
    step2 = step2 || (s.step == 2 && s.late_us >= 1'900);
  EXPECT_TRUE(step2);
  EXPECT_GE(r.waits[3].late_by_cause_us[static_cast<int>(late_cause::host_gap)], 2'500);
  const auto json = analysis_json(r);
  EXPECT_NE(json.find("\"kind\": \"host_gap\""), std::string::npos);
  EXPECT_NE(json.find("planted_slow_kernel"), std::string::npos);
  EXPECT_NE(json.find("\"late_by_cause_us\""), std::string::npos);
}

TEST(JobStragglerCauses, WithoutDelaysNoRankIsLateByMuch) {
  synthetic_job_options o;
  o.ranks = 4;
  o.tensor_parallel = 2;
  const auto job = make_synthetic_job(o);
  const auto r = analyze_job(ranks_of(job), {}, 1);
  EXPECT_TRUE(late(r, 200).empty());
}

TEST(JobStragglerCauses, ALongerGemmOnOneRankIsCompute) {
  // Rank 1's gemm takes 40 us where rank 0's takes 10: it reaches the all-reduce 30 us late.
  trace a, b;
  for (auto* t : {&a, &b}) {
    const bool slow = t == &b;
    kernel_event g;
    g.start = 0;
    g.end = (slow ? 40 : 10) * us;
    g.stream = 7;
    g.lane = t->lanes.gpu(0, 7);
    g.name = t->strings.intern("gemm");
    t->kernels.push_back(g);
    kernel_event n = g;
    n.start = g.end;
    n.end = 60 * us;
    n.name = t->strings.intern("ncclKernel_AllReduce");
    t->kernels.push_back(n);
    t->finalize();
  }
  const std::vector<rank_trace> ranks{{0, &a, 0}, {1, &b, 0}};
  const auto r = analyze_job(ranks, {}, 1);
  ASSERT_EQ(r.collectives.size(), 1u);
  const auto& c = r.collectives[0].cause;
  EXPECT_EQ(r.collectives[0].last_rank, 1);
  EXPECT_EQ(c.cause, late_cause::compute);
  EXPECT_DOUBLE_EQ(c.late_us, 30);
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].name, "gemm");
  EXPECT_DOUBLE_EQ(c.kernels[0].us, 40);
  EXPECT_DOUBLE_EQ(c.kernels[0].median_us, 10);
  EXPECT_EQ(to_string(late_cause::host_gap), "host_gap");
}

} // namespace
