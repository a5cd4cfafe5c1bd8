// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Allocated and reserved bytes over time for one device, as a step function, and its min/max
// envelope per pixel column: a peak one nanosecond wide still shows at full zoom-out.
#pragma once

#include <tensordiag/trace/trace.hpp>
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
  /// left. Per column: a binary search and a scan of at most two partial blocks of
  /// `block_size` samples plus the precomputed extremes of the whole blocks between them.
  static constexpr std::size_t block_size = 128;
  void envelope(const time_axis& axis, std::vector<memory_column>& out) const;

  /// Appends a sample (for tests and generators): times must not decrease.
  void push_back(std::int64_t time, std::int64_t allocated, std::int64_t reserved);

private:
  struct extremes {
    std::int64_t allocated_min, allocated_max, reserved_min, reserved_max;
  };
  void merge(memory_column& c, std::size_t from, std::size_t to) const noexcept;
  // blocks_[k]: extremes of samples [k * block_size, (k + 1) * block_size), rebuilt lazily.
  mutable std::vector<extremes> blocks_;

  std::vector<std::int64_t> time_;
  std::vector<std::int64_t> allocated_;
  std::vector<std::int64_t> reserved_;
  std::int64_t peak_allocated_ = 0;
  std::int64_t peak_reserved_ = 0;
  std::int64_t peak_time_ = 0;
};

} // namespace tdiag::view
