// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The synthetic job: its size, its clocks and collectives that end together.
#include <tensordiag/trace/synthetic_job.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <vector>

namespace {

using namespace tdiag::trace;

TEST(SyntheticJob, SizeClocksAndCollectivesAsAsked) {
  synthetic_job_options o;
  o.ranks = 8;
  o.tensor_parallel = 4;
  o.layers = layers_for_events(o, 20'000);
  const auto job = make_synthetic_job(o);
  ASSERT_EQ(job.traces.size(), 8u);
  ASSERT_EQ(job.clock_error_ns.size(), 8u);
  EXPECT_EQ(job.expected_offset_ns(0), 0);
  for (std::size_t r = 0; r < job.traces.size(); ++r) {
    const auto& t = job.traces[r];
    EXPECT_TRUE(t.finalized());
    EXPECT_LE(std::abs(job.clock_error_ns[r]), o.max_clock_shift_ns);
    EXPECT_NEAR(static_cast<double>(t.event_count()), 20'000.0, 2'000.0);
    // Per step: a tensor-parallel all-reduce per layer, one data-parallel, one world.
    EXPECT_EQ(t.collectives.size(), o.steps * (o.layers + 2));
    EXPECT_EQ(t.ranges.size(), o.steps);
  }
  // The n-th collective of rank 0's tensor-parallel group ends together on its members, on the
  // job's clock (each rank's times minus its clock error), within the jitter.
  std::vector<std::vector<std::int64_t>> ends(4);
  for (std::size_t r = 0; r < 4; ++r) {
    const auto& t = job.traces[r];
    for (const auto& k : t.kernels.all())
      if (const auto* c = t.collective_of(k.correlation); c && t.name(c->group) == "1")
        ends[r].push_back(k.end - job.clock_error_ns[r]);
  }
  ASSERT_EQ(ends[0].size(), o.steps * o.layers);
  for (std::size_t i = 0; i < ends[0].size(); ++i)
    for (std::size_t r = 1; r < 4; ++r)
      EXPECT_LE(std::abs(ends[r][i] - ends[0][i]), 2 * o.end_jitter_ns) << i << " " << r;
  // Same options, same job.
  const auto again = make_synthetic_job(o);
  EXPECT_EQ(again.clock_error_ns, job.clock_error_ns);
  EXPECT_TRUE(std::ranges::equal(again.traces[3].kernels.all(), job.traces[3].kernels.all()));
}

TEST(SyntheticJob, PlantedDelaysLengthenOneRank) {
  synthetic_job_options o;
  o.ranks = 4;
  o.tensor_parallel = 2;
  o.max_clock_shift_ns = 0;
  o.delays = {{1, 2, 0, planted_delay::kind::kernel, 1'000'000},
              {2, 3, 1, planted_delay::kind::host_gap, 2'000'000}};
  const auto job = make_synthetic_job(o);
  std::size_t planted = 0;
  for (const auto& k : job.traces[1].kernels.all())
    if (job.traces[1].name(k.name) == "planted_slow_kernel") {
      ++planted;
      EXPECT_EQ(k.end - k.start, 1'000'000);
    }
  EXPECT_EQ(planted, 1u);
  std::size_t loader = 0;
  for (const auto& a : job.traces[2].api_calls.all())
    if (job.traces[2].name(a.name).starts_with("enumerate(DataLoader)")) {
      ++loader;
      EXPECT_EQ(a.end - a.start, 2'000'000);
    }
  EXPECT_EQ(loader, 1u);
}

} // namespace
