// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/lod.hpp>

#include <algorithm>
#include <cmath>

namespace tdiag::view {
double lod_item::occupancy(double ns_per_px) const noexcept {
  const double span_ns = (x1 - x0) * ns_per_px;
  if (span_ns <= 0.0)
    return 1.0;
  return std::clamp(static_cast<double>(busy_ns) / span_ns, 0.0, 1.0);
}

void build_lod(const row_index& row, const time_axis& axis, const lod_options& options,
               std::vector<lod_item>& out) {
  out.clear();
  const std::size_t n = row.size();
  if (n == 0)
    return;
  const std::int64_t t0 = axis.time_at(0.0);
  const std::int64_t t1 = axis.time_at(axis.width()) + 1;
  const double min_px = std::max(options.min_px, 0.0);
  // Rows do not overlap, so ends are sorted too: the first event ending at or after t0.
  std::size_t i = static_cast<std::size_t>(std::lower_bound(row.end.begin(), row.end.end(), t0) -
                                           row.end.begin());
  while (i < n && row.start[i] <= t1) {
    const double x0 = axis.x_of(row.start[i]);
    const double x1 = axis.x_of(row.end[i]);
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<std::uint32_t>(i), 1, row.end[i] - row.start[i]});
      ++i;
      continue;
    }
    // Fold: take every event starting within min_px of the group's end, one binary search
    // per step, until a gap of min_px, a wide event, or the group's width cap.
    std::size_t j = i + 1;
    double gx1 = x1;
    while (j < n && gx1 - x0 < options.max_group_px) {
      const std::int64_t limit = axis.time_at(gx1 + min_px) + 1;
      const std::size_t k = row.first_start_at_or_after(j, limit);
      if (k == j)
        break;
      const std::size_t last = k - 1;
      if (axis.x_of(row.end[last]) - axis.x_of(row.start[last]) >= min_px) {
        // A wide event ends the run; it is drawn on its own next.
        if (last > j)
          gx1 = std::max(gx1, axis.x_of(row.end[last - 1]));
        j = last;
        break;
      }
      gx1 = std::max(gx1, axis.x_of(row.end[last]));
      j = k;
    }
    const auto count = static_cast<std::uint32_t>(j - i);
    out.push_back(
        {x0, std::max(gx1, x0 + 1.0), static_cast<std::uint32_t>(i), count, row.busy(i, count)});
    i = j;
  }
}

std::optional<std::size_t> hit_test(const row_index& row, const time_axis& axis, double x,
                                    double tolerance_px) {
  const std::size_t n = row.size();
  if (n == 0)
    return std::nullopt;
  const double t = axis.offset_at(x) + static_cast<double>(axis.limit_begin());
  // Last event starting at or before t.
  auto it = std::upper_bound(row.start.begin(), row.start.end(), t,
                             [](double v, std::int64_t s) { return v < static_cast<double>(s); });
  std::optional<std::size_t> best;
  double best_px = tolerance_px;
  auto consider = [&](std::size_t i) {
    const double x0 = axis.x_of(row.start[i]);
    const double x1 = std::max(axis.x_of(row.end[i]), x0 + 1.0);
    const double d = x < x0 ? x0 - x : (x > x1 ? x - x1 : 0.0);
    if (d <= best_px && (!best || d < best_px)) {
      best = i;
      best_px = d;
    }
  };
  const auto after = static_cast<std::size_t>(it - row.start.begin());
  if (after > 0)
    consider(after - 1);
  if (after < n)
    consider(after);
  return best;
}

} // namespace tdiag::view
