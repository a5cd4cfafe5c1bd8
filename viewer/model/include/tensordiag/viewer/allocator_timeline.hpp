// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The allocator state of one device at any instant, for the allocator view's scrubbing: the
// state before the first event (derived backwards from the final state), keyframes every K
// events, and a cursor that replays forward from the nearest keyframe. Any instant costs one
// keyframe copy plus at most K replayed events; stepping forward costs only the new events.
//
// Written on the view side while tensordiag::trace has no replay engine; it uses only
// trace::allocator_state and the memory events, so it can move into trace/ unchanged.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tdiag::view {

struct allocator_timeline_options {
  /// Events between keyframes; 0 picks it so keyframes stay under keyframe_budget_bytes.
  std::size_t keyframe_interval = 0;
  std::size_t keyframe_budget_bytes = std::size_t{96} << 20;
};

class allocator_timeline {
public:
  /// Replays the state-changing memory events of `device` in a finalized trace.
  [[nodiscard]] static allocator_timeline build(const trace::trace& t, std::int32_t device,
                                                const allocator_timeline_options& options = {});

  /// Number of replayed events; states exist for n in [0, event_count()].
  [[nodiscard]] std::size_t event_count() const noexcept { return events_.size(); }
  /// The i-th replayed event and its index in trace.memory.all().
  [[nodiscard]] const trace::memory_event& event(std::size_t i) const noexcept {
    return events_[i];
  }
  [[nodiscard]] std::uint32_t event_index(std::size_t i) const noexcept { return indices_[i]; }
  /// Number of events at or before time `t` (so state_at(events_until(t)) holds at t).
  [[nodiscard]] std::size_t events_until(std::int64_t t) const noexcept;

  /// The state after the first `n` events (n clamped to event_count()). The reference stays
  /// valid until the next call. Not thread-safe.
  [[nodiscard]] const trace::allocator_state& state_at(std::size_t n);
  /// The same state replayed from the initial state without keyframes (for tests).
  [[nodiscard]] trace::allocator_state replay_from_scratch(std::size_t n) const;
  /// The state before the first event.
  [[nodiscard]] const trace::allocator_state& initial_state() const noexcept {
    return keyframes_.front();
  }

  [[nodiscard]] std::size_t keyframe_interval() const noexcept { return interval_; }
  [[nodiscard]] std::size_t keyframe_count() const noexcept { return keyframes_.size(); }
  [[nodiscard]] std::int32_t device() const noexcept { return device_; }
  /// Largest reserved bytes over all keyframes (a scale for drawing).
  [[nodiscard]] std::uint64_t max_reserved() const noexcept { return max_reserved_; }

private:
  [[nodiscard]] std::int64_t time_after(std::size_t n) const noexcept;
  void advance(trace::allocator_state& s, std::size_t from, std::size_t to) const;

  std::int32_t device_ = 0;
  std::vector<trace::memory_event> events_;
  std::vector<std::uint32_t> indices_;
  std::vector<std::int64_t> times_;
  std::vector<trace::allocator_state> keyframes_; // keyframes_[k] = state after k * interval_
  std::size_t interval_ = 256;
  std::uint64_t max_reserved_ = 0;
  std::int64_t initial_time_ = 0;
  trace::allocator_state cursor_;
  std::size_t cursor_n_ = 0;
  bool cursor_valid_ = false;
};

} // namespace tdiag::view
