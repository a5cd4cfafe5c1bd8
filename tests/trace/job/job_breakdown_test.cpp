// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The per-rank breakdowns on hand-built traces whose figures are worked out in the comments.
#include <tensordiag/trace/job_analysis.hpp>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

using namespace tdiag::trace;

constexpr std::int64_t us = 1000;

struct builder {
  trace t;
  std::uint32_t next_correlation = 1;

  // A kernel on `stream` over [start, end) us, launched by cudaLaunchKernel at `launch` us.
  void kernel(const char* name, std::uint64_t stream, std::int64_t start, std::int64_t end,
              std::int64_t launch = -1) {
    kernel_event k;
    k.start = start * us;
    k.end = end * us;
    k.stream = stream;
    k.lane = t.lanes.gpu(0, stream);
    k.name = t.strings.intern(name);
    k.correlation = next_correlation++;
    t.kernels.push_back(k);
    if (launch >= 0) {
      api_event a;
      a.start = launch * us;
      a.end = (launch + 2) * us;
      a.lane = t.lanes.host(1, 1);
      a.name = t.strings.intern("cudaLaunchKernel");
      a.correlation = k.correlation;
      t.api_calls.push_back(a);
    }
  }
  rank_analysis analyze() {
    t.finalize();
    return analyze_rank(t, 0);
  }
};

TEST(JobBreakdown, TemporalSplitsIdleComputeAndNonCompute) {
  builder b;
  b.kernel("gemm", 7, 0, 10);                 // compute [0, 10)
  b.kernel("ncclKernel_AllReduce", 8, 5, 20); // communication [5, 20)
  b.kernel("gemm", 7, 30, 40);                // compute; [20, 30) is idle
  const auto r = b.analyze();
  EXPECT_DOUBLE_EQ(r.temporal.kernel_us, 40);
  EXPECT_DOUBLE_EQ(r.temporal.idle_us, 10);
  EXPECT_DOUBLE_EQ(r.temporal.compute_us, 20);
  EXPECT_DOUBLE_EQ(r.temporal.non_compute_us, 10);
  // Communication [5, 20) is overlapped by computation over [5, 10): a third of it.
  ASSERT_TRUE(r.comp_comm_overlap_pct);
  EXPECT_NEAR(*r.comp_comm_overlap_pct, 100.0 / 3.0, 1e-9);
  std::map<std::string, double> types;
  for (const auto& k : r.kernel_types)
    types[k.type] = k.sum_us;
  EXPECT_DOUBLE_EQ(types["COMPUTATION"], 15);   // [0, 5) and [30, 40)
  EXPECT_DOUBLE_EQ(types["COMMUNICATION"], 10); // [10, 20)
  EXPECT_DOUBLE_EQ(types["COMPUTATION overlapping COMMUNICATION"], 5);
}

TEST(JobBreakdown, IdleGapsAreHostWaitKernelWaitOrOther) {
  builder b;
  b.kernel("a", 7, 0, 10, 0);
  b.kernel("b", 7, 15, 20, 3);     // gap 5 us, launched before a ended: kernel wait
  b.kernel("c", 7, 100, 110, 60);  // launched at 60 after b ended at 20: host wait (80 us)
  b.kernel("d", 7, 200, 210, 101); // launched at 101 before c ended; gap 90 >= 30: other
  const auto r = b.analyze();
  ASSERT_EQ(r.idle.size(), 1u);
  const auto& s = r.idle.front();
  EXPECT_EQ(s.stream, 7u);
  EXPECT_DOUBLE_EQ(s.by_category[0].time_us, 80);
  EXPECT_DOUBLE_EQ(s.by_category[1].time_us, 5);
  EXPECT_DOUBLE_EQ(s.by_category[2].time_us, 90);
  ASSERT_TRUE(s.by_category[0].ratio);
  EXPECT_NEAR(*s.by_category[0].ratio, 80.0 / 175.0, 1e-12);
  EXPECT_EQ(s.by_category[2].gaps.count, 1u); // the first kernel has no gap
}

