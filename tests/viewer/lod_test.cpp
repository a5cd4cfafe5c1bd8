// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/lod.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace {

using namespace tdiag::view;

row_index random_row(std::size_t n, std::uint32_t seed, std::int64_t& end_time) {
  std::mt19937_64 rng(seed);
  row_index row;
  std::int64_t t = 1'000'000'000'000;
  for (std::size_t i = 0; i < n; ++i) {
    t += static_cast<std::int64_t>(rng() % 5000); // gaps, some zero
    // Mostly tiny events, a few long ones.
    const std::int64_t dur = rng() % 50 == 0 ? static_cast<std::int64_t>(rng() % 2'000'000)
                                             : static_cast<std::int64_t>(rng() % 3000);
    row.push_back(t, t + dur, {event_kind::kernel, static_cast<std::uint32_t>(i)});
    t += dur;
  }
  end_time = t;
  build_lod_summary(row);
  return row;
}

// Every pixel column an event touches inside the view must be covered by an item that
// accounts for that event.
void expect_existence_kept(const row_index& row, const time_axis& axis, const lod_options& o) {
  std::vector<lod_item> items;
  build_lod(row, axis, o, items);
  std::size_t counted = 0;
  std::size_t next = items.empty() ? 0 : items.front().first;
  for (const auto& it : items) {
    EXPECT_EQ(it.first, next) << "items must be contiguous";
    next = it.first + it.count;
    counted += it.count;
    for (std::uint32_t k = it.first; k < it.first + it.count; ++k) {
      const double x0 = axis.x_of(row.start[k]);
      const double x1 = axis.x_of(row.end[k]);
      // The event's pixel range lies inside its item's.
      EXPECT_GE(std::floor(x0), std::floor(it.x0) - 1e-9);
      EXPECT_LE(x1, std::max(it.x1, it.x0 + 1.0) + 1e-6);
    }
  }
  // Every event visible in [t0, t1] is in some item.
  const std::int64_t t0 = axis.time_at(0);
  const std::int64_t t1 = axis.time_at(axis.width());
  std::size_t visible = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    if (row.end[i] >= t0 && row.start[i] <= t1)
      ++visible;
  EXPECT_EQ(counted, visible);
  // Items are few: at most a couple per min_px of screen plus the wide events.
  std::size_t wide = 0;
  for (const auto& it : items)
    wide += it.count == 1 && it.x1 - it.x0 >= o.min_px;
  EXPECT_LE(items.size() - wide,
            static_cast<std::size_t>(2 * axis.width() / o.min_px + 2 * wide + 4));
}

