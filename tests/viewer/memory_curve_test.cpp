// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic_history.hpp>
#include <tensordiag/viewer/memory_curve.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using namespace tdiag::view;

TEST(MemoryCurve, EnvelopeKeepsOneNanosecondPeaks) {
  memory_curve c;
  c.push_back(0, 100, 1000);
  for (std::int64_t t = 1; t < 500'000; t += 1000)
    c.push_back(t, 100, 1000);
  c.push_back(500'000, 900, 1000); // a spike ...
  c.push_back(500'001, 100, 1000); // ... one nanosecond wide
  for (std::int64_t t = 501'001; t < 1'000'000; t += 1000)
    c.push_back(t, 100, 1000);
  time_axis axis;
  axis.set_width(100);
  axis.set_limits(0, 1'000'000);
  axis.fit_all();
  std::vector<memory_column> cols;
  c.envelope(axis, cols);
  ASSERT_EQ(cols.size(), 100u);
  EXPECT_EQ(cols[50].allocated_max, 900);
  EXPECT_EQ(cols[50].allocated_min, 100);
  EXPECT_EQ(cols[10].allocated_max, 100);
  EXPECT_TRUE(std::all_of(cols.begin(), cols.end(), [](const auto& k) { return k.valid; }));
  EXPECT_EQ(c.peak_allocated(), 900);
  EXPECT_EQ(c.peak_allocated_time(), 500'000);
}

// The pyramid of extremes gives exactly what a scan of every sample gives, at every zoom and
// position: 300k random samples span several levels of it.
TEST(MemoryCurve, EnvelopeMatchesAScanOfEverySample) {
  std::mt19937_64 rng(11);
  memory_curve c;
  std::vector<std::int64_t> time;
  std::vector<std::int64_t> alloc;
  std::vector<std::int64_t> res;
  std::int64_t t = 0;
  for (int i = 0; i < 300'000; ++i) {
    t += 1 + static_cast<std::int64_t>(rng() % 40);
    const auto a = static_cast<std::int64_t>(rng() % 1'000'000);
    const auto r = a + static_cast<std::int64_t>(rng() % 1000);
    c.push_back(t, a, r);
    time.push_back(t), alloc.push_back(a), res.push_back(r);
  }
  time_axis axis;
  axis.set_width(337);
  axis.set_limits(0, t);
  std::vector<memory_column> cols;
  for (const double zoom : {1.0, 3.0, 40.0, 900.0, 20'000.0}) {
    axis.fit_all();
    axis.zoom_at(static_cast<double>(rng() % 337), zoom);
    c.envelope(axis, cols);
    ASSERT_EQ(cols.size(), 337u);
    std::size_t i = static_cast<std::size_t>(
        std::lower_bound(time.begin(), time.end(), axis.time_at(0.0)) - time.begin());
    for (std::size_t x = 0; x < cols.size(); ++x) {
      const std::int64_t col_end = axis.time_at(static_cast<double>(x + 1));
      memory_column want;
      auto take = [&](std::size_t k) {
        if (!want.valid)
          want = {alloc[k], alloc[k], res[k], res[k], true};
        want.allocated_min = std::min(want.allocated_min, alloc[k]);
        want.allocated_max = std::max(want.allocated_max, alloc[k]);
        want.reserved_min = std::min(want.reserved_min, res[k]);
        want.reserved_max = std::max(want.reserved_max, res[k]);
      };
      if (i > 0)
        take(i - 1);
      for (; i < time.size() && time[i] < col_end; ++i)
        take(i);
      ASSERT_EQ(cols[x].valid, want.valid) << "zoom " << zoom << " column " << x;
      ASSERT_EQ(cols[x].allocated_min, want.allocated_min) << "zoom " << zoom << " column " << x;
      ASSERT_EQ(cols[x].allocated_max, want.allocated_max) << "zoom " << zoom << " column " << x;
      ASSERT_EQ(cols[x].reserved_min, want.reserved_min) << "zoom " << zoom << " column " << x;
      ASSERT_EQ(cols[x].reserved_max, want.reserved_max) << "zoom " << zoom << " column " << x;
    }
  }
}

TEST(MemoryCurve, CarriesTheValueIntoColumnsWithoutSamples) {
  memory_curve c;
  c.push_back(10, 5, 7);
  c.push_back(90, 8, 9);
  time_axis axis;
  axis.set_width(100);
  axis.set_limits(0, 100);
  axis.fit_all();
  std::vector<memory_column> cols;
  c.envelope(axis, cols);
  EXPECT_FALSE(cols[5].valid);
  EXPECT_TRUE(cols[50].valid);
  EXPECT_EQ(cols[50].allocated_max, 5);
  EXPECT_EQ(cols[95].reserved_min, 9);
  EXPECT_EQ(c.at(89).allocated_max, 5);
  EXPECT_EQ(c.at(90).allocated_max, 8);
}

TEST(MemoryCurve, AccumulatedCurveEndsAtTheFinalState) {
  const auto t = tdiag::trace::make_snapshot_trace(5000, 2);
  const auto c = memory_curve::build(t, 0);
  ASSERT_FALSE(c.empty());
  const auto& fs = *t.final_allocator_state;
  std::uint64_t active = 0;
  for (const auto& s : fs.segments)
    active += s.active_bytes();
  EXPECT_EQ(c.allocated(c.size() - 1), static_cast<std::int64_t>(active));
  EXPECT_EQ(c.reserved(c.size() - 1), static_cast<std::int64_t>(fs.reserved_bytes()));
  EXPECT_EQ(c.allocated(0), 0);
  for (std::size_t i = 0; i < c.size(); ++i)
    ASSERT_LE(c.allocated(i), c.reserved(i));
}

} // namespace
