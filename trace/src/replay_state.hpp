// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: one memory lane's allocator state as a replay moves it, forward or backward, with the
// effect of each event on the lane's totals. Every replay pass goes through it (the initial
// state derived from a dump, allocator_replay's keyframes, memory_series, the timeline), so the
// choice of representation is made here once:
// - a lane with real segments keeps allocator_state's sorted vector;
// - a lane that never has one (Kineto [memory], CUPTI, a snapshot without segments), where every
//   live block is an implicit segment of its own, keeps them in an ordered map. In the vector
//   each alloc and free moved every later block: a history keeping 200,000 blocks alive took
//   19 s for 200,000 events. An event is then applied to a state holding only the segment at its
//   address (an event on an implicit segment touches no other), by the same apply_memory_event
//   / undo_memory_event, so the semantics stay in one place.
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/events.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>

namespace tdiag::trace::detail {

/// Allocated, requested and reserved bytes (saturated sums).
struct replay_totals {
  std::int64_t allocated = 0, requested = 0, reserved = 0;
};

/// The totals of `device` in `s`.
[[nodiscard]] replay_totals totals_of(const allocator_state& s, std::int32_t device);

class replay_state {
public:
  /// Starts from `start` (the segments of `device`, sorted) to replay `events` of its lane.
  replay_state(allocator_state start, std::int32_t device, std::span<const memory_event> events);

  /// apply_memory_event (forward) or undo_memory_event (backward, with `two_step_frees`);
  /// returns whether the event matched, as they do. `effect`, when given, receives the change
  /// of the lane's totals.
  bool step(const memory_event& e, bool backward, bool two_step_frees,
            replay_totals* effect = nullptr);

  /// Whether the lane is replayed in the map (implicit segments only): a pass is cheap.
  [[nodiscard]] bool sparse() const noexcept { return sparse_; }
  /// Segments in the state now.
  [[nodiscard]] std::size_t segment_count() const noexcept;
  /// The state now (its time: the last forward event's, else the start's).
  [[nodiscard]] allocator_state state() const;
  /// The same, moved out.
  [[nodiscard]] allocator_state take() &&;

private:
  std::int32_t device_;
  bool sparse_;
  allocator_state full_;                        // the state, or (sparse_) its time only
  std::map<std::uint64_t, segment> by_address_; // sparse_: the implicit segments
  allocator_state one_;                         // sparse_: the segment an event touches
};

} // namespace tdiag::trace::detail
