// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The horizontal axis of every time-based view: which nanosecond each pixel column shows, with
// zoom at the cursor and pan. Trace times are int64 ns that may be far from 0 (Unix epoch), so
// the axis keeps an int64 origin and a double offset from it: sub-nanosecond zoom stays exact.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace tdiag::view {

class time_axis {
public:
  /// Smallest zoom: this many ns per pixel (100 pixels per ns).
  static constexpr double min_ns_per_px = 0.01;

  /// Sets the trace span the axis may show; zoom-out stops a little beyond it and pan keeps
  /// part of it in view. An empty span is widened to 1 µs.
  void set_limits(std::int64_t begin, std::int64_t end) noexcept;
  /// Sets the plot width in pixels (at least 1); keeps the start and the scale.
  void set_width(double width_px) noexcept;
  /// Shows [t0, t1] across the width (t1 > t0, else 1 ns).
  void fit(std::int64_t t0, std::int64_t t1) noexcept;
  /// Shows the whole span given to set_limits().
  void fit_all() noexcept { fit(limit_begin_, limit_end_); }

  /// Pixel offset from the plot's left edge of time `t` (may be outside [0, width]).
  [[nodiscard]] double x_of(std::int64_t t) const noexcept {
    return (static_cast<double>(t - limit_begin_) - offset_) / ns_per_px_;
  }
  /// The time at pixel offset `x` (rounded towards minus infinity).
  [[nodiscard]] std::int64_t time_at(double x) const noexcept;
  /// The time at pixel offset `x`, exact (ns relative to the axis origin = limits' begin).
  [[nodiscard]] double offset_at(double x) const noexcept { return offset_ + x * ns_per_px_; }

  /// Zooms by `factor` (> 1 zooms in) keeping the time under pixel `x` where it is, unless the
  /// zoom limits stop it (then the scale is clamped and `x` still keeps its time).
  void zoom_at(double x, double factor) noexcept;
  /// Moves the view by `dx_px` pixels (positive: later times come into view), clamped so the
  /// trace never leaves the view entirely.
  void pan(double dx_px) noexcept;
  /// Centres time `t` without changing the scale.
  void center_on(std::int64_t t) noexcept;

  [[nodiscard]] std::int64_t start() const noexcept { return time_at(0); }
  [[nodiscard]] std::int64_t end() const noexcept { return time_at(width_); }
  [[nodiscard]] double ns_per_px() const noexcept { return ns_per_px_; }
  [[nodiscard]] double width() const noexcept { return width_; }
  [[nodiscard]] std::int64_t limit_begin() const noexcept { return limit_begin_; }
  [[nodiscard]] std::int64_t limit_end() const noexcept { return limit_end_; }
  /// Largest scale allowed: the whole span in a quarter of the width.
  [[nodiscard]] double max_ns_per_px() const noexcept;

private:
  void clamp_offset() noexcept;

  std::int64_t limit_begin_ = 0;
  std::int64_t limit_end_ = 1000;
  double offset_ = 0.0; // ns from limit_begin_ at pixel 0
  double ns_per_px_ = 1.0;
  double width_ = 1000.0;
};

/// Of `n` instants sorted by time (`time_of(i)`), the first in each pixel column of `axis`
/// between -margin_px and width + margin_px, into `out` (cleared first): what to draw when
/// thousands of markers share a pixel. O(columns x log n), whatever n.
template <class TimeOf>
void one_per_column(std::size_t n, TimeOf&& time_of, const time_axis& axis, double margin_px,
                    std::vector<std::size_t>& out) {
  out.clear();
  auto first_at_or_after = [&](std::size_t lo, std::int64_t t) {
    std::size_t hi = n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (time_of(mid) < t)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  const std::int64_t last = axis.time_at(axis.width() + margin_px);
  for (std::size_t i = first_at_or_after(0, axis.time_at(-margin_px)); i < n && time_of(i) <= last;
       i = first_at_or_after(i + 1, axis.time_at(std::floor(axis.x_of(time_of(i))) + 1.0))) {
    out.push_back(i);
  }
}

/// The smallest [t0, t1] that holds `fraction` of `sorted_times` (ascending), for a first view
/// that skips long idle stretches (a snapshot's model set-up, seconds before the training
/// steps). When that window is over half the full range, the full range. {0, 0} when empty.
[[nodiscard]] std::pair<std::int64_t, std::int64_t>
dense_window(std::span<const std::int64_t> sorted_times, double fraction) noexcept;

} // namespace tdiag::view
