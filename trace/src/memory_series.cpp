// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/memory_series.hpp>

#include <algorithm>

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

memory_series memory_series_of(const trace& t, lane_id lane) {
  memory_series out;
  out.lane = lane;
  out.device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  const auto events = t.memory.lane(lane);
  if (events.empty())
    return out;
  out.samples.reserve(events.size() + 1);
  out.reported = std::any_of(events.begin(), events.end(), [](const memory_event& e) {
    return e.total_allocated >= 0 || e.total_reserved >= 0;
  });
  if (out.reported) {
    // Totals as reported; an event without them keeps the last value.
    memory_sample s{events.front().time, 0, -1, 0};
    out.samples.push_back(s);
    for (const auto& e : events) {
      s.time = e.time;
      if (e.total_allocated >= 0)
        s.allocated = e.total_allocated;
      if (e.total_reserved >= 0)
        s.reserved = e.total_reserved;
      out.samples.push_back(s);
    }
    // Before the first event: what it reported, less its own effect.
    auto& first = out.samples.front();
    first = out.samples[1];
    const auto size = detail::signed_size(events.front().size);
    if (events.front().action == memory_action::alloc)
      first.allocated = std::max<std::int64_t>(first.allocated - size, 0);
    else if (events.front().action == memory_action::free_completed)
      first.allocated = detail::sat_add(first.allocated, size);
    return out;
  }
  const allocator_replay replay(t, lane);
  allocator_state s = replay.initial_state();
  totals now = whole(s, out.device);
  out.samples.push_back({events.front().time, now.allocated, now.requested, now.reserved});
  for (const auto& e : events) {
    const std::uint64_t lo = e.address == 0 ? 0 : e.address - 1;
    const std::uint64_t span = std::max<std::uint64_t>(e.size, 1);
    const std::uint64_t hi = e.address > ~span ? ~std::uint64_t{0} : e.address + span;
    const totals before = window(s, out.device, lo, hi);
    apply_memory_event(s, e);
    const totals after = window(s, out.device, lo, hi);
    // Window totals are saturated sums (>= 0), so their difference fits; the running total
    // saturates too: sizes near 2^63 from a file must not overflow (found by the fuzzers).
    now.allocated = detail::sat_add(now.allocated, after.allocated - before.allocated);
    now.requested = detail::sat_add(now.requested, after.requested - before.requested);
    now.reserved = detail::sat_add(now.reserved, after.reserved - before.reserved);
    out.samples.push_back({e.time, now.allocated, now.requested, now.reserved});
  }
  return out;
}

} // namespace tdiag::trace
