// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "replay_state.hpp"

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <algorithm>
#include <array>
#include <cassert>
#include <iterator>

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

// Whether the map holds the lane as the vector does: one device, and no segment of size 0
// (the only way two segments share an address, which a map keyed by address cannot hold).
bool mappable(std::int32_t device, std::span<const segment> start,
              std::span<const memory_event> events) noexcept {
  for (std::size_t i = 0; i < start.size(); ++i)
    if (start[i].device != device || start[i].total_size == 0 ||
        (i > 0 && start[i - 1].address >= start[i].address))
      return false;
  return std::all_of(events.begin(), events.end(), [&](const memory_event& e) {
    return e.device == device && !(is_segment_action(e.action) && e.size == 0);
  });
}

std::size_t count_real(std::span<const segment> segments) noexcept {
  return static_cast<std::size_t>(std::count_if(
      segments.begin(), segments.end(), [](const segment& s) { return s.pool != implicit_pool; }));
}

bool maps_pages(const memory_event& e, bool backward) noexcept {
  return e.action == (backward ? memory_action::segment_unmap : memory_action::segment_map);
}

} // namespace

replay_totals totals_of(const allocator_state& s, std::int32_t device) {
  return window(s, device, 0, ~std::uint64_t{0});
}

replay_state::replay_state(allocator_state start, std::int32_t device,
                           std::span<const memory_event> events)
    : device_(device), mapped_(mappable(device, start.segments, events)), full_(std::move(start)) {
  if (!mapped_)
    return;
  real_ = count_real(full_.segments);
  for (auto& s : full_.segments)
    by_address_.emplace_hint(by_address_.end(), s.address, std::move(s));
  full_.segments.clear();
}

// The copy's map is its own: the floor entry found in the original's is not in it.
replay_state::replay_state(const replay_state& other)
    : device_(other.device_), mapped_(other.mapped_), full_(other.full_),
      by_address_(other.by_address_), real_(other.real_), part_(other.part_) {}

replay_state::segment_map::iterator replay_state::take_out(std::uint64_t address,
                                                           segment_map::iterator skip) {
  // The entry the last search found answers again for the addresses up to the next key, while
  // the map holds the same keys: a history often works in one segment for a while.
  const bool again =
      skip == by_address_.end() && has_floor_ && floor_->first <= address && address < floor_end_;
  if (!again) {
    const auto next = by_address_.upper_bound(address);
    if (next == by_address_.begin())
      return by_address_.end();
    floor_ = std::prev(next);
    // Past the last key the entry answers for every address; floor_end_ = ~0 leaves out ~0.
    floor_end_ = next == by_address_.end() ? ~std::uint64_t{0} : next->first;
    has_floor_ = true;
  }
  auto it = floor_;
  // Already taken out (its segment is in part_): as if it were no longer in the map.
  if (it == skip) {
    if (it == by_address_.begin())
      return by_address_.end();
    --it;
  }
  if (address - it->second.address >= it->second.total_size)
    return by_address_.end();
  part_.segments.push_back(std::move(it->second));
  return it;
}

