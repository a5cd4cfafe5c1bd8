// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The storage of one event kind: a vector of fixed-width records that, once finalized, is
// grouped by lane and stable-sorted by time inside each lane. A lane's events are then one
// contiguous span, so the viewer and the analyses binary-search and aggregate in place. Records
// with equal times keep their insertion order (allocator replay depends on it).
#pragma once

#include <tensordiag/trace/events.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tdiag::trace {

/// The time a record is ordered by: `start` for ranged kinds, `time` for instants.
template <typename Record>
[[nodiscard]] constexpr std::int64_t begin_time(const Record& r) noexcept {
  if constexpr (requires { r.start; })
    return r.start;
  else
    return r.time;
}
/// The end of a ranged record; an instant ends when it begins.
template <typename Record> [[nodiscard]] constexpr std::int64_t end_time(const Record& r) noexcept {
  if constexpr (requires { r.end; })
    return r.end;
  else
    return begin_time(r);
}

/// end - begin of a record as an unsigned count of ns, 0 when end < begin. Never overflows (a
/// damaged or hostile file may hold any times).
template <typename Record>
[[nodiscard]] constexpr std::uint64_t duration_of(const Record& r) noexcept {
  const std::int64_t b = begin_time(r);
  const std::int64_t e = end_time(r);
  return e > b ? static_cast<std::uint64_t>(e) - static_cast<std::uint64_t>(b) : 0;
}

template <typename Record> class event_store {
public:
  using record_type = Record;

  /// Appends a record; clears the finalized state (call finalize() again before lane queries).
  void push_back(const Record& r) {
    records_.push_back(r);
    finalized_ = false;
  }
  void reserve(std::size_t n) { records_.reserve(n); }
  /// Replaces every record by `records` without copying them (a bulk importer's staging).
  void adopt(std::vector<Record>&& records) {
    records_ = std::move(records);
    finalized_ = false;
  }
  void clear() {
    records_.clear();
    lane_offsets_.clear();
    lane_max_duration_.clear();
    finalized_ = false;
  }

  [[nodiscard]] std::size_t size() const noexcept { return records_.size(); }
  [[nodiscard]] bool empty() const noexcept { return records_.empty(); }
  [[nodiscard]] const Record& operator[](std::size_t i) const noexcept { return records_[i]; }
  /// Every record: in insertion order before finalize(), in (lane, time) order after.
  [[nodiscard]] std::span<const Record> all() const noexcept { return records_; }
  /// Mutable access (e.g. for an importer fixing up lanes); changing `lane` or the time
  /// fields requires finalize() again.
  [[nodiscard]] std::span<Record> mutable_all() noexcept {
    finalized_ = false;
    return records_;
  }
  [[nodiscard]] bool finalized() const noexcept { return finalized_; }

  /// Stable-sorts by (lane, begin time) and indexes lanes [0, lane_count). Records whose lane is
  /// >= lane_count are kept at the end and belong to no lane.
  void finalize(std::size_t lane_count) {
    // Producers often deliver sorted data: indexing it checks the order in the same pass.
    if (!index_if_sorted(lane_count)) {
      std::stable_sort(records_.begin(), records_.end(), [](const Record& a, const Record& b) {
        return a.lane != b.lane ? a.lane < b.lane : begin_time(a) < begin_time(b);
      });
      (void)index_if_sorted(lane_count);
    }
    finalized_ = true;
  }

  /// Records of lane `l`, sorted by begin time. Empty if not finalized or `l` is unknown.
  [[nodiscard]] std::span<const Record> lane(lane_id l) const noexcept {
    if (!finalized_ || std::size_t{l} + 1 >= lane_offsets_.size())
      return {};
    return std::span<const Record>(records_).subspan(lane_offsets_[l],
                                                     lane_offsets_[l + 1] - lane_offsets_[l]);
  }
  /// Records of lane `l` that may overlap [t0, t1): every record that does is inside the span;
  /// the span may also hold a few that end before t0 (callers test end_time when it matters).
  /// O(log n).
  [[nodiscard]] std::span<const Record> overlapping(lane_id l, std::int64_t t0,
                                                    std::int64_t t1) const noexcept {
    auto all_of_lane = lane(l);
    if (all_of_lane.empty())
      return all_of_lane;
    // t0 - max duration, saturating at the lowest time.
    const std::int64_t from = t0 < std::numeric_limits<std::int64_t>::min() + lane_max_duration_[l]
                                  ? std::numeric_limits<std::int64_t>::min()
                                  : t0 - lane_max_duration_[l];
    auto first = std::partition_point(all_of_lane.begin(), all_of_lane.end(),
                                      [&](const Record& r) { return begin_time(r) < from; });
    auto last = std::partition_point(first, all_of_lane.end(),
                                     [&](const Record& r) { return begin_time(r) < t1; });
    return {first, last};
  }
  /// Longest duration on lane `l` (0 for instants or an unknown lane).
  [[nodiscard]] std::int64_t max_duration(lane_id l) const noexcept {
    return finalized_ && l < lane_max_duration_.size() ? lane_max_duration_[l] : 0;
  }

  friend bool operator==(const event_store& a, const event_store& b) {
    return a.records_ == b.records_;
  }

private:
  // Indexes lanes [0, lane_count) in one pass; false (index incomplete) when the records are not
  // in (lane, begin time) order.
  bool index_if_sorted(std::size_t lane_count) {
    lane_offsets_.assign(lane_count + 1, 0);
    lane_max_duration_.assign(lane_count, 0);
    const std::uint64_t cap = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::size_t i = 0;
    for (std::size_t l = 0; l < lane_count; ++l) {
      lane_offsets_[l] = i;
      std::int64_t previous = std::numeric_limits<std::int64_t>::min();
      std::uint64_t longest = 0;
      for (; i < records_.size() && records_[i].lane == l; ++i) {
        const std::int64_t t = begin_time(records_[i]);
        if (t < previous)
          return false;
        previous = t;
        longest = std::max(longest, duration_of(records_[i]));
      }
      lane_max_duration_[l] = static_cast<std::int64_t>(std::min(longest, cap));
    }
    lane_offsets_[lane_count] = i;
    // The rest belong to no lane (lane >= lane_count) and must be in order too.
    for (; i < records_.size(); ++i) {
      const Record& a = records_[i];
      const Record& b = records_[i - (i > 0 ? 1 : 0)];
      if (i > 0 && (a.lane < b.lane || (a.lane == b.lane && begin_time(a) < begin_time(b))))
        return false;
    }
    return true;
  }

  std::vector<Record> records_;
  std::vector<std::size_t> lane_offsets_;
  std::vector<std::int64_t> lane_max_duration_;
  bool finalized_ = false;
};

} // namespace tdiag::trace
