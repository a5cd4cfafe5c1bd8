// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocation_lifetimes.hpp>
#include <tensordiag/trace/allocator_replay.hpp>

#include <algorithm>
#include <unordered_map>

namespace tdiag::trace {

std::vector<allocation_lifetime> allocation_lifetimes(const trace& t, std::int32_t device) {
  return allocation_lifetimes(t, device, t.span().end);
}

std::vector<allocation_lifetime> allocation_lifetimes(const trace& t, std::int32_t device,
                                                      std::int64_t trace_end) {
  std::vector<allocation_lifetime> out;
  const auto lane = memory_lane_of(t, device);
  const auto events = t.memory.lane(lane);
  if (events.empty())
    return out;
  const auto first = static_cast<std::size_t>(events.data() - t.memory.all().data());
  const bool has_completed = std::any_of(events.begin(), events.end(), [](const memory_event& e) {
    return e.action == memory_action::free_completed;
  });
  const memory_action ending =
      has_completed ? memory_action::free_completed : memory_action::free_requested;
  std::unordered_map<std::uint64_t, std::size_t> open; // address -> index in out
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const auto index = static_cast<std::uint32_t>(first + i);
    if (e.action == memory_action::alloc) {
      allocation_lifetime a;
      a.address = e.address;
      a.size = e.size;
      a.begin = e.time;
      a.end = std::max(trace_end, e.time);
      a.alive_at_end = true;
      a.device = device;
      a.stack = e.stack;
      a.alloc_event = index;
      open[e.address] = out.size();
      out.push_back(a);
      continue;
    }
    if (e.action != memory_action::free_requested && e.action != memory_action::free_completed)
      continue;
    const auto it = open.find(e.address);
    if (it == open.end())
      continue;
    auto& a = out[it->second];
    a.freed_by_user = true;
    if (e.action != ending)
      continue;
    a.end = e.time;
    a.alive_at_end = false;
    a.free_event = index;
    open.erase(it);
  }
  return out;
}

} // namespace tdiag::trace
