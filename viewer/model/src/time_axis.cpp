// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/time_axis.hpp>

#include <algorithm>
#include <cmath>

namespace tdiag::view {

void time_axis::set_limits(std::int64_t begin, std::int64_t end) noexcept {
  if (end <= begin)
    end = begin + 1000;
  const double old_origin_shift = static_cast<double>(begin - limit_begin_);
  limit_begin_ = begin;
  limit_end_ = end;
  offset_ -= old_origin_shift;
  ns_per_px_ = std::clamp(ns_per_px_, min_ns_per_px, max_ns_per_px());
  clamp_offset();
}

void time_axis::set_width(double width_px) noexcept {
  width_ = std::max(width_px, 1.0);
  ns_per_px_ = std::clamp(ns_per_px_, min_ns_per_px, max_ns_per_px());
  clamp_offset();
}

double time_axis::max_ns_per_px() const noexcept {
  return std::max(static_cast<double>(limit_end_ - limit_begin_) * 4.0 / width_, min_ns_per_px);
}

void time_axis::fit(std::int64_t t0, std::int64_t t1) noexcept {
  if (t1 <= t0)
    t1 = t0 + 1;
  ns_per_px_ = std::clamp(static_cast<double>(t1 - t0) / width_, min_ns_per_px, max_ns_per_px());
  offset_ = static_cast<double>(t0 - limit_begin_);
  clamp_offset();
}

std::int64_t time_axis::time_at(double x) const noexcept {
  return limit_begin_ + static_cast<std::int64_t>(std::floor(offset_at(x)));
}

void time_axis::zoom_at(double x, double factor) noexcept {
  if (!(factor > 0.0) || !std::isfinite(factor))
    return;
  const double anchor = offset_at(x);
  ns_per_px_ = std::clamp(ns_per_px_ / factor, min_ns_per_px, max_ns_per_px());
  offset_ = anchor - x * ns_per_px_;
  // No clamp_offset() here: the anchor stays put. Zooming out past the trace is bounded by
  // max_ns_per_px, and the next pan clamps.
}

void time_axis::pan(double dx_px) noexcept {
  offset_ += dx_px * ns_per_px_;
  clamp_offset();
}

void time_axis::center_on(std::int64_t t) noexcept {
  offset_ = static_cast<double>(t - limit_begin_) - 0.5 * width_ * ns_per_px_;
  clamp_offset();
}

void time_axis::clamp_offset() noexcept {
  // Keep at least a tenth of the view over the trace.
  const double view = width_ * ns_per_px_;
  const double span = static_cast<double>(limit_end_ - limit_begin_);
  const double lo = -0.9 * view;
  const double hi = span - 0.1 * view;
  offset_ = std::clamp(offset_, std::min(lo, hi), std::max(lo, hi));
}

std::pair<std::int64_t, std::int64_t> dense_window(std::span<const std::int64_t> sorted_times,
                                                   double fraction) noexcept {
  const std::size_t n = sorted_times.size();
  if (n == 0)
    return {0, 0};
  const std::int64_t full_begin = sorted_times.front();
  const std::int64_t full_end = sorted_times.back();
  const auto k =
      static_cast<std::size_t>(std::ceil(std::clamp(fraction, 0.0, 1.0) * static_cast<double>(n)));
  if (k < 2 || k >= n)
    return {full_begin, full_end};
  std::size_t best = 0;
  for (std::size_t i = 1; i + k <= n; ++i)
    if (sorted_times[i + k - 1] - sorted_times[i] < sorted_times[best + k - 1] - sorted_times[best])
      best = i;
  const std::int64_t b = sorted_times[best];
  const std::int64_t e = sorted_times[best + k - 1];
  if (2 * (e - b) > full_end - full_begin)
    return {full_begin, full_end};
  return {b, e};
}

} // namespace tdiag::view
