// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "replay_state.hpp"

#include <tensordiag/trace/allocator_replay.hpp>

#include <algorithm>
#include <iterator>

#include "saturate.hpp"

namespace tdiag::trace::detail {
namespace {

// Totals of `device` within [lo, hi]: the reserved bytes of the segments that intersect it and
// the allocated bytes of their blocks that do. An event changes only those (a carve, a release
// and its merges touch the blocks around its address; a segment event spans its segment), so
// the difference before and after it is its effect on the whole state. Blocks are found by
// address: a segment of 100,000 blocks costs a search, not a sum over all of them.
replay_totals window(const allocator_state& s, std::int32_t device, std::uint64_t lo,
                     std::uint64_t hi) {
  replay_totals out;
  auto it = std::partition_point(s.segments.begin(), s.segments.end(), [&](const segment& seg) {
    return seg.device < device || (seg.device == device && seg.address + seg.total_size <= lo);
  });
  for (; it != s.segments.end() && it->device == device && it->address <= hi; ++it) {
    if (it->pool != implicit_pool)
      out.reserved = sat_add(out.reserved, signed_size(it->total_size));
    // The first block that ends past lo (blocks are sorted and do not overlap).
    auto b = std::partition_point(it->blocks.begin(), it->blocks.end(), [&](const block& x) {
      return x.address <= lo && x.size <= lo - x.address;
    });
    for (; b != it->blocks.end() && b->address <= hi; ++b) {
      if (b->state != block_state::active_allocated)
        continue;
      out.allocated = sat_add(out.allocated, signed_size(b->size));
      out.requested = sat_add(out.requested, signed_size(b->requested_size));
    }
  }
  return out;
}

bool is_segment_action(memory_action a) noexcept {
  return a == memory_action::segment_alloc || a == memory_action::segment_free ||
         a == memory_action::segment_map || a == memory_action::segment_unmap;
}

// Whether the lane only ever holds implicit segments.
bool implicit_only(std::int32_t device, std::span<const segment> start,
                   std::span<const memory_event> events) noexcept {
  return std::all_of(
             start.begin(), start.end(),
             [&](const segment& s) { return s.pool == implicit_pool && s.device == device; }) &&
         std::all_of(events.begin(), events.end(), [&](const memory_event& e) {
           return e.device == device && !is_segment_action(e.action);
         });
}

} // namespace

replay_totals totals_of(const allocator_state& s, std::int32_t device) {
  return window(s, device, 0, ~std::uint64_t{0});
}

replay_state::replay_state(allocator_state start, std::int32_t device,
                           std::span<const memory_event> events)
    : device_(device), sparse_(implicit_only(device, start.segments, events)),
      full_(std::move(start)) {
  if (!sparse_)
    return;
  for (auto& s : full_.segments)
    by_address_.emplace_hint(by_address_.end(), s.address, std::move(s));
  full_.segments.clear();
}

bool replay_state::step(const memory_event& e, bool backward, bool two_step_frees,
                        replay_totals* effect) {
  auto& s = sparse_ ? one_ : full_;
  // The segment find_segment() would pick: the last one starting at or below the address, if
  // it holds it.
  decltype(by_address_)::node_type node;
  if (sparse_) {
    one_.segments.clear();
    if (auto it = by_address_.upper_bound(e.address); it != by_address_.begin()) {
      const auto prev = std::prev(it);
      if (e.address - prev->second.address < prev->second.total_size) {
        node = by_address_.extract(prev);
        one_.segments.push_back(std::move(node.mapped()));
      }
    }
  }
  const std::uint64_t lo = e.address == 0 ? 0 : e.address - 1;
  const std::uint64_t span = std::max<std::uint64_t>(e.size, 1);
  const std::uint64_t hi = e.address > ~span ? ~std::uint64_t{0} : e.address + span;
  const auto before = effect != nullptr ? window(s, device_, lo, hi) : replay_totals{};
  const bool matched =
      backward ? undo_memory_event(s, e, two_step_frees) : apply_memory_event(s, e);
  if (effect != nullptr) {
    // Window totals are saturated sums (>= 0), so their difference fits.
    const auto after = window(s, device_, lo, hi);
    *effect = {after.allocated - before.allocated, after.requested - before.requested,
               after.reserved - before.reserved};
  }
  if (!sparse_)
    return matched;
  if (!backward)
    full_.time = e.time;
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

std::size_t replay_state::segment_count() const noexcept {
  return sparse_ ? by_address_.size() : full_.segments.size();
}

allocator_state replay_state::state() const {
  if (!sparse_)
    return full_;
  allocator_state s;
  s.time = full_.time;
  s.segments.reserve(by_address_.size());
  for (const auto& [address, seg] : by_address_)
    s.segments.push_back(seg);
  return s;
}

allocator_state replay_state::take() && {
  if (!sparse_)
    return std::move(full_);
  allocator_state s;
  s.time = full_.time;
  s.segments.reserve(by_address_.size());
  for (auto& [address, seg] : by_address_)
    s.segments.push_back(std::move(seg));
  return s;
}

} // namespace tdiag::trace::detail