bool replay_state::step(const memory_event& e, bool backward, bool two_step_frees,
                        replay_totals* effect) {
  auto& s = mapped_ ? part_ : full_;
  // The map entries whose segments part_ holds (taken[1] first, then taken[0]), to put them back.
  std::array<segment_map::iterator, 2> taken{by_address_.end(), by_address_.end()};
  std::size_t real_before = 0;
  if (mapped_) {
    part_.segments.clear();
    // Pages mapped at the end of a segment grow the one that holds the byte before them.
    if (maps_pages(e, backward) && e.address > 0)
      taken[1] = take_out(e.address - 1, by_address_.end());
    taken[0] = take_out(e.address, taken[1]);
    if (part_.segments.size() == 2 && part_.segments[1].address < part_.segments[0].address)
      std::swap(part_.segments[0], part_.segments[1]);
    real_before = count_real(part_.segments);
  }
  const std::uint64_t lo = e.address == 0 ? 0 : e.address - 1;
  const std::uint64_t span = std::max<std::uint64_t>(e.size, 1);
  const std::uint64_t hi = e.address > ~span ? ~std::uint64_t{0} : e.address + span;
  const auto before = effect != nullptr ? window(s, device_, lo, hi) : replay_totals{};
  bool matched = false;
  if (!mapped_)
    matched = backward ? undo_memory_event(s, e, two_step_frees) : apply_memory_event(s, e);
  else if (backward)
    matched = undo_on_part(s, e, two_step_frees, real_ > 0);
  else
    matched = apply_to_part(s, e, real_ > 0);
  if (effect != nullptr) {
    // Window totals are saturated sums (>= 0), so their difference fits.
    const auto after = window(s, device_, lo, hi);
    *effect = {after.allocated - before.allocated, after.requested - before.requested,
               after.reserved - before.reserved};
  }
  if (!mapped_)
    return matched;
  if (!backward)
    full_.time = e.time;
  // The event kept, dropped or made segments of part_ only; they go back, in their old nodes
  // where there are some.
  real_ = real_ - real_before + count_real(part_.segments);
  if (track_ && !all_touched_) {
    for (const auto& it : taken)
      if (it != by_address_.end())
        touched_.push_back(it->first);
    for (const auto& seg : part_.segments)
      touched_.push_back(seg.address);
    // A long run of steps between two readings costs a reading of the whole state, not a list
    // longer than it.
    if (touched_.size() > 4 * by_address_.size() + 4096) {
      all_touched_ = true;
      touched_ = {};
    }
  }
  // The common case: one segment, still at its address, goes back into its own entry.
  const auto end = by_address_.end();
  if (taken[1] == end && taken[0] != end && part_.segments.size() == 1 &&
      part_.segments.front().address == taken[0]->first) {
    taken[0]->second = std::move(part_.segments.front());
    return matched;
  }
  // Otherwise the entries leave the map, and their nodes take what part_ holds now.
  has_floor_ = false;
  std::array<segment_map::node_type, 2> nodes;
  for (std::size_t i = 0; i < taken.size(); ++i)
    if (taken[i] != end)
      nodes[i] = by_address_.extract(taken[i]);
  std::size_t spare = 0;
  for (auto& seg : part_.segments) {
    while (spare < nodes.size() && nodes[spare].empty())
      ++spare;
    // No key is taken: a segment made here starts where none held the address (sizes are
    // never 0 in the map), and the ones taken out left their keys free.
    if (spare == nodes.size()) {
      [[maybe_unused]] const bool made = by_address_.emplace(seg.address, std::move(seg)).second;
      assert(made);
      continue;
    }
    auto& node = nodes[spare++];
    node.key() = seg.address;
    node.mapped() = std::move(seg);
    [[maybe_unused]] const bool put = by_address_.insert(std::move(node)).inserted;
    assert(put);
  }
  return matched;
}

std::size_t replay_state::segment_count() const noexcept {
  return mapped_ ? by_address_.size() : full_.segments.size();
}

const segment* replay_state::segment_at(std::uint64_t address) const {
  const auto it = by_address_.find(address);
  return it == by_address_.end() ? nullptr : &it->second;
}

allocator_state replay_state::state() const {
  if (!mapped_)
    return full_;
  allocator_state s;
  s.time = full_.time;
  s.segments.reserve(by_address_.size());
  for (const auto& [address, seg] : by_address_)
    s.segments.push_back(seg);
  return s;
}

allocator_state replay_state::take() && {
  if (!mapped_)
    return std::move(full_);
  allocator_state s;
  s.time = full_.time;
  s.segments.reserve(by_address_.size());
  for (auto& [address, seg] : by_address_)
    s.segments.push_back(std::move(seg));
  return s;
}

} // namespace tdiag::trace::detail
