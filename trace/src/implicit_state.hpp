// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the allocator state of a memory lane that never has a real segment (Kineto [memory],
// CUPTI, a snapshot without segments), where every live block is an implicit segment of its
// own. allocator_state keeps segments in one sorted vector, so there each alloc and free moves
// every live block after it: a history that keeps 200,000 blocks alive took 19 s for 200,000
// events. Here the segments sit in an ordered map, and each event is applied by the one
// apply_memory_event / undo_memory_event to a state holding only the segment at its address (an
// event on an implicit segment touches no other), so the semantics stay in one place and an
// event costs a map search.
#pragma once

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/events.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>

namespace tdiag::trace::detail {

class implicit_state {
public:
  /// Whether a lane of `device` with these events, starting from these segments, only ever
  /// holds implicit segments (and so can be replayed here).
  [[nodiscard]] static bool fits(std::int32_t device, std::span<const segment> start,
                                 std::span<const memory_event> events) noexcept;
  /// Takes the segments of a state that fits().
  void assign(std::span<const segment> start);

  /// The effect of one event on the lane's totals.
  struct change {
    std::int64_t allocated = 0, requested = 0;
  };
  /// apply_memory_event (forward) or undo_memory_event (backward, with `two_step_frees`) on
  /// this state; returns whether the event matched, as they do.
  bool step(const memory_event& e, bool backward, bool two_step_frees, change* effect = nullptr);

  /// Live implicit segments.
  [[nodiscard]] std::size_t size() const noexcept { return by_address_.size(); }
  /// The whole state, sorted as allocator_state keeps it.
  [[nodiscard]] allocator_state to_state(std::int64_t time) const;

private:
  std::map<std::uint64_t, segment> by_address_;
  allocator_state one_; // the segment an event touches, moved out of the map and back
};

} // namespace tdiag::trace::detail
