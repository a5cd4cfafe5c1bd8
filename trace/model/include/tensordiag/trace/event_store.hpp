// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The storage of one event kind: a vector of fixed-width records that, once finalized, is
// grouped by lane and stable-sorted by time inside each lane. A lane's events are then one
// contiguous span, so the viewer and the analyses binary-search and aggregate in place. Records
// with equal times keep their insertion order (allocator replay depends on it). A store may also
// view rows it does not own (a mapped .tdtrace row image): reads see them in place, the first
// mutation copies them into the store's own vector (copy on first mutation).
#pragma once

#include <tensordiag/trace/events.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
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
    own();
    records_.push_back(r);
    finalized_ = false;
  }
  void reserve(std::size_t n) {
    own();
    records_.reserve(n);
  }
  /// Replaces every record by `records` without copying them (a bulk importer's staging).
  void adopt(std::vector<Record>&& records) {
    drop_view();
    records_ = std::move(records);
    finalized_ = false;
  }
  /// Makes the store a read-only view of `rows`, kept alive by `keeper` (e.g. a file mapping),
  /// finalized for `lane_offsets.size() - 1` lanes with that lane index, without copying or
  /// sorting. One pass checks that the index describes the rows (each lane's rows name it and
  /// are in time order, its longest duration is `lane_max_duration`, the rest name no lane) and
  /// that `check(row)` holds for every row. Returns false and leaves the store empty otherwise.
  template <typename Check>
  [[nodiscard]] bool adopt_finalized(std::span<const Record> rows,
                                     std::shared_ptr<const void> keeper,
                                     std::vector<std::size_t> lane_offsets,
                                     std::vector<std::int64_t> lane_max_duration, Check&& check) {
    clear();
    if (!index_describes(rows, lane_offsets, lane_max_duration, check))
      return false;
    view_ = rows;
    keeper_ = std::move(keeper);
    lane_offsets_ = std::move(lane_offsets);
    lane_max_duration_ = std::move(lane_max_duration);
    finalized_ = true;
    return true;
  }
  void clear() {
    drop_view();
    records_.clear();
    lane_offsets_.clear();
    lane_max_duration_.clear();
    finalized_ = false;
  }

  [[nodiscard]] std::size_t size() const noexcept { return rows().size(); }
  [[nodiscard]] bool empty() const noexcept { return rows().empty(); }
  [[nodiscard]] const Record& operator[](std::size_t i) const noexcept { return rows()[i]; }
  /// Every record: in insertion order before finalize(), in (lane, time) order after.
  [[nodiscard]] std::span<const Record> all() const noexcept { return rows(); }
  /// Mutable access (e.g. for an importer fixing up lanes); changing `lane` or the time
  /// fields requires finalize() again. Copies viewed rows first.
  [[nodiscard]] std::span<Record> mutable_all() {
    own();
    finalized_ = false;
    return records_;
  }
  /// Keeps the records `keep` accepts, in order, each then passed to `change` (Record&): in place
  /// when the rows are owned (no second copy), one copy of the kept rows when they are viewed.
  /// Clears the finalized state.
  template <typename Keep, typename Change> void keep_if(Keep&& keep, Change&& change) {
    if (viewing()) {
      std::vector<Record> kept;
      kept.reserve(static_cast<std::size_t>(std::count_if(view_.begin(), view_.end(), keep)));
      for (const auto& r : view_)
        if (keep(r))
          change(kept.emplace_back(r));
      adopt(std::move(kept));
      return;
    }
    auto out = records_.begin();
    for (auto& r : records_)
      if (keep(r)) {
        *out = r;
        change(*out++);
      }
    records_.erase(out, records_.end());
    finalized_ = false;
  }
  [[nodiscard]] bool finalized() const noexcept { return finalized_; }
  /// True while the rows are viewed in place (adopt_finalized), not owned.
  [[nodiscard]] bool viewing() const noexcept { return keeper_ != nullptr; }

  /// Stable-sorts by (lane, begin time) and indexes lanes [0, lane_count). Records whose lane is
  /// >= lane_count are kept at the end and belong to no lane.
  void finalize(std::size_t lane_count) {
    if (finalized_ && lane_offsets_.size() == lane_count + 1)
      return; // idempotent: nothing changed since
    // Producers often deliver sorted data: indexing it checks the order in the same pass.
    if (!index_if_sorted(lane_count)) {
      own();
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
    return rows().subspan(lane_offsets_[l], lane_offsets_[l + 1] - lane_offsets_[l]);
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
    return std::ranges::equal(a.all(), b.all());
  }

private:
  [[nodiscard]] std::span<const Record> rows() const noexcept {
    return keeper_ ? view_ : std::span<const Record>(records_);
  }
  void own() {
    if (!keeper_)
      return;
    records_.assign(view_.begin(), view_.end());
    drop_view();
  }
  void drop_view() noexcept {
    view_ = {};
    keeper_.reset();
  }

  // Indexes lanes [0, lane_count) in one pass; false (index incomplete) when the records are not
  // in (lane, begin time) order.
  bool index_if_sorted(std::size_t lane_count) {
    const auto records = rows();
    lane_offsets_.assign(lane_count + 1, 0);
    lane_max_duration_.assign(lane_count, 0);
    std::size_t i = 0;
    for (std::size_t l = 0; l < lane_count; ++l) {
      lane_offsets_[l] = i;
      std::int64_t previous = std::numeric_limits<std::int64_t>::min();
      std::uint64_t longest = 0;
      for (; i < records.size() && records[i].lane == l; ++i) {
        const std::int64_t t = begin_time(records[i]);
        if (t < previous)
          return false;
        previous = t;
        longest = std::max(longest, duration_of(records[i]));
      }
      lane_max_duration_[l] = saturated(longest);
    }
    lane_offsets_[lane_count] = i;
    return rest_in_order(records, i);
  }

  // The records from `i` on belong to no lane (lane >= lane_count) and must be in order too.
  static bool rest_in_order(std::span<const Record> records, std::size_t i) noexcept {
    for (; i < records.size(); ++i) {
      const Record& a = records[i];
      const Record& b = records[i - (i > 0 ? 1 : 0)];
      if (i > 0 && (a.lane < b.lane || (a.lane == b.lane && begin_time(a) < begin_time(b))))
        return false;
    }
    return true;
  }

  static std::int64_t saturated(std::uint64_t duration) noexcept {
    const std::uint64_t cap = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(std::min(duration, cap));
  }

  // What index_if_sorted would build for `records`, compared instead of built, plus `check`.
  template <typename Check>
  static bool index_describes(std::span<const Record> records,
                              const std::vector<std::size_t>& offsets,
                              const std::vector<std::int64_t>& max_duration, Check& check) {
    const std::size_t lane_count = max_duration.size();
    if (offsets.size() != lane_count + 1 || offsets.front() != 0 || offsets.back() > records.size())
      return false;
    for (std::size_t l = 0; l < lane_count; ++l) {
      if (offsets[l + 1] < offsets[l])
        return false;
      std::int64_t previous = std::numeric_limits<std::int64_t>::min();
      std::uint64_t longest = 0;
      for (std::size_t i = offsets[l]; i < offsets[l + 1]; ++i) {
        const Record& r = records[i];
        const std::int64_t t = begin_time(r);
        if (r.lane != l || t < previous || !check(r))
          return false;
        previous = t;
        longest = std::max(longest, duration_of(r));
      }
      if (saturated(longest) != max_duration[l])
        return false;
    }
    for (std::size_t i = offsets.back(); i < records.size(); ++i)
      if (records[i].lane < lane_count || !check(records[i]))
        return false;
    return rest_in_order(records, offsets.back());
  }

  std::vector<Record> records_;
  std::span<const Record> view_;       // the rows while keeper_ is set
  std::shared_ptr<const void> keeper_; // keeps view_'s bytes alive (a mapping); null: owned
  std::vector<std::size_t> lane_offsets_;
  std::vector<std::int64_t> lane_max_duration_;
  bool finalized_ = false;
};

} // namespace tdiag::trace
