// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "implicit_state.hpp"

#include <algorithm>
#include <iterator>

#include "saturate.hpp"

namespace tdiag::trace::detail {
namespace {

implicit_state::change totals_of(const allocator_state& s) noexcept {
  implicit_state::change c;
  for (const auto& seg : s.segments)
    for (const auto& b : seg.blocks)
      if (b.state == block_state::active_allocated) {
        c.allocated = sat_add(c.allocated, signed_size(b.size));
        c.requested = sat_add(c.requested, signed_size(b.requested_size));
      }
  return c;
}

bool is_segment_action(memory_action a) noexcept {
  return a == memory_action::segment_alloc || a == memory_action::segment_free ||
         a == memory_action::segment_map || a == memory_action::segment_unmap;
}

} // namespace

bool implicit_state::fits(std::int32_t device, std::span<const segment> start,
                          std::span<const memory_event> events) noexcept {
  return std::all_of(
             start.begin(), start.end(),
             [&](const segment& s) { return s.pool == implicit_pool && s.device == device; }) &&
         std::all_of(events.begin(), events.end(), [&](const memory_event& e) {
           return e.device == device && !is_segment_action(e.action);
         });
}

void implicit_state::assign(std::span<const segment> start) {
  by_address_.clear();
  for (const auto& s : start)
    by_address_.emplace_hint(by_address_.end(), s.address, s);
}

bool implicit_state::step(const memory_event& e, bool backward, bool two_step_frees,
                          change* effect) {
  // The segment find_segment() would pick: the last one starting at or below the address, if
  // it holds it.
  one_.segments.clear();
  decltype(by_address_)::node_type node;
  if (auto it = by_address_.upper_bound(e.address); it != by_address_.begin()) {
    const auto prev = std::prev(it);
    if (e.address - prev->second.address < prev->second.total_size) {
      node = by_address_.extract(prev);
      one_.segments.push_back(std::move(node.mapped()));
    }
  }
  const auto before = effect != nullptr ? totals_of(one_) : change{};
  const bool matched =
      backward ? undo_memory_event(one_, e, two_step_frees) : apply_memory_event(one_, e);
  if (effect != nullptr) {
    const auto after = totals_of(one_);
    effect->allocated = after.allocated - before.allocated;
    effect->requested = after.requested - before.requested;
  }
  // An event on an implicit segment keeps, drops or makes that one segment, nothing else.
  if (!one_.segments.empty()) {
    auto& seg = one_.segments.front();
    if (node) {
      node.key() = seg.address;
      node.mapped() = std::move(seg);
      by_address_.insert(std::move(node));
    } else {
      by_address_.emplace(seg.address, std::move(seg));
    }
  }
  return matched;
}

allocator_state implicit_state::to_state(std::int64_t time) const {
  allocator_state s;
  s.time = time;
  s.segments.reserve(by_address_.size());
  for (const auto& [address, seg] : by_address_)
    s.segments.push_back(seg);
  return s;
}

} // namespace tdiag::trace::detail
