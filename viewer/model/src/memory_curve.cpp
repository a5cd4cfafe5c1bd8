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
  levels_samples_ = static_cast<std::size_t>(-1); // the pyramid is rebuilt on the next use
  if (!time_.empty() && time_.back() == time) {
    allocated_.back() = allocated;
    reserved_.back() = reserved;
  } else {
    time_index_.on_append(time_.size(), time);
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
  c.build_levels(); // not in the first frame
  return c;
}

memory_column memory_curve::at(std::int64_t t) const noexcept {
  auto it = std::upper_bound(time_.begin(), time_.end(), t);
  if (it == time_.begin())
    return {};
  const auto i = static_cast<std::size_t>(it - time_.begin()) - 1;
  return {allocated_[i], allocated_[i], reserved_[i], reserved_[i], true};
}

void memory_curve::build_levels() const {
  levels_.clear();
  levels_samples_ = time_.size();
  std::vector<extremes> level;
  for (std::size_t b = 0; b + block_size <= time_.size(); b += block_size) {
    extremes e{allocated_[b], allocated_[b], reserved_[b], reserved_[b]};
    for (std::size_t k = b; k < b + block_size; ++k) {
      e.allocated_min = std::min(e.allocated_min, allocated_[k]);
      e.allocated_max = std::max(e.allocated_max, allocated_[k]);
      e.reserved_min = std::min(e.reserved_min, reserved_[k]);
      e.reserved_max = std::max(e.reserved_max, reserved_[k]);
    }
    level.push_back(e);
  }
  while (!level.empty()) {
    std::vector<extremes> up;
    for (std::size_t b = 0; b + fan_out <= level.size(); b += fan_out) {
      extremes e = level[b];
      for (std::size_t k = b + 1; k < b + fan_out; ++k) {
        e.allocated_min = std::min(e.allocated_min, level[k].allocated_min);
        e.allocated_max = std::max(e.allocated_max, level[k].allocated_max);
        e.reserved_min = std::min(e.reserved_min, level[k].reserved_min);
        e.reserved_max = std::max(e.reserved_max, level[k].reserved_max);
      }
      up.push_back(e);
    }
    levels_.push_back(std::move(level));
    level = std::move(up);
  }
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
  auto take_block = [&](const extremes& e) {
    take(e.allocated_min, e.allocated_max, e.reserved_min, e.reserved_max);
  };
  // Climb: samples up to a block boundary, then at each level entries up to the next
  // level's boundary, as far as whole entries fit in [from, to); then descend likewise.
  // Entries of level l (0 = raw samples) hold 2^shift(l) samples: powers of two, so the
  // alignment tests below are masks, not divisions.
  auto shift = [](std::size_t lvl) {
    return lvl == 0 ? std::size_t{0} : block_shift + fan_out_shift * (lvl - 1);
  };
  auto step = [&](std::size_t lvl, std::size_t at) {
    if (lvl == 0)
      take(allocated_[at], allocated_[at], reserved_[at], reserved_[at]);
    else
      take_block(levels_[lvl - 1][at >> shift(lvl)]);
  };
  std::size_t i = from;
  std::size_t level = 0;
  while (level < levels_.size()) {
    const std::size_t up = std::size_t{1} << shift(level + 1);
    const std::size_t aligned = (i + up - 1) & ~(up - 1);
    if (aligned + up > to) // no whole entry of the next level fits
      break;
    for (const std::size_t width = std::size_t{1} << shift(level); i < aligned; i += width)
      step(level, i);
    ++level;
  }
  for (;; --level) {
    for (const std::size_t width = std::size_t{1} << shift(level); i + width <= to; i += width)
      step(level, i);
    if (level == 0)
      break;
  }
}

void memory_curve::envelope(const time_axis& axis, std::vector<memory_column>& out) const {
  const auto columns = static_cast<std::size_t>(std::ceil(axis.width()));
  out.assign(columns, memory_column{});
  if (time_.empty())
    return;
  if (levels_samples_ != time_.size())
    build_levels();
  // i = first sample with time >= column start; the sample before it is carried in.
  std::size_t i = time_index_.lower_bound(time_, 0, axis.time_at(0.0));
  for (std::size_t x = 0; x < columns; ++x) {
    const std::int64_t col_end = axis.time_at(static_cast<double>(x + 1));
    memory_column c;
    if (i > 0)
      c = {allocated_[i - 1], allocated_[i - 1], reserved_[i - 1], reserved_[i - 1], true};
    const std::size_t j = time_index_.lower_bound(time_, i, col_end);
    merge(c, i, j);
    out[x] = c;
    i = j;
  }
}

} // namespace tdiag::view
