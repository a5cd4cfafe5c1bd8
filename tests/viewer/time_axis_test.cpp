// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/time_axis.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

using tdiag::view::time_axis;

// Trace times far from zero, as Unix-epoch nanoseconds are.
constexpr std::int64_t epoch = 1'764'000'000'000'000'000;

TEST(TimeAxis, FitMapsSpanToWidth) {
  time_axis a;
  a.set_width(1000);
  a.set_limits(epoch, epoch + 1'000'000);
  a.fit_all();
  EXPECT_NEAR(a.x_of(epoch), 0.0, 1e-9);
  EXPECT_NEAR(a.x_of(epoch + 1'000'000), 1000.0, 1e-9);
  EXPECT_EQ(a.time_at(500.0), epoch + 500'000);
}

TEST(TimeAxis, ZoomKeepsTimeUnderCursorFixed) {
  time_axis a;
  a.set_width(1600);
  a.set_limits(epoch, epoch + 3'000'000'000);
  a.fit_all();
  for (const double x : {0.0, 1.5, 400.25, 799.0, 1599.0}) {
    for (const double factor : {1.25, 2.0, 10.0, 0.8, 0.5}) {
      const double before = a.offset_at(x);
      a.zoom_at(x, factor);
      EXPECT_NEAR(a.offset_at(x), before, 1e-3) << "x=" << x << " factor=" << factor;
    }
  }
}

TEST(TimeAxis, ZoomIsBoundedAndStaysExactAtDeepZoom) {
  time_axis a;
  a.set_width(1000);
  a.set_limits(epoch, epoch + 1'000'000'000);
  a.fit_all();
  for (int i = 0; i < 200; ++i)
    a.zoom_at(321.0, 2.0);
  EXPECT_DOUBLE_EQ(a.ns_per_px(), time_axis::min_ns_per_px);
  // 100 px per ns: consecutive nanoseconds are 100 px apart even near the epoch.
  const std::int64_t t = a.time_at(321.0);
  EXPECT_NEAR(a.x_of(t + 1) - a.x_of(t), 100.0, 1e-6);
  for (int i = 0; i < 200; ++i)
    a.zoom_at(10.0, 0.5);
  EXPECT_DOUBLE_EQ(a.ns_per_px(), a.max_ns_per_px());
}

TEST(TimeAxis, PanMovesByPixelsAndClamps) {
  time_axis a;
  a.set_width(1000);
  a.set_limits(0, 1'000'000);
  a.fit(0, 100'000); // 100 ns per px
  a.pan(10.0);
  EXPECT_EQ(a.start(), 1000);
  a.pan(1e9); // far past the end: a tenth of the view stays on the trace
  EXPECT_LE(a.start(), 1'000'000);
  EXPECT_GE(a.end(), 1'000'000);
  a.pan(-1e9);
  EXPECT_GE(a.end(), 0);
}

TEST(TimeAxis, CenterOn) {
  time_axis a;
  a.set_width(200);
  a.set_limits(0, 1'000'000);
  a.fit(0, 2000);
  a.center_on(500'000);
  EXPECT_NEAR(a.x_of(500'000), 100.0, 1e-9);
}

// Ruler labels: ticks 5 ms apart at 4.88 s must not all read "4.88 s".
TEST(TimeAxis, TickLabelsResolveTheirStep) {
  using tdiag::view::format_time_tick;
  EXPECT_EQ(format_time_tick(4.885e9, 5e6), "4.885 s");
  EXPECT_EQ(format_time_tick(4.890e9, 5e6), "4.890 s");
  EXPECT_EQ(format_time_tick(4.8851e9, 1e5), "4.8851 s");
  EXPECT_EQ(format_time_tick(12.5e6, 2.5e6), "12.5 ms");
  EXPECT_EQ(format_time_tick(2e9, 1e9), "2 s");
  EXPECT_EQ(format_time_tick(750.0, 50.0), "750 ns");
}

} // namespace

namespace {

// A million instants in a 1600-px view: one per column holding any, each the column's first.
TEST(OnePerColumn, BoundsMarkersByPixels) {
  using namespace tdiag::view;
  std::vector<std::int64_t> times;
  for (std::int64_t i = 0; i < 1'000'000; ++i)
    times.push_back(1000 + i * 7 + (i % 3));
  time_axis axis;
  axis.set_width(1600);
  axis.set_limits(0, times.back() + 1000);
  axis.fit_all();
  std::vector<std::size_t> shown;
  one_per_column(
      times.size(), [&](std::size_t i) { return times[i]; }, axis, 0.0, shown);
  ASSERT_FALSE(shown.empty());
  EXPECT_LE(shown.size(), 2u * 1600u);
  EXPECT_EQ(shown.front(), 0u);
  for (std::size_t k = 1; k < shown.size(); ++k) {
    const auto a = static_cast<std::int64_t>(std::floor(axis.x_of(times[shown[k - 1]])));
    const auto b = static_cast<std::int64_t>(std::floor(axis.x_of(times[shown[k]])));
    EXPECT_GT(b, a - 1) << "in time order, at most two in a column";
    EXPECT_LT(shown[k - 1], shown[k]);
  }
  // Zoomed in so far that every instant has its own column: all of them in view are shown.
  axis.fit(times[500] - 1, times[520] + 1);
  one_per_column(
      times.size(), [&](std::size_t i) { return times[i]; }, axis, 0.0, shown);
  ASSERT_EQ(shown.size(), 21u);
  EXPECT_EQ(shown.front(), 500u);
  // No instants, nothing shown.
  one_per_column(
      0, [&](std::size_t i) { return times[i]; }, axis, 0.0, shown);
  EXPECT_TRUE(shown.empty());
}

} // namespace
