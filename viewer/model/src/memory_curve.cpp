// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/viewer/memory_curve.hpp>

#include <algorithm>
#include <cmath>
#include <set>

namespace tdiag::view {

std::vector<std::int32_t> memory_curve::devices(const trace::trace& t) {
  std::set<std::int32_t> seen;
  for (const auto& m : t.memory.all())
    seen.insert(m.device);
  return {seen.begin(), seen.end()};
}

void memory_curve::push_back(std::int64_t time, std::int64_t allocated, std::int64_t reserved) {
  if (!time_.empty() && time_.back() == time) {
    allocated_.back() = allocated;
    reserved_.back() = reserved;
  } else {
    time_.push_back(time);
    allocated_.push_back(allocated);
    reserved_.push_back(reserved);
  }
  if (allocated > peak_allocated_) {
    peak_allocated_ = allocated;
    peak_time_ = time;
  }
  peak_reserved_ = std::max(peak_reserved_, reserved);
}

memory_curve memory_curve::build(const trace::trace& t, std::int32_t device) {
  memory_curve c;
  const auto series = trace::memory_series_of(t, trace::memory_lane_of(t, device));
  for (const auto& m : series.samples)
    c.push_back(m.time, m.allocated, m.reserved);
  return c;
}

memory_column memory_curve::at(std::int64_t t) const noexcept {
  auto it = std::upper_bound(time_.begin(), time_.end(), t);
  if (it == time_.begin())
    return {};
  const auto i = static_cast<std::size_t>(it - time_.begin()) - 1;
  return {allocated_[i], allocated_[i], reserved_[i], reserved_[i], true};
}

void memory_curve::merge(memory_column& c, std::size_t from, std::size_t to) const noexcept {
  auto take = [&](std::int64_t amin, std::int64_t amax, std::int64_t rmin, std::int64_t rmax) {
    if (!c.valid) {
      c = {amin, amax, rmin, rmax, true};
      return;
    }
    c.allocated_min = std::min(c.allocated_min, amin);
    c.allocated_max = std::max(c.allocated_max, amax);
    c.reserved_min = std::min(c.reserved_min, rmin);
    c.reserved_max = std::max(c.reserved_max, rmax);
  };
  std::size_t i = from;
  while (i < to) {
    if (i % block_size == 0 && i + block_size <= to) {
      const auto& b = blocks_[i / block_size];
      take(b.allocated_min, b.allocated_max, b.reserved_min, b.reserved_max);
      i += block_size;
    } else {
      take(allocated_[i], allocated_[i], reserved_[i], reserved_[i]);
      ++i;
    }
  }
}

void memory_curve::envelope(const time_axis& axis, std::vector<memory_column>& out) const {
  const auto columns = static_cast<std::size_t>(std::ceil(axis.width()));
  out.assign(columns, memory_column{});
  if (time_.empty())
    return;
  if (blocks_.size() != time_.size() / block_size) {
    blocks_.clear();
    for (std::size_t b = 0; b + block_size <= time_.size(); b += block_size) {
      extremes e{allocated_[b], allocated_[b], reserved_[b], reserved_[b]};
      for (std::size_t k = b; k < b + block_size; ++k) {
        e.allocated_min = std::min(e.allocated_min, allocated_[k]);
        e.allocated_max = std::max(e.allocated_max, allocated_[k]);
        e.reserved_min = std::min(e.reserved_min, reserved_[k]);
        e.reserved_max = std::max(e.reserved_max, reserved_[k]);
      }
      blocks_.push_back(e);
    }
  }
  // i = first sample with time >= column start; the sample before it is carried in.
  std::size_t i = static_cast<std::size_t>(
      std::lower_bound(time_.begin(), time_.end(), axis.time_at(0.0)) - time_.begin());
  for (std::size_t x = 0; x < columns; ++x) {
    const std::int64_t col_end = axis.time_at(static_cast<double>(x + 1));
    memory_column c;
    if (i > 0)
      c = {allocated_[i - 1], allocated_[i - 1], reserved_[i - 1], reserved_[i - 1], true};
    const auto j = static_cast<std::size_t>(
        std::lower_bound(time_.begin() + static_cast<std::ptrdiff_t>(i), time_.end(), col_end) -
        time_.begin());
    merge(c, i, j);
    out[x] = c;
    i = j;
  }
}

} // namespace tdiag::view