// Launches that share a correlation id pair in order: N of them with N kernels are N launches,
// not the N x N pairs of a merge on the id (8,000 of them took 7 s and 1.5 GB).
TEST(JobBreakdown, LaunchesSharingAnIdPairInOrder) {
  builder b;
  constexpr int n = 3000;
  for (int i = 0; i < n; ++i) {
    b.next_correlation = 1;
    b.kernel("k", 7, 10 * i + 5, 10 * i + 8, 10 * i);
  }
  b.kernel("own", 7, 40000, 40001, 39990); // an id of its own: paired as before
  const auto r = b.analyze();
  EXPECT_EQ(r.launches.num_launches, n + 1u);
  EXPECT_EQ(r.launches.shared_correlation_launches, static_cast<std::size_t>(n));
  // Each launch ends at 10i + 2 and its own kernel starts at 10i + 5: 3 us, never a later one.
  ASSERT_TRUE(r.launches.launch_delay.max);
  EXPECT_DOUBLE_EQ(*r.launches.launch_delay.max, 8);
  EXPECT_DOUBLE_EQ(*r.launches.launch_delay.p50, 3);
}

TEST(JobBreakdown, LaunchStatisticsUseHtaCutoffs) {
  builder b;
  b.kernel("short", 7, 10, 11, 0);   // cpu 2 us, gpu 1 us: short; delay 10 - 2 = 8 us
  b.kernel("late", 7, 300, 400, 50); // delay 300 - 52 = 248 us > 100: an outlier
  const auto r = b.analyze();
  EXPECT_EQ(r.launches.num_launches, 2u);
  EXPECT_EQ(r.launches.short_kernels, 1u);
  EXPECT_EQ(r.launches.runtime_outliers, 0u);
  EXPECT_EQ(r.launches.launch_delay_outliers, 1u);
  EXPECT_DOUBLE_EQ(r.launches.launch_delay.sum, 8 + 248);
  ASSERT_EQ(r.queues.size(), 1u);
  // +1 at 0, -1 at 10, +1 at 50, -1 at 300: lengths 1 0 1 0.
  EXPECT_EQ(r.queues.front().length.count, 4u);
  EXPECT_DOUBLE_EQ(*r.queues.front().length.mean, 0.5);
}

TEST(JobBreakdown, TopKernelsGroupTheTailAsOthers) {
  builder b;
  // 12 computation kernels, k0 longest (12 us) ... k11 shortest (1 us).
  for (int i = 0; i < 12; ++i)
    b.kernel(("k" + std::to_string(i)).c_str(), 7, i * 100, i * 100 + (12 - i));
  analysis_options o;
  const auto r = b.analyze();
  ASSERT_EQ(r.kernels.size(), 12u);
  bool others = false;
  for (const auto& k : r.top_kernels)
    others = others || k.name == "others";
  EXPECT_TRUE(others);
  EXPECT_LT(r.top_kernels.size(), 12u);
  double total = 0;
  for (const auto& k : r.top_kernels)
    total += k.sum_us;
  EXPECT_DOUBLE_EQ(total, 78); // 12 + 11 + ... + 1: nothing lost in the grouping
}

TEST(JobBreakdown, DescribeMatchesPandas) {
  // pandas: pd.Series([1, 2, 3, 4, 10]).describe()
  const auto d = describe({10, 1, 3, 2, 4});
  EXPECT_EQ(d.count, 5u);
  EXPECT_DOUBLE_EQ(*d.mean, 4);
  EXPECT_NEAR(*d.std, 3.5355339059327378, 1e-12);
  EXPECT_DOUBLE_EQ(*d.p25, 2);
  EXPECT_DOUBLE_EQ(*d.p50, 3);
  EXPECT_DOUBLE_EQ(*d.p75, 4);
  EXPECT_FALSE(describe({5}).std); // pandas gives NaN for one value
  EXPECT_FALSE(describe({}).mean);
}

} // namespace
