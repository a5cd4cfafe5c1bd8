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

namespace {

// The exact fold over events [i, end) that start at or before t1 (all of the row's events
// when zoomed in; the buckets at the view's edges and those holding a wide event otherwise).
void fold_range(const row_index& row, const time_axis& axis, const lod_options& options,
                std::size_t i, std::size_t end, std::int64_t t1, std::vector<lod_item>& out) {
  const double min_px = std::max(options.min_px, 0.0);
  while (i < end && row.start[i] <= t1) {
    const double x0 = axis.x_of(row.start[i]);
    const double x1 = axis.x_of(row.end[i]);
    if (x1 - x0 >= min_px) {
      out.push_back({x0, x1, static_cast<std::uint32_t>(i), 1, row.end[i] - row.start[i]});
      ++i;
      continue;
    }
    // Fold: take every event starting within min_px of the group's end, one search per step,
    // until a gap of min_px, a wide event, or the group's width cap.
    std::size_t j = i + 1;
    double gx1 = x1;
    while (j < end && gx1 - x0 < options.max_group_px) {
      // Events starting past the view are not in it (the next frame's pan brings them).
      const std::int64_t limit = std::min(axis.time_at(gx1 + min_px) + 1, t1 + 1);
      const std::size_t k = std::min(row.first_start_at_or_after(j, limit), end);
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

// The summary level whose buckets are at most `max_bucket_ns` wide, the coarsest such; -1
// when even level 0 is wider (zoomed in: fold_range is cheap there).
int summary_level(const row_index& row, double max_bucket_ns) {
  int level = -1;
  for (std::size_t l = 0; l < row.lod_levels.size(); ++l) {
    if (std::ldexp(1.0, row.lod_shift + static_cast<int>(l)) > max_bucket_ns)
      break;
    level = static_cast<int>(l);
  }
  return level;
}

} // namespace

void build_lod_summary(row_index& row) {
  row.lod_levels.clear();
  const std::size_t n = row.size();
  if (n < 4096)
    return;
  // Level 0: about 64 events a bucket on average.
  const double spacing =
      static_cast<double>(row.end.back() - row.start.front()) / static_cast<double>(n);
  row.lod_shift =
      std::max(0, static_cast<int>(std::ceil(std::log2(std::max(64.0 * spacing, 1.0)))));
  const std::int64_t origin = row.start.front();
  std::vector<row_index::lod_bucket> level;
  std::vector<std::int64_t> keys;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t key = (row.start[i] - origin) >> row.lod_shift;
    const std::int64_t duration = row.end[i] - row.start[i];
    if (keys.empty() || keys.back() != key) {
      keys.push_back(key);
      level.push_back({row.start[i], row.end[i], duration, static_cast<std::uint32_t>(i), 1});
      continue;
    }
    auto& b = level.back();
    b.last_end = std::max(b.last_end, row.end[i]);
    b.max_duration = std::max(b.max_duration, duration);
    ++b.count;
  }
  while (level.size() > 1) {
    std::vector<row_index::lod_bucket> up;
    std::vector<std::int64_t> up_keys;
    for (std::size_t k = 0; k < level.size(); ++k) {
      const std::int64_t key = keys[k] >> 1;
      if (up_keys.empty() || up_keys.back() != key) {
        up_keys.push_back(key);
        up.push_back(level[k]);
        continue;
      }
      auto& b = up.back();
      b.last_end = std::max(b.last_end, level[k].last_end);
      b.max_duration = std::max(b.max_duration, level[k].max_duration);
      b.count += level[k].count;
    }
    row.lod_levels.push_back(std::move(level));
    level = std::move(up);
    keys = std::move(up_keys);
  }
  row.lod_levels.push_back(std::move(level));
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
  const double ns_per_px = axis.ns_per_px();
  // Rows do not overlap, so ends are sorted too: the first event ending at or after t0.
  auto first_visible = [&](std::size_t from, std::size_t to) {
    return static_cast<std::size_t>(
        std::lower_bound(row.end.begin() + static_cast<std::ptrdiff_t>(from),
                         row.end.begin() + static_cast<std::ptrdiff_t>(to), t0) -
        row.end.begin());
  };
  // Buckets at most min_px wide: a gap inside one is narrower than min_px, as the exact fold
  // would hide it too.
  const int level = summary_level(row, min_px * ns_per_px);
  if (level < 0) {
    fold_range(row, axis, options, first_visible(0, n), n, t1, out);
    return;
  }
  const auto& buckets = row.lod_levels[static_cast<std::size_t>(level)];
  const double wide_ns = min_px * ns_per_px;
  std::size_t b = static_cast<std::size_t>(
      std::partition_point(buckets.begin(), buckets.end(),
                           [&](const row_index::lod_bucket& k) { return k.last_end < t0; }) -
      buckets.begin());
  bool open = false;
  std::uint32_t first = 0;
  std::uint32_t count = 0;
  std::int64_t group_start = 0;
  std::int64_t group_end = 0;
  auto flush = [&] {
    if (!open)
      return;
    const double x0 = axis.x_of(group_start);
    out.push_back(
        {x0, std::max(axis.x_of(group_end), x0 + 1.0), first, count, row.busy(first, count)});
    open = false;
  };
  for (; b < buckets.size() && buckets[b].first_start <= t1; ++b) {
    const auto& k = buckets[b];
    // Edges (events outside the view) and wide events: the exact fold, for this bucket only.
    if (k.first_start < t0 || k.last_end > t1 || static_cast<double>(k.max_duration) >= wide_ns) {
      flush();
      const std::size_t from =
          k.first_start < t0 ? first_visible(k.first, k.first + k.count) : std::size_t{k.first};
      fold_range(row, axis, options, from, std::size_t{k.first} + k.count, t1, out);
      continue;
    }
    if (open && (static_cast<double>(k.first_start - group_end) / ns_per_px >= min_px ||
                 axis.x_of(group_end) - axis.x_of(group_start) >= options.max_group_px))
      flush();
    if (!open) {
      open = true;
      first = k.first;
      count = 0;
      group_start = k.first_start;
    }
    count += k.count;
    group_end = k.last_end;
  }
  flush();
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
