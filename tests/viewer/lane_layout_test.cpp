// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/viewer/lane_layout.hpp>
#include <tensordiag/viewer/lod.hpp>

#include <gtest/gtest.h>

namespace {

using namespace tdiag::view;
namespace tt = tdiag::trace;

TEST(LaneLayout, GpuTracksFirstThenHostThreadsAndEveryEventOnce) {
  tt::synthetic_options o;
  o.kernels = 3000;
  o.streams_per_device = 3;
  const auto t = tt::make_synthetic_trace(o);
  const auto layout = lane_layout::build(t);
  ASSERT_GE(layout.tracks().size(), 4u);
  bool seen_host = false;
  std::size_t total = 0;
  for (const auto& tr : layout.tracks()) {
    if (tr.kind == track_kind::host_thread)
      seen_host = true;
    else
      EXPECT_FALSE(seen_host) << "GPU tracks come first";
    for (const auto& row : tr.rows) {
      total += row.size();
      for (std::size_t i = 1; i < row.size(); ++i) {
        EXPECT_LE(row.start[i - 1], row.start[i]);
        EXPECT_LE(row.end[i - 1], row.start[i]) << "rows must not overlap";
      }
    }
  }
  EXPECT_EQ(total, t.kernels.size() + t.copies.size() + t.api_calls.size() + t.ranges.size());
}

TEST(LaneLayout, NestedEventsGoOneRowDeeper) {
  tt::trace t;
  const auto lane = t.lanes.host(1, 2);
  const auto name = t.strings.intern("op");
  t.api_calls.push_back({0, 100, lane, name});
  t.api_calls.push_back({10, 50, lane, name});
  t.api_calls.push_back({20, 30, lane, name});
  t.api_calls.push_back({60, 90, lane, name});
  t.finalize();
  const auto layout = lane_layout::build(t);
  ASSERT_EQ(layout.tracks().size(), 1u);
  const auto& rows = layout.tracks()[0].rows;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].size(), 1u);
  EXPECT_EQ(rows[1].size(), 2u);
  EXPECT_EQ(rows[2].size(), 1u);
}

TEST(LaneLayout, RowAtAndFindAgree) {
  const auto t = tt::make_synthetic_trace({.kernels = 500});
  auto layout = lane_layout::build(t);
  layout.set_metrics(20.0f, 18.0f, 6.0f);
  for (std::size_t k = 0; k < layout.tracks().size(); ++k) {
    const auto& tr = layout.tracks()[k];
    for (std::size_t r = 0; r < tr.rows.size(); ++r) {
      const float y = layout.row_y(k, r) + 9.0f;
      EXPECT_EQ(layout.row_at(y), (row_hit{k, r}));
      if (tr.rows[r].size() > 0) {
        const event_ref e = tr.rows[r].refs[tr.rows[r].size() / 2];
        EXPECT_EQ(layout.find(e, t), (row_hit{k, r}));
      }
    }
    EXPECT_FALSE(layout.row_at(tr.y + 5.0f).has_value()) << "the header is not a row";
  }
}

TEST(LaneLayout, HitTestingThroughLayoutFindsTheEvent) {
  const auto t = tt::make_synthetic_trace({.kernels = 2000});
  auto layout = lane_layout::build(t);
  layout.set_metrics(20.0f, 18.0f, 6.0f);
  const auto& tr = layout.tracks().front();
  const auto& row = tr.rows.front();
  ASSERT_GT(row.size(), 10u);
  time_axis axis;
  axis.set_width(1000);
  axis.set_limits(t.span().begin, t.span().end);
  axis.fit(row.start[5], row.end[5]); // one kernel fills the view
  const auto hit_row = layout.row_at(layout.row_y(0, 0) + 4.0f);
  ASSERT_TRUE(hit_row.has_value());
  const auto i = hit_test(layout.tracks()[hit_row->track].rows[hit_row->row], axis, 500.0);
  ASSERT_TRUE(i.has_value());
  const event_ref e = row.refs[*i];
  EXPECT_EQ(e.kind, event_kind::kernel);
  EXPECT_EQ(times_of(t, e).begin, row.start[5]);
}

} // namespace
