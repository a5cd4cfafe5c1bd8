// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A whole trace in memory: the interning tables, the lanes, one event_store per event kind, the
// allocator state a snapshot carried, and metadata. Importers, the .tdtrace reader and capture
// fill one; the analyses, the exporter and the viewer read it after finalize().
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/event_store.hpp>
#include <tensordiag/trace/events.hpp>
#include <tensordiag/trace/lane_table.hpp>
#include <tensordiag/trace/stack_table.hpp>
#include <tensordiag/trace/string_table.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace tdiag::trace {

struct trace_metadata {
  std::string source_path; ///< the file it was loaded from; empty when built in memory
  std::string format;      ///< "tdtrace", "kineto-json", "torch-snapshot", "cupti", ...
  /// Unix-epoch nanoseconds of time 0 on the trace's axis; 0 when unknown (times are then
  /// relative to an arbitrary origin).
  std::int64_t time_origin_ns = 0;
  /// Records the producer could not keep (CUPTI dropped records, ring-buffer overwrites).
  std::uint64_t dropped_records = 0;
  /// Free-form key/value pairs (allocator settings, torch version, host name...), in order.
  std::vector<std::pair<std::string, std::string>> properties;
  friend bool operator==(const trace_metadata&, const trace_metadata&) = default;

  /// The value of the first property `key`, or nullptr.
  [[nodiscard]] const std::string* property(std::string_view key) const noexcept;
};

/// Time span [begin, end] covered by a trace's events.
struct time_span {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  [[nodiscard]] std::int64_t duration() const noexcept { return end - begin; }
  friend bool operator==(const time_span&, const time_span&) = default;
};

class trace {
public:
  // Interning tables: every string_id / stack_id / lane_id in the stores indexes these.
  string_table strings;
  stack_table stacks;
  lane_table lanes;

  // One store per event kind.
  event_store<kernel_event> kernels;
  event_store<copy_event> copies; ///< memcpy and memset
  event_store<api_event> api_calls;
  event_store<range_event> ranges;
  event_store<marker_event> markers;
  event_store<memory_event> memory;
  event_store<assertion_event> assertions;
  event_store<flow_event> flows;
  event_store<counter_event> counters;

  /// What cuda_sync rows waited on (Kineto's wait_on_* args), by range_index; finalize()
  /// keeps the indexes pointing at their rows when it reorders the ranges.
  std::vector<sync_wait> sync_waits;
  /// The entry of the row at `range_index` of ranges.all(), or nullptr.
  [[nodiscard]] const sync_wait* sync_wait_of(std::size_t range_index) const noexcept;
  /// The ranges were reordered or filtered: row i of the old ranges is row moved_to[i] now, or
  /// was dropped (dropped_range). The sync waits follow their rows; those of dropped rows (or
  /// past moved_to) go.
  void move_sync_waits(std::span<const std::uint32_t> moved_to);
  static constexpr std::uint32_t dropped_range = ~std::uint32_t{0};
  /// The process groups and sequence numbers of communication kernels, where the source names
  /// them; finalize() sorts it by correlation.
  std::vector<collective_info> collectives;
  /// The entry of the kernel with correlation id `correlation`, or nullptr (also for 0).
  [[nodiscard]] const collective_info* collective_of(std::uint32_t correlation) const noexcept;

  /// What some memory events carry besides the common fields: memory_event::detail is 1 + an
  /// index here (0: none, every field at its default). Two events may share an entry.
  std::vector<memory_detail> memory_details;
  /// The detail of `e`: the defaults where it has none (or names no entry).
  [[nodiscard]] const memory_detail& detail_of(const memory_event& e) const noexcept;
  /// The value for memory_event::detail that gives `d`: 0 for the defaults, else the last entry
  /// where it is the same (runs of events share one), else a new one.
  [[nodiscard]] std::uint32_t add_memory_detail(const memory_detail& d);
  /// `e` and its detail in one record (a chunk's columns, Python's).
  [[nodiscard]] memory_record record_of(const memory_event& e) const noexcept;
  /// The event of `r`, its detail added (add_memory_detail).
  [[nodiscard]] memory_event event_of(const memory_record& r);

  /// Allocator state at one instant when the source had it (a snapshot's `segments`, at the
  /// time it was dumped). Replay derives other instants from it and the memory events.
  std::optional<allocator_state> final_allocator_state;

  trace_metadata metadata;

  /// Sorts every store by (lane, time) and builds the lane indexes. Call after filling and
  /// before lane queries; idempotent. Records naming an unknown lane stay in all() only.
  void finalize();
  /// True when every store is finalized.
  [[nodiscard]] bool finalized() const noexcept;

  /// Adds a launch flow for every api_call whose correlation id matches a kernel or copy and
  /// that no existing flow covers (CUPTI gives correlation ids but no flows). Returns how many
  /// were added. Call finalize() afterwards.
  std::size_t link_flows_by_correlation();

  /// Total number of events over all kinds.
  [[nodiscard]] std::size_t event_count() const noexcept;
  /// About the bytes the event stores, the lanes and the string text take while a reader fills
  /// them (twice the records, as vectors grow by doubling): what readers check against the
  /// memory budget as they go.
  [[nodiscard]] std::uint64_t memory_bytes() const noexcept;
  /// Earliest begin and latest end over all events; {0, 0} for an empty trace.
  [[nodiscard]] time_span span() const noexcept;

  /// Convenience: the text of a string id ("" when out of range).
  [[nodiscard]] std::string_view name(string_id id) const noexcept {
    return strings.name_or_empty(id);
  }

  /// Applies `fn(store)` to every event store (generic code: writers, statistics).
  template <typename Fn> void for_each_store(Fn&& fn) {
    fn(kernels), fn(copies), fn(api_calls), fn(ranges), fn(markers), fn(memory), fn(assertions),
        fn(flows), fn(counters);
  }
  template <typename Fn> void for_each_store(Fn&& fn) const {
    fn(kernels), fn(copies), fn(api_calls), fn(ranges), fn(markers), fn(memory), fn(assertions),
        fn(flows), fn(counters);
  }

  friend bool operator==(const trace& a, const trace& b);
};

} // namespace tdiag::trace
