// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Which launch holds which launch slot of a device, and when a slot is free again. A kernel finds
// its launch id through the slot encoded in its dynamic shared memory size, so a slot may only be
// given to another launch once its kernel has finished. Events tell: they complete in stream
// order, so one completed event frees every older slot of its stream. One event per launch
// would cost a cudaEventRecord each (190 to 320 ns on the H200 host, more than the launch budget);
// a stream gets one at its first launch and every `event_every` launches after, and at every
// launch while slots are short. A held slot is freed through its stream's latest event (found in
// the per-stream counts, so streams launching in turn do not hide each other's events), else
// through an event among the next `lookahead` slots. A user's stream is touched only inside the
// launch made on it (it may be destroyed right after), so the last few launches of a stream that
// goes quiet keep their slots until it launches again; when none is free a launch gets slot 0 and
// its failures are reported as not registered. Not thread-safe: the back-end holds the device's
// mutex. Not API.
//
// The algorithm is shared by the CUDA and HIP back-ends; `Api` (cuda/cuda_backend.cpp,
// hip/hip_backend.cpp) supplies the runtime: event_type, stream_type (both pointers, nullptr =
// none), status_type with constants `success` and `not_ready`, and static functions
// create_event(event_type*) (an event without timing), record_event(event, stream),
// query_event(event) returning a status_type, destroy_event(event).
#pragma once

#include <array>
#include <cstdint>

namespace tdiag::assertions::detail {

template <typename Api> class launch_slot_pool {
  using event_type = typename Api::event_type;
  using stream_type = typename Api::stream_type;
  using status_type = typename Api::status_type;

public:
  static constexpr std::uint32_t slots = 256;       // slot 0 = "not registered"
  static constexpr std::uint32_t graph_first = 224; // [224, 256): kept by captured launches
  static constexpr std::uint32_t event_every = 16;

  launch_slot_pool() = default;
  launch_slot_pool(const launch_slot_pool&) = delete;
  launch_slot_pool& operator=(const launch_slot_pool&) = delete;
  ~launch_slot_pool() {
    for (event_type e : events_)
      if (e != nullptr)
        Api::destroy_event(e);
  }

  /// A free slot, or 0 when every slot tried is still in flight. A launch being captured into a
  /// graph gets a slot of its own for good (the graph replays its shared memory size), or 0 once
  /// the graph slots are gone.
  std::uint32_t acquire(bool capturing) {
    if (capturing)
      return next_graph_ < slots ? next_graph_++ : 0;
    // Past a quiet stream's last launches: up to event_every - 1 of them in a row hold their
    // slots with no event to free them.
    for (std::uint32_t tries = 0; tries < event_every + 8; ++tries) {
      const std::uint32_t slot = next_;
      next_ = next_ == normal ? 1 : next_ + 1;
      if (owner_[slot] == 0)
        return slot;
      if (owner_[slot] == retired)
        continue;
      if (free_through_stream(slot) || free_through_cover(slot))
        return slot;
      short_ = true; // a slot still held: cover every launch until slots come back
    }
    return 0;
  }

  /// `slot` now holds the launch just made on `stream` (the caller holds the lock it launched
  /// under, so the pool's order is each stream's order; launch ids are not: two host threads may
  /// take ids in one order and launch in the other). False when the event could not be
  /// recorded (a broken context, which the caller's next CUDA call reports).
  bool launched(std::uint32_t slot, stream_type stream) {
    const std::uint64_t id = ++sequence_;
    owner_[slot] = id;
    stream_[slot] = stream;
    has_event_[slot] = false;
    stream_count& c = count_for(stream);
    if (++c.since_event < event_every && !c.fresh && !short_)
      return true;
    c.since_event = 0;
    c.fresh = false;
    if (!record(slot))
      return false;
    c.event_slot = slot;
    c.event_id = id;
    return true;
  }

private:
  static constexpr std::uint32_t normal = graph_first - 1; // slots [1, normal]
  static constexpr std::uint64_t retired = ~0ull;          // never freed again
  static constexpr std::uint32_t lookahead = 32;

  struct stream_count {
    stream_type stream = nullptr;
    std::uint32_t since_event = 0;
    std::uint64_t used = 0;       // for least-recently-used replacement
    bool fresh = true;            // the first launch seen on a stream gets an event
    std::uint32_t event_slot = 0; // the slot of the stream's latest event (0: none)
    std::uint64_t event_id = 0;   // the launch holding it then
  };

  bool record(std::uint32_t slot) {
    if (events_[slot] == nullptr && Api::create_event(&events_[slot]) != Api::success) {
      owner_[slot] = retired;
      return false;
    }
    if (Api::record_event(events_[slot], stream_[slot]) != Api::success) {
      owner_[slot] = retired;
      return false;
    }
    has_event_[slot] = true;
    return true;
  }

  stream_count& count_for(stream_type stream) {
    ++clock_;
    stream_count* oldest = &counts_[0];
    for (auto& c : counts_) {
      if (c.used != 0 && c.stream == stream) {
        c.used = clock_;
        return c;
      }
      if (c.used < oldest->used)
        oldest = &c;
    }
    *oldest = stream_count{stream, 0, clock_, true};
    return *oldest;
  }

  // Frees `slot` if its stream's latest event covers it and has completed. Looks the stream up
  // without making it recently used: only launches do.
  bool free_through_stream(std::uint32_t slot) {
    for (const auto& c : counts_) {
      if (c.used == 0 || c.stream != stream_[slot])
        continue;
      const std::uint32_t j = c.event_slot;
      if (j == 0 || !has_event_[j] || owner_[j] != c.event_id || c.event_id < owner_[slot])
        return false;
      return free_if_finished(j) && owner_[slot] == 0;
    }
    return false;
  }

  // Frees `slot` if a completed event of its stream covers it: the latest event-bearing slot of
  // the same stream among the next `lookahead` slots, or its own. A slot no event covers waits for
  // a later event of its stream.
  bool free_through_cover(std::uint32_t slot) {
    for (std::uint32_t k = lookahead; k-- > 0;) {
      const std::uint32_t j = (slot - 1 + k) % normal + 1;
      if (has_event_[j] && owner_[j] != retired && owner_[j] >= owner_[slot] &&
          stream_[j] == stream_[slot])
        return free_if_finished(j) && owner_[slot] == 0;
    }
    return false;
  }

  bool free_if_finished(std::uint32_t slot) {
    const status_type e = Api::query_event(events_[slot]);
    if (e == Api::not_ready)
      return false;
    if (e != Api::success) { // a broken context: the launch that follows reports it
      owner_[slot] = retired;
      return false;
    }
    const std::uint64_t through = owner_[slot];
    const stream_type stream = stream_[slot];
    for (std::uint32_t i = 1; i <= normal; ++i)
      if (owner_[i] != retired && owner_[i] <= through && stream_[i] == stream) {
        owner_[i] = 0;
        has_event_[i] = false;
      }
    short_ = false;
    return true;
  }

  std::array<std::uint64_t, slots> owner_{}; // sequence number of its launch; 0 = free
  std::array<stream_type, slots> stream_{};
  std::array<event_type, slots> events_{};
  std::array<bool, slots> has_event_{};
  std::array<stream_count, 32> counts_{};
  std::uint64_t clock_ = 0;
  std::uint64_t sequence_ = 0; // launches through the pool, in the order they were made
  bool short_ = false;         // the last acquire met a slot still held: every launch gets an event
  std::uint32_t next_ = 1;
  std::uint32_t next_graph_ = graph_first;
};

} // namespace tdiag::assertions::detail
