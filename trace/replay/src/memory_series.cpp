// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/memory_series.hpp>

#include <algorithm>
#include <functional>

#include "replay_split.hpp"
#include "replay_state.hpp"

namespace tdiag::trace {

bool for_each_memory_sample(const trace& t, lane_id lane,
                            const std::function<void(const memory_sample&)>& visit,
                            std::size_t* mismatches, unsigned threads) {
  const auto events = t.memory.lane(lane);
  if (events.empty()) {
    // A dump without history: its totals, once, at its time.
    if (!has_memory_history(t, lane))
      return false;
    const auto device = static_cast<std::int32_t>(t.lanes.at(lane).group);
    const auto now = detail::totals_of(initial_allocator_state(t, lane), device);
    visit({t.final_allocator_state->time, now.allocated, now.requested, now.reserved});
    return false;
  }
  const bool reported = std::any_of(events.begin(), events.end(), [&](const memory_event& e) {
    const auto& d = t.detail_of(e);
    return d.total_allocated >= 0 || d.total_reserved >= 0;
  });
  if (reported) {
    // Totals as reported; an event without them keeps the last value. Before the first event:
    // what it reported, less its own effect.
    memory_sample s{events.front().time, 0, -1, 0};
    const auto& e0 = events.front();
    const auto& d0 = t.detail_of(e0);
    if (d0.total_allocated >= 0)
      s.allocated = d0.total_allocated;
    if (d0.total_reserved >= 0)
      s.reserved = d0.total_reserved;
    memory_sample first = s;
    const auto size = detail::signed_size(e0.size);
    if (e0.action == memory_action::alloc)
      first.allocated = std::max<std::int64_t>(first.allocated - size, 0);
    else if (e0.action == memory_action::free_completed)
      first.allocated = detail::sat_add(first.allocated, size);
    visit(first);
    // An allocation or free whose reported allocated total does not move by its bytes from the
    // one before: the totals and the events disagree (leaks pairs the events, summary reads the
    // totals), which the caller says.
    std::size_t disagree = 0;
    std::int64_t last = -1;
    for (const auto& e : events) {
      const auto& d = t.detail_of(e);
      s.time = e.time;
      if (d.total_allocated >= 0) {
        const auto bytes = detail::signed_size(e.size);
        if (last >= 0 &&
            (e.action == memory_action::alloc || e.action == memory_action::free_completed))
          disagree += detail::sat_sub(d.total_allocated, last) !=
                              (e.action == memory_action::alloc ? bytes : -bytes)
                          ? 1
                          : 0;
        last = d.total_allocated;
        s.allocated = d.total_allocated;
      }
      if (d.total_reserved >= 0)
        s.reserved = d.total_reserved;
      visit(s);
    }
    if (mismatches != nullptr)
      *mismatches = disagree;
    return true;
  }
  const auto missed = detail::replay_samples(t, lane, threads, visit);
  if (mismatches != nullptr)
    *mismatches = missed;
  return false;
}

memory_series memory_series_of(const trace& t, lane_id lane) {
  memory_series out;
  out.lane = lane;
  out.device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  out.samples.reserve(t.memory.lane(lane).size() + 1);
  out.reported =
      for_each_memory_sample(t, lane, [&](const memory_sample& s) { out.samples.push_back(s); });
  return out;
}

} // namespace tdiag::trace