TEST(Lod, KeepsExistenceAtEveryZoom) {
  std::int64_t end = 0;
  const row_index row = random_row(50'000, 7, end);
  time_axis axis;
  axis.set_width(1600);
  axis.set_limits(row.start.front(), end);
  axis.fit_all();
  lod_options o;
  for (int z = 0; z < 14; ++z) {
    expect_existence_kept(row, axis, o);
    axis.zoom_at(700.0 + 37.0 * z, 2.3);
  }
}

// The summary's buckets (zoomed out) and the exact fold (zoomed in, and at the view's edges)
// keep the same promises on a row long enough for several summary levels, panned so both
// edges cut through buckets; the summary is used, and changes nothing zoomed in.
TEST(Lod, SummaryKeepsExistenceAndBoundsItems) {
  std::int64_t end = 0;
  const row_index row = random_row(400'000, 13, end);
  ASSERT_GE(row.lod_levels.size(), 4u);
  row_index plain = row;
  plain.lod_levels.clear();
  time_axis axis;
  axis.set_width(1600);
  axis.set_limits(row.start.front(), end);
  lod_options o;
  std::vector<lod_item> with;
  std::vector<lod_item> without;
  for (const double zoom : {1.0, 1.7, 9.0, 60.0, 900.0, 40'000.0}) {
    axis.fit_all();
    axis.zoom_at(533.0, zoom);
    axis.pan(77.0);
    expect_existence_kept(row, axis, o);
    build_lod(row, axis, o, with);
    build_lod(plain, axis, o, without);
    EXPECT_LE(with.size(), 2 * without.size() + 8) << "zoom " << zoom;
    if (zoom >= 900.0) { // buckets wider than the pixels: the exact fold, the same items
      ASSERT_EQ(with.size(), without.size()) << "zoom " << zoom;
      for (std::size_t i = 0; i < with.size(); ++i) {
        EXPECT_EQ(with[i].first, without[i].first);
        EXPECT_EQ(with[i].count, without[i].count);
      }
    }
  }
}

TEST(Lod, EveryColumnWithAnEventShowsSomething) {
  std::int64_t end = 0;
  const row_index row = random_row(20'000, 11, end);
  time_axis axis;
  axis.set_width(1000);
  axis.set_limits(row.start.front(), end);
  axis.fit_all();
  axis.zoom_at(300, 3.0);
  std::vector<lod_item> items;
  build_lod(row, axis, {}, items);
  std::vector<bool> covered(1000, false);
  for (const auto& it : items)
    for (long x = std::max(0L, static_cast<long>(std::floor(it.x0)));
         x < std::min(1000L, static_cast<long>(std::ceil(std::max(it.x1, it.x0 + 1.0)))); ++x)
      covered[static_cast<std::size_t>(x)] = true;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const double x = axis.x_of(row.start[i]);
    if (x < 0 || x >= 1000)
      continue;
    EXPECT_TRUE(covered[static_cast<std::size_t>(x)]) << "event " << i << " at column " << x;
  }
}

TEST(Lod, WideEventsAreDrawnAlone) {
  row_index row;
  row.push_back(0, 1000, {event_kind::kernel, 0});
  row.push_back(2000, 2001, {event_kind::kernel, 1});
  row.push_back(2002, 2003, {event_kind::kernel, 2});
  row.push_back(2004, 9000, {event_kind::kernel, 3});
  time_axis axis;
  axis.set_width(100);
  axis.set_limits(0, 10'000);
  axis.fit_all(); // 100 ns per px
  std::vector<lod_item> items;
  build_lod(row, axis, {}, items);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].count, 1u);
  EXPECT_EQ(items[1].first, 1u);
  EXPECT_EQ(items[1].count, 2u);
  EXPECT_TRUE(items[1].folded());
  EXPECT_EQ(items[1].busy_ns, 2);
  EXPECT_EQ(items[2].first, 3u);
  EXPECT_EQ(items[2].count, 1u);
}

TEST(Lod, HitTestReturnsTheEventUnderTheCursor) {
  std::int64_t end = 0;
  const row_index row = random_row(5000, 3, end);
  time_axis axis;
  axis.set_width(1200);
  axis.set_limits(row.start.front(), end);
  axis.fit(row.start[100], row.end[160]);
  std::mt19937 rng(5);
  int checked = 0;
  for (std::size_t i = 100; i <= 160; ++i) {
    const double x0 = axis.x_of(row.start[i]);
    const double x1 = axis.x_of(row.end[i]);
    if (x1 - x0 < 2.0)
      continue;
    const double x = x0 + (x1 - x0) * (0.1 + 0.8 * (rng() % 1000) / 1000.0);
    const auto hit = hit_test(row, axis, x);
    ASSERT_TRUE(hit.has_value());
    EXPECT_EQ(*hit, i);
    ++checked;
  }
  EXPECT_GT(checked, 10);
  // Far from everything: nothing.
  row_index sparse;
  sparse.push_back(0, 10, {event_kind::kernel, 0});
  sparse.push_back(10'000, 10'010, {event_kind::kernel, 1});
  time_axis a2;
  a2.set_width(1000);
  a2.set_limits(0, 10'010);
  a2.fit_all();
  EXPECT_FALSE(hit_test(sparse, a2, 500.0).has_value());
  EXPECT_EQ(hit_test(sparse, a2, 1.0).value_or(99), 0u);
  EXPECT_EQ(hit_test(sparse, a2, 998.5).value_or(99), 1u);
}

} // namespace
