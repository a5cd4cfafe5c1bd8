// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Level of detail for one timeline row (Tracy's MinVisSize folding): an event at least
// `min_px` wide is drawn as itself; runs of narrower events fold into one density box that
// carries how many events it holds and how busy they keep the row. Zoomed in, each box costs
// one search per `min_px` of screen it covers; zoomed out, boxes are made of the buckets of
// a precomputed multi-resolution summary (build_lod_summary), so a frame costs O(pixels),
// not O(events). Existence is never lost: every pixel column an event touches is covered by
// an item, and gaps of at least `min_px` stay visible.
#pragma once

#include <tensordiag/viewer/lane_layout.hpp>
#include <tensordiag/viewer/time_axis.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tdiag::view {

struct lod_options {
  double min_px = 3.0;        ///< narrower events fold
  double max_group_px = 24.0; ///< a density box stops growing at this width
};

/// One thing to draw: a single event (count == 1) or a density box (count > 1) spanning
/// [x0, x1] in pixels from the plot's left edge (may reach outside the plot).
struct lod_item {
  double x0 = 0.0;
  double x1 = 0.0;
  std::uint32_t first = 0; ///< index in the row of the first event
  std::uint32_t count = 0;
  std::int64_t busy_ns = 0; ///< summed durations of the events inside
  [[nodiscard]] bool folded() const noexcept { return count > 1; }
  /// Fraction of [x0, x1] the events keep busy, in [0, 1].
  [[nodiscard]] double occupancy(double ns_per_px) const noexcept;
};

/// Builds `row.lod_levels`: buckets of about 64 events at level 0, twice as wide at each level
/// above. With it, a frame at a zoom where a bucket is at most `min_px` wide folds
/// whole buckets (read in order from a small array) instead of searching the events: the
/// cost per row is O(pixels) whatever the number of events. About 1 byte per event.
void build_lod_summary(row_index& row);

/// Fills `out` (cleared first) with the items of `row` visible through `axis`.
void build_lod(const row_index& row, const time_axis& axis, const lod_options& options,
               std::vector<lod_item>& out);

/// Index in `row` of the event under pixel `x`: the event containing that time, else the
/// nearest one within `tolerance_px`; nullopt when none is that close.
[[nodiscard]] std::optional<std::size_t> hit_test(const row_index& row, const time_axis& axis,
                                                  double x, double tolerance_px = 3.0);

} // namespace tdiag::view
