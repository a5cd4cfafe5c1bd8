// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>

#include <algorithm>
#include <functional>

#include "implicit_state.hpp"
#include "saturate.hpp"

namespace tdiag::trace {
namespace {

struct totals {
  std::int64_t allocated = 0, requested = 0, reserved = 0;
};

// Totals of `device` within [lo, hi]: the reserved bytes of the segments that intersect it and
// the allocated bytes of their blocks that do. An event changes only those (a carve, a release
// and its merges touch the blocks around its address; a segment event spans its segment), so
// the difference before and after it is its effect on the whole state. Blocks are found by
// address: a segment of 100,000 blocks costs a search, not a sum over all of them.
totals window(const allocator_state& s, std::int32_t device, std::uint64_t lo, std::uint64_t hi) {
  totals out;
  auto it = std::partition_point(s.segments.begin(), s.segments.end(), [&](const segment& seg) {
    return seg.device < device || (seg.device == device && seg.address + seg.total_size <= lo);
  });
  for (; it != s.segments.end() && it->device == device && it->address <= hi; ++it) {
    if (it->pool != implicit_pool)
      out.reserved = detail::sat_add(out.reserved, detail::signed_size(it->total_size));
    // The first block that ends past lo (blocks are sorted and do not overlap).
    auto b = std::partition_point(it->blocks.begin(), it->blocks.end(), [&](const block& x) {
      return x.address <= lo && x.size <= lo - x.address;
    });
    for (; b != it->blocks.end() && b->address <= hi; ++b) {
      if (b->state != block_state::active_allocated)
        continue;
      out.allocated = detail::sat_add(out.allocated, detail::signed_size(b->size));
      out.requested = detail::sat_add(out.requested, detail::signed_size(b->requested_size));
    }
  }
  return out;
}

totals whole(const allocator_state& s, std::int32_t device) {
  return window(s, device, 0, ~std::uint64_t{0});
}

} // namespace

bool for_each_memory_sample(const trace& t, lane_id lane,
                            const std::function<void(const memory_sample&)>& visit) {
  const auto events = t.memory.lane(lane);
  if (events.empty())
    return false;
  const bool reported = std::any_of(events.begin(), events.end(), [](const memory_event& e) {
    return e.total_allocated >= 0 || e.total_reserved >= 0;
  });
  if (reported) {
    // Totals as reported; an event without them keeps the last value. Before the first event:
    // what it reported, less its own effect.
    memory_sample s{events.front().time, 0, -1, 0};
    const auto& e0 = events.front();
    if (e0.total_allocated >= 0)
      s.allocated = e0.total_allocated;
    if (e0.total_reserved >= 0)
      s.reserved = e0.total_reserved;
    memory_sample first = s;
    const auto size = detail::signed_size(e0.size);
    if (e0.action == memory_action::alloc)
      first.allocated = std::max<std::int64_t>(first.allocated - size, 0);
    else if (e0.action == memory_action::free_completed)
      first.allocated = detail::sat_add(first.allocated, size);
    visit(first);
    for (const auto& e : events) {
      s.time = e.time;
      if (e.total_allocated >= 0)
        s.allocated = e.total_allocated;
      if (e.total_reserved >= 0)
        s.reserved = e.total_reserved;
      visit(s);
    }
    return true;
  }
  // One pass forward from the derived initial state: no keyframes, which only a viewer's
  // scrubbing needs.
  allocator_state s = initial_allocator_state(t, lane);
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  totals now = whole(s, device);
  visit({events.front().time, now.allocated, now.requested, now.reserved});
  if (detail::implicit_state::fits(device, s.segments, events)) {
    // Implicit segments only (reserved stays 0): each event changes the one segment at its
    // address, replayed in a map rather than the state's sorted vector.
    detail::implicit_state sparse;
    sparse.assign(s.segments);
    detail::implicit_state::change c;
    for (const auto& e : events) {
      sparse.step(e, false, false, &c);
      now.allocated = detail::sat_add(now.allocated, c.allocated);
      now.requested = detail::sat_add(now.requested, c.requested);
      visit({e.time, now.allocated, now.requested, now.reserved});
    }
    return false;
  }
  for (const auto& e : events) {
    const std::uint64_t lo = e.address == 0 ? 0 : e.address - 1;
    const std::uint64_t span = std::max<std::uint64_t>(e.size, 1);
    const std::uint64_t hi = e.address > ~span ? ~std::uint64_t{0} : e.address + span;
    const totals before = window(s, device, lo, hi);
    apply_memory_event(s, e);
    const totals after = window(s, device, lo, hi);
    // Window totals are saturated sums (>= 0), so their difference fits; the running total
    // saturates too: sizes near 2^63 from a file must not overflow (found by the fuzzers).
    now.allocated = detail::sat_add(now.allocated, after.allocated - before.allocated);
    now.requested = detail::sat_add(now.requested, after.requested - before.requested);
    now.reserved = detail::sat_add(now.reserved, after.reserved - before.reserved);
    visit({e.time, now.allocated, now.requested, now.reserved});
  }
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
