// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Replaying a caching allocator's memory events through time. The state before the first
// recorded event is derived backwards from the final state a snapshot carries (the ring buffer
// may have dropped early events; segments may predate the history), as MemoryViz's
// simulate_memory does. Keyframes every N events make the state at any event index one copy
// plus at most N replayed events; replay_cursor moves incrementally for a viewer's scrubbing.
// Sources without segment events (Kineto [memory], CUPTI) replay through implicit segments
// (allocator_state.hpp: implicit_pool), one per live block.
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace tdiag::trace {

/// The block the caching allocator makes for a request of `size` bytes (round_size with the
/// default roundup_power2_divisions: 512 at least, then multiples of 512). A snapshot's trace
/// entries give the request (torch records orig_size); its dumped blocks, this size.
[[nodiscard]] std::uint64_t caching_block_size(std::uint64_t size) noexcept;
/// The segment it asks the driver for when no cached block fits a request of `size` bytes
/// (get_allocation_size of the block): 2 MiB up to 1 MiB, 20 MiB below 10 MiB, else the block
/// rounded up to 2 MiB.
[[nodiscard]] std::uint64_t caching_segment_size(std::uint64_t size) noexcept;

/// Applies one memory event to `state` (forward in time). Returns false when the event does not
/// match the state (a block that is not there, a segment freed while in use); the state is
/// still changed as far as it sensibly can be. Events that are not allocator actions (oom,
/// snapshot, pool_*) leave the state alone and return true.
bool apply_memory_event(allocator_state& state, const memory_event& e);
/// Undoes one memory event (backward in time); false on a mismatch, as apply_memory_event.
/// `two_step_frees` says whether the history has free_requested events: undoing a
/// free_completed then leaves the block pending, else (a plain free) allocated.
bool undo_memory_event(allocator_state& state, const memory_event& e, bool two_step_frees);
/// The same with two-step frees (snapshot histories).
bool undo_memory_event(allocator_state& state, const memory_event& e);
/// Merges adjacent inactive blocks and sorts; two states that describe the same memory compare
/// equal after normalize() (requested sizes and stacks aside, which `strict` keeps).
void normalize(allocator_state& state, bool strict = true);

struct replay_options {
  /// Events between keyframes; 0 picks the smallest power of two (at least 64) that keeps the
  /// keyframes under keyframe_budget_bytes, doubling it while they outgrow the budget.
  std::size_t keyframe_interval = 0;
  std::size_t keyframe_budget_bytes = std::size_t{96} << 20;
};

/// The device_memory lane of `device` in a finalized trace, or no lane (t.lanes.size()).
[[nodiscard]] lane_id memory_lane_of(const trace& t, std::int32_t device) noexcept;

/// Whether memory lane `lane` has a memory history to report: events, or segments of its device
/// in t.final_allocator_state (a snapshot dumped without device_traces). Summary, timeline and
/// every front end list the same lanes through it.
[[nodiscard]] bool has_memory_history(const trace& t, lane_id lane) noexcept;

/// The state of memory lane `lane` before its first recorded event, as allocator_replay starts
/// from it (derived backwards from t.final_allocator_state, or empty), without the replay's
/// keyframes: for one pass forward over the events. `mismatches`, when given, receives the
/// events that did not match while deriving it.
[[nodiscard]] allocator_state initial_allocator_state(const trace& t, lane_id lane,
                                                      std::size_t* mismatches = nullptr);

/// The state after the first `index` events of memory lane `lane` (clamped), in one pass from
/// initial_allocator_state(): what allocator_replay::state_at() gives, for one question
/// without the keyframes (`tdiag trace timeline`, a `--window`'s end). `mismatches`, if not
/// null: the events that did not match, deriving the start and stepping from it.
[[nodiscard]] allocator_state allocator_state_after(const trace& t, lane_id lane, std::size_t index,
                                                    std::size_t* mismatches = nullptr);

/// Number of `events` (sorted by time) with time <= `time`.
[[nodiscard]] std::size_t events_until(std::span<const memory_event> events,
                                       std::int64_t time) noexcept;

namespace detail {
class replay_state;
} // namespace detail

/// One pass forward over memory lane `lane` from initial_allocator_state(), without keyframes:
/// each step costs O(log segments) and the reserved bytes are kept as it goes, so an analysis
/// that needs the state at a few events and a running figure at all of them stays n log n
/// (`tdiag trace oom`: the segments touched between two oom events, not a state per event).
class replay_pass {
public:
  replay_pass(const trace& t, lane_id lane);
  replay_pass(const replay_pass&) = delete;
  replay_pass& operator=(const replay_pass&) = delete;
  ~replay_pass();

  /// Applies the next event; false when it did not match the state (apply_memory_event).
  bool step();
  /// Events applied so far.
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  /// Reserved bytes now (saturated at 0).
  [[nodiscard]] std::uint64_t reserved() const noexcept {
    return reserved_ < 0 ? 0 : static_cast<std::uint64_t>(reserved_);
  }
  /// The state now: a copy, O(segments + blocks).
  [[nodiscard]] allocator_state state() const;

  /// For an analysis that keeps figures per segment and brings them up to date at a few events
  /// only: from now on the steps list the segments they change (touched()).
  void track_segments() noexcept;
  /// The start addresses of the segments the steps since the last clear_touched() changed, made
  /// or dropped (with repeats); empty with all_touched() when the steps were too many to list
  /// (more than about four per segment): then read the whole state.
  [[nodiscard]] std::span<const std::uint64_t> touched() const noexcept;
  [[nodiscard]] bool all_touched() const noexcept;
  void clear_touched() noexcept;
  /// With track_segments(): the segment that starts at `address` now, or null.
  [[nodiscard]] const segment* segment_at(std::uint64_t address) const;

private:
  std::span<const memory_event> events_;
  std::unique_ptr<detail::replay_state> state_;
  std::size_t position_ = 0;
  std::int64_t reserved_ = 0;
};

class allocator_replay {
public:
  /// Replays the events of memory lane `lane` of the finalized trace `t`, starting from the
  /// state derived backwards from t.final_allocator_state (only that lane's device), or from
  /// an empty state. `keyframe_interval` 0 picks one (about 256 keyframes at most).
  allocator_replay(const trace& t, lane_id lane, std::size_t keyframe_interval = 0);
  /// The same with the keyframe spacing chosen from a memory budget (replay_options).
  allocator_replay(const trace& t, lane_id lane, const replay_options& options);

  [[nodiscard]] std::span<const memory_event> events() const noexcept { return events_; }
  [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }
  [[nodiscard]] std::int32_t device() const noexcept { return device_; }
  [[nodiscard]] std::size_t keyframe_interval() const noexcept { return interval_; }
  [[nodiscard]] std::size_t keyframe_count() const noexcept { return keyframes_.size(); }
  /// Index in t.memory.all() of events()[0]: events()[i] is t.memory.all()[first_index() + i].
  [[nodiscard]] std::size_t first_index() const noexcept { return first_index_; }
  /// Whether the history has free_requested events (frees in two steps).
  [[nodiscard]] bool two_step_frees() const noexcept { return two_step_; }
  /// Largest reserved bytes over the keyframes and the final state (a scale for drawing).
  [[nodiscard]] std::uint64_t max_reserved() const noexcept { return max_reserved_; }

  /// The state before any recorded event.
  [[nodiscard]] const allocator_state& initial_state() const noexcept { return keyframes_.front(); }
  /// The state after the first `index` events (index <= size()), from the nearest keyframe.
  [[nodiscard]] allocator_state state_at(std::size_t index) const;
  /// The same computed from the initial state by applying every event (for tests).
  [[nodiscard]] allocator_state replay_from_start(std::size_t index) const;
  /// Number of events with time <= t: state_at(index_at_time(t)) is the state at time t.
  [[nodiscard]] std::size_t index_at_time(std::int64_t t) const noexcept;

  /// Events that did not match the state while deriving the initial state or replaying.
  [[nodiscard]] std::size_t mismatches() const noexcept { return mismatches_; }

private:
  friend class replay_cursor;
  void build(const trace& t, lane_id lane, const replay_options& options);
  /// Applies events [from, to) to `s`.
  void replay_forward(allocator_state& s, std::size_t from, std::size_t to) const;

  std::span<const memory_event> events_;
  std::size_t first_index_ = 0;
  std::int32_t device_ = 0;
  bool two_step_ = false;
  std::uint64_t max_reserved_ = 0;
  std::size_t interval_ = 1;
  std::vector<allocator_state> keyframes_; // keyframes_[k] = state after k * interval_ events
  std::size_t mismatches_ = 0;
};

/// A moving view for scrubbing: seek() replays forward from where it is when the target is
/// ahead and near, and restarts from a keyframe otherwise.
class replay_cursor {
public:
  explicit replay_cursor(const allocator_replay& replay);
  /// The state after the first `index` events (clamped to size()).
  const allocator_state& seek(std::size_t index);
  [[nodiscard]] std::size_t position() const noexcept { return position_; }
  [[nodiscard]] const allocator_state& state() const noexcept { return state_; }

private:
  const allocator_replay* replay_;
  allocator_state state_;
  std::size_t position_ = 0;
};

} // namespace tdiag::trace
