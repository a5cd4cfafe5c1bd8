// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Allocated and reserved bytes over time for one device, as a step function, and its min/max
// envelope per pixel column: a peak one nanosecond wide still shows at full zoom-out.
#pragma once

#include <tensordiag/trace/trace.hpp>
#include <tensordiag/viewer/sampled_index.hpp>
#include <tensordiag/viewer/time_axis.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tdiag::view {

/// min/max of the two curves over one pixel column; `valid` is false left of the first sample.
struct memory_column {
  std::int64_t allocated_min = 0;
  std::int64_t allocated_max = 0;
  std::int64_t reserved_min = 0;
  std::int64_t reserved_max = 0;
  bool valid = false;
};

class memory_curve {
public:
  /// The curves of `device` of a finalized trace: trace::memory_series_of() of its memory lane
  /// (reported totals, else the replayed allocator state), the numbers `tdiag trace summary`
  /// reports. This class only draws them.
  [[nodiscard]] static memory_curve build(const trace::trace& t, std::int32_t device);
  /// Devices with memory events, ascending (host = -1 first when present).
  [[nodiscard]] static std::vector<std::int32_t> devices(const trace::trace& t);

  [[nodiscard]] std::size_t size() const noexcept { return time_.size(); }
  [[nodiscard]] bool empty() const noexcept { return time_.empty(); }
  [[nodiscard]] std::int64_t time(std::size_t i) const noexcept { return time_[i]; }
  [[nodiscard]] std::int64_t allocated(std::size_t i) const noexcept { return allocated_[i]; }
  [[nodiscard]] std::int64_t reserved(std::size_t i) const noexcept { return reserved_[i]; }
  [[nodiscard]] std::int64_t peak_allocated() const noexcept { return peak_allocated_; }
  [[nodiscard]] std::int64_t peak_reserved() const noexcept { return peak_reserved_; }
  [[nodiscard]] std::int64_t peak_allocated_time() const noexcept { return peak_time_; }

  /// Values in force at time `t` (the last sample at or before t); zeros before the first.
  [[nodiscard]] memory_column at(std::int64_t t) const noexcept;
  /// One column per pixel of `axis` (out resized to ceil(width)); each holds the min and max
  /// of every value the curves take inside the column, including the one carried in from the
  /// left. The extremes are precomputed as a pyramid: level 0 per `block_size` samples, each
  /// level above per `fan_out` blocks of the one below. Per column: a binary search, at most
  /// two partial blocks of samples and, per level, at most 2 x (fan_out - 1) entries, so a
  /// frame costs O(pixels x levels) whatever the number of samples.
  static constexpr std::size_t block_shift = 5;   ///< block_size = 32
  static constexpr std::size_t fan_out_shift = 3; ///< fan_out = 8
  static constexpr std::size_t block_size = std::size_t{1} << block_shift;
  static constexpr std::size_t fan_out = std::size_t{1} << fan_out_shift;
  void envelope(const time_axis& axis, std::vector<memory_column>& out) const;

  /// Appends a sample (for tests and generators): times must not decrease.
  void push_back(std::int64_t time, std::int64_t allocated, std::int64_t reserved);

private:
  struct extremes {
    std::int64_t allocated_min, allocated_max, reserved_min, reserved_max;
  };
  void merge(memory_column& c, std::size_t from, std::size_t to) const noexcept;
  void build_levels() const;
  // levels_[0][k]: extremes of samples [k * block_size, (k + 1) * block_size); levels_[l][k]:
  // of levels_[l - 1][k * fan_out, (k + 1) * fan_out). Rebuilt when samples were added.
  mutable std::vector<std::vector<extremes>> levels_;
  mutable std::size_t levels_samples_ = 0;

  std::vector<std::int64_t> time_;
  sampled_index time_index_; // over time_
  std::vector<std::int64_t> allocated_;
  std::vector<std::int64_t> reserved_;
  std::int64_t peak_allocated_ = 0;
  std::int64_t peak_reserved_ = 0;
  std::int64_t peak_time_ = 0;
};

} // namespace tdiag::view
