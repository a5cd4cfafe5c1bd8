// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What each memory event does to an allocator state, forward (apply_memory_event) and undone
// (undo_memory_event): blocks carved and released, segments made, dropped, grown, shrunk, cut
// and joined. Every replay (replay_state's map, a plain state) comes down to these.
#include <tensordiag/trace/allocator_replay.hpp>

#include <algorithm>
#include <array>
#include <cassert>
#include <optional>
#include <span>

#include "replay_state.hpp"

namespace tdiag::trace {
namespace {

segment* find_segment(allocator_state& s, std::int32_t device, std::uint64_t address) {
  return const_cast<segment*>(std::as_const(s).find_segment(device, address));
}

std::vector<segment>::iterator segment_at(allocator_state& s, std::int32_t device,
                                          std::uint64_t address) {
  auto it = std::lower_bound(
      s.segments.begin(), s.segments.end(), std::pair{device, address},
      [](const segment& seg, const std::pair<std::int32_t, std::uint64_t>& key) {
        return seg.device != key.first ? seg.device < key.first : seg.address < key.second;
      });
  return it != s.segments.end() && it->device == device && it->address == address
             ? it
             : s.segments.end();
}

// Inserts a segment of [e.address, e.address + e.size) in (device, address) order; returns it.
segment& insert_segment(allocator_state& s, const memory_event& e) {
  segment seg = detail::made_segment(e);
  seg.blocks.push_back({e.address, e.size, 0, block_state::inactive, no_stack});
  auto it = std::lower_bound(
      s.segments.begin(), s.segments.end(), seg, [](const segment& a, const segment& b) {
        return a.device != b.device ? a.device < b.device : a.address < b.address;
      });
  return *s.segments.insert(it, std::move(seg));
}

// Marks the block of a request of `size` bytes at `address` with `state`; the request must lie
// inside one inactive block. `i`: detail::block_index(seg, address).
bool carve(segment& seg, std::size_t i, std::uint64_t address, std::uint64_t size,
           block_state state, stack_id stack) {
  if (i == seg.blocks.size())
    return false;
  const block b = seg.blocks[i];
  const auto end = b.address + b.size;
  // A real segment's block is the rounded request, or the rest of the free block where that is
  // shorter (a history that disagrees with the dump); an implicit segment's is what the source
  // gave (Kineto and CUPTI report blocks; a host allocator does not round).
  const auto rounded = seg.pool == implicit_pool ? size : caching_block_size(size);
  if (b.state != block_state::inactive || address + size > end) {
    if (b.address == address && (b.size == size || b.size == rounded)) { // already there
      seg.blocks[i].state = state;
      seg.blocks[i].stack = stack;
    }
    return false;
  }
  const auto requested = size;
  size = std::min(rounded, end - address);
  // The caching allocator hands out a whole free block when the rest would be too small to
  // split off (should_split: small pool and expandable segments >= 512 B, large pool > 1 MiB).
  const auto rest = end - (address + size);
  if (address == b.address && rest > 0 &&
      ((seg.type == segment_type::small || seg.is_expandable) ? rest < 512
                                                              : rest <= (std::uint64_t{1} << 20)))
    size += rest;
  // At most three parts: the free head, the block, the free tail (no heap: this runs per event).
  std::array<block, 3> parts;
  std::size_t n = 0;
  if (address > b.address)
    parts[n++] = {b.address, address - b.address, 0, block_state::inactive, no_stack};
  parts[n++] = {address, size, requested, state, stack};
  if (address + size < end)
    parts[n++] = {address + size, end - address - size, 0, block_state::inactive, no_stack};
  seg.blocks[i] = parts[0];
  seg.blocks.insert(seg.blocks.begin() + static_cast<std::ptrdiff_t>(i) + 1, parts.begin() + 1,
                    parts.begin() + static_cast<std::ptrdiff_t>(n));
  return true;
}

// Makes block i inactive and merges it with inactive neighbours.
void release(segment& seg, std::size_t i) {
  auto& blocks = seg.blocks;
  blocks[i].state = block_state::inactive;
  blocks[i].stack = no_stack;
  blocks[i].requested_size = 0;
  if (i + 1 < blocks.size() && blocks[i + 1].state == block_state::inactive) {
    blocks[i].size += blocks[i + 1].size;
    blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  if (i > 0 && blocks[i - 1].state == block_state::inactive) {
    blocks[i - 1].size += blocks[i].size;
    blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// An implicit segment lives as long as its block.
void drop_if_idle_implicit(allocator_state& s, const segment* seg) {
  if (seg->pool != implicit_pool || seg->active_bytes() != 0)
    return;
  s.segments.erase(s.segments.begin() + (seg - s.segments.data()));
}

// The block of `seg` that starts at e.address set from `from` to `to` (released where `to` is
// inactive): whether it was in `from`, or nullopt where no block starts there (no change). `i`:
// detail::block_index(seg, e.address).
std::optional<bool> transition_in(segment& seg, std::size_t i, const memory_event& e,
                                  block_state from, block_state to) {
  if (i == seg.blocks.size() || seg.blocks[i].address != e.address)
    return std::nullopt;
  const bool matched = seg.blocks[i].state == from;
  if (to == block_state::inactive)
    release(seg, i);
  else
    seg.blocks[i].state = to;
  return matched;
}

// The same on the segment of `s` that holds e.address; an implicit segment left idle goes.
bool transition(allocator_state& s, const memory_event& e, block_state from, block_state to) {
  auto* seg = find_segment(s, e.device, e.address);
  if (seg == nullptr)
    return false;
  const auto matched = transition_in(*seg, detail::block_index(*seg, e.address), e, from, to);
  if (!matched)
    return false;
  if (to == block_state::inactive)
    drop_if_idle_implicit(s, seg);
  return *matched;
}

// A free completed on `seg` (a plain free, with no free_requested first, is fine too): the block
// that starts at e.address released, where one that is not inactive does; whether it was. `i`:
// detail::block_index(seg, e.address).
bool complete_free(segment& seg, std::size_t i, const memory_event& e) {
  if (i == seg.blocks.size() || seg.blocks[i].address != e.address ||
      seg.blocks[i].state == block_state::inactive)
    return false;
  release(seg, i);
  return true;
}

// True when the state holds a segment the source reported (not an implicit one) on `device`.
// Only `device`'s run of the (device, address) order is looked at, and the look stops at the
// first real segment: a snapshot answers at once; a source of implicit segments only still
// walks its live blocks, which inserting one costs anyway.
bool has_real_segment(const allocator_state& s, std::int32_t device) {
  auto it = std::partition_point(s.segments.begin(), s.segments.end(),
                                 [&](const segment& seg) { return seg.device < device; });
  for (; it != s.segments.end() && it->device == device; ++it)
    if (it->pool != implicit_pool)
      return true;
  return false;
}

// `real_segments`: whether the lane holds a real segment, when `s` holds only part of it.
bool add_block(allocator_state& s, const memory_event& e, block_state state, stack_id stack,
               std::optional<bool> real_segments) {
  if (auto* seg = find_segment(s, e.device, e.address))
    return carve(*seg, detail::block_index(*seg, e.address), e.address, e.size, state, stack);
  // Outside every segment: a source without segment events (Kineto, CUPTI) is consistent; in a
  // snapshot it is a mismatch. Either way the block is kept, in a segment of its own size.
  const bool consistent = !real_segments.value_or(has_real_segment(s, e.device));
  memory_event implicit = e;
  implicit.size = std::max<std::uint64_t>(e.size, 1);
  // The inserted segment itself: a find by address may return another one at the same address
  // (a zero-size segment in a damaged snapshot), or none.
  segment& seg = insert_segment(s, implicit);
  seg.pool = implicit_pool;
  seg.type = segment_type::unknown;
  seg.stack = no_stack;
  seg.blocks.front() = {e.address, implicit.size, e.size, state, stack};
  return consistent;
}

bool remove_segment(allocator_state& s, const memory_event& e) {
  auto it = segment_at(s, e.device, e.address);
  if (it == s.segments.end())
    return false;
  const bool idle = it->active_bytes() == 0;
  s.segments.erase(it);
  return idle;
}

bool add_segment(allocator_state& s, const memory_event& e) {
  if (find_segment(s, e.device, e.address) != nullptr)
    return false;
  insert_segment(s, e);
  return true;
}

// Whether another segment starts inside `seg` of `s` (damaged input: they overlap).
bool overlapped(const allocator_state& s, const segment* seg) {
  const auto i = static_cast<std::size_t>(seg - s.segments.data()) + 1;
  return i < s.segments.size() && s.segments[i].device == seg->device &&
         s.segments[i].address - seg->address < seg->total_size;
}

// The pages [e.address, e.address + e.size) as a range, or nullopt where they are none or run
// past 2^64 (damaged input: refused with no change, as the map replay leaves them out).
std::optional<std::uint64_t> pages_end(const memory_event& e) {
  if (e.size == 0 || e.size > ~e.address)
    return std::nullopt;
  return e.address + e.size;
}

// Expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True): pages mapped grow the
// segment that ends where they start (not a block's implicit one), join the expandable segment
// that starts where they end, or start a segment of their own. A snapshot lists each run of mapped
// pages as a segment, so a run joined from both sides is one segment again.
bool map_pages(allocator_state& s, const memory_event& e) {
  const auto end = pages_end(e);
  if (!end || find_segment(s, e.device, e.address) != nullptr)
    return false;
  auto next = std::partition_point(s.segments.begin(), s.segments.end(), [&](const segment& x) {
    return x.device < e.device || (x.device == e.device && x.address <= e.address);
  });
  if (next != s.segments.end() && next->device == e.device && next->address < *end)
    return false; // over a segment that starts inside the pages (damaged input)
  segment* prev = nullptr;
  if (e.address > 0)
    if (auto* p = find_segment(s, e.device, e.address - 1);
        p != nullptr && p->pool != implicit_pool && p->total_size == e.address - p->address)
      prev = p;
  // (Two runs joined are both expandable: the replay's fragments of one segment keep its kind.
  // One another segment starts inside is not joined to a run after it.)
  const bool joins_next = next != s.segments.end() && next->device == e.device &&
                          next->address == *end && next->is_expandable && next->total_size > 0 &&
                          !overlapped(s, &*next) &&
                          (prev == nullptr || (prev->is_expandable && !overlapped(s, prev)));
  if (prev == nullptr && !joins_next) {
    insert_segment(s, e).is_expandable = true; // not segments.back(): the order is by address
    return true;
  }
  if (prev == nullptr) {
    // The run that starts at the new pages: its allocation is the one that maps them.
    next->address = e.address;
    next->total_size += e.size;
    next->stack = e.stack;
    next->blocks.insert(next->blocks.begin(),
                        {e.address, e.size, 0, block_state::inactive, no_stack});
    release(*next, 0);
    return true;
  }
  const auto at = prev->blocks.size();
  prev->total_size += e.size;
  prev->blocks.push_back({e.address, e.size, 0, block_state::inactive, no_stack});
  if (joins_next) { // (next comes after prev in the order: erasing it leaves prev in place)
    prev->total_size += next->total_size;
    prev->blocks.insert(prev->blocks.end(), std::make_move_iterator(next->blocks.begin()),
                        std::make_move_iterator(next->blocks.end()));
    s.segments.erase(next);
  }
  release(*prev, at);
  return true;
}

// Pages unmapped: all of a segment (it goes), or free pages of one. A segment shrinks where they
// end it; an expandable one's start moves past them where they start it, and it is cut in two
// where they are inside it (torch.cuda.empty_cache() or an out-of-memory retry unmaps the free
// pages of an expandable segment wherever they are), the run after them a segment of its own. A
// run that no longer starts where its segment was first mapped has no stack, as PyTorch lists it.
bool unmap_pages(allocator_state& s, const memory_event& e) {
  const auto end = pages_end(e);
  auto* seg = end ? find_segment(s, e.device, e.address) : nullptr;
  if (seg == nullptr)
    return false;
  if (seg->address == e.address && seg->total_size <= e.size)
    return remove_segment(s, e);
  const auto seg_end = detail::end_of(*seg);
  const auto i = detail::block_index(*seg, e.address);
  if (*end > seg_end || i == seg->blocks.size())
    return false;
  const block b = seg->blocks[i];
  const bool at_end = *end == seg_end;
  if (b.state != block_state::inactive || *end > b.address + b.size ||
      (!seg->is_expandable && !at_end))
    return false;
  // Moving its start or cutting it must leave the order by address (damaged input: a segment
  // that starts inside it).
  if (!at_end && overlapped(s, seg))
    return false;
  // The free block's part before the pages stays; its part after them starts the run after.
  std::vector<block> after;
  const auto rest = seg->blocks.begin() + static_cast<std::ptrdiff_t>(i) + 1;
  if (!at_end) {
    if (*end < b.address + b.size)
      after.push_back({*end, b.address + b.size - *end, 0, block_state::inactive, no_stack});
    after.insert(after.end(), std::make_move_iterator(rest),
                 std::make_move_iterator(seg->blocks.end()));
    if (after.empty())
      return false; // blocks that stop short of its end (damaged input)
  }
  seg->blocks.erase(rest - (e.address > b.address ? 0 : 1), seg->blocks.end());
  if (e.address > b.address)
    seg->blocks.back().size = e.address - b.address;
  if (at_end) {
    seg->total_size = e.address - seg->address;
    return true;
  }
  if (e.address == seg->address) { // at its start
    seg->address = *end;
    seg->total_size = seg_end - *end;
    seg->stack = no_stack;
    seg->blocks = std::move(after);
    return true;
  }
  seg->total_size = e.address - seg->address;
  auto left = std::move(seg->blocks); // inside it: the run after the pages has its fields
  segment run = *seg;
  seg->blocks = std::move(left);
  run.address = *end;
  run.total_size = seg_end - *end;
  run.stack = no_stack;
  run.blocks = std::move(after);
  s.segments.insert(s.segments.begin() + (seg - s.segments.data()) + 1, std::move(run));
  return true;
}

bool apply_event(allocator_state& s, const memory_event& e, std::optional<bool> real_segments) {
  s.time = e.time;
  switch (e.action) {
  case memory_action::alloc:
    return add_block(s, e, block_state::active_allocated, e.stack, real_segments);
  case memory_action::free_requested:
    return transition(s, e, block_state::active_allocated, block_state::active_pending_free);
  case memory_action::free_completed: {
    auto* seg = find_segment(s, e.device, e.address);
    if (seg == nullptr || !complete_free(*seg, detail::block_index(*seg, e.address), e))
      return false;
    drop_if_idle_implicit(s, seg);
    return true;
  }
  case memory_action::segment_alloc:
    return add_segment(s, e);
  case memory_action::segment_free:
    return remove_segment(s, e);
  case memory_action::segment_map:
    return map_pages(s, e);
  case memory_action::segment_unmap:
    return unmap_pages(s, e);
  default:
    return true;
  }
}

bool undo_event(allocator_state& s, const memory_event& e, bool two_step_frees,
                std::optional<bool> real_segments) {
  switch (e.action) {
  case memory_action::alloc:
    return transition(s, e, block_state::active_allocated, block_state::inactive);
  case memory_action::free_requested:
    return transition(s, e, block_state::active_pending_free, block_state::active_allocated);
  case memory_action::free_completed:
    // Before the free completed the block was pending when the history has two-step frees
    // (the free_requested undo that follows moves it on), else allocated (a plain free).
    return add_block(
        s, e, two_step_frees ? block_state::active_pending_free : block_state::active_allocated,
        no_stack, real_segments);
  case memory_action::segment_alloc:
    return remove_segment(s, e);
  case memory_action::segment_free:
    return add_segment(s, e);
  case memory_action::segment_map:
    return unmap_pages(s, e);
  case memory_action::segment_unmap:
    return map_pages(s, e);
  default:
    return true;
  }
}

} // namespace

std::uint64_t caching_block_size(std::uint64_t size) noexcept {
  constexpr std::uint64_t min_block = 512;
  if (size < min_block)
    return min_block;
  return size > ~std::uint64_t{0} - (min_block - 1) ? size : (size + min_block - 1) & -min_block;
}

std::uint64_t caching_segment_size(std::uint64_t size) noexcept {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20, round_large = 2 * mib;
  const auto block = caching_block_size(size);
  if (block <= mib)
    return 2 * mib;
  if (block < 10 * mib)
    return 20 * mib;
  return block > ~std::uint64_t{0} - (round_large - 1) ? block
                                                       : (block + round_large - 1) & -round_large;
}

bool apply_memory_event(allocator_state& s, const memory_event& e) {
  return apply_event(s, e, std::nullopt);
}

bool undo_memory_event(allocator_state& s, const memory_event& e) {
  return undo_memory_event(s, e, true);
}

bool undo_memory_event(allocator_state& s, const memory_event& e, bool two_step_frees) {
  return undo_event(s, e, two_step_frees, std::nullopt);
}

namespace detail {

bool apply_to_part(allocator_state& part, const memory_event& e, bool real_segments) {
  return apply_event(part, e, real_segments);
}

bool undo_on_part(allocator_state& part, const memory_event& e, bool two_step_frees,
                  bool real_segments) {
  return undo_event(part, e, two_step_frees, real_segments);
}

segment made_segment(const memory_event& e) {
  segment seg;
  seg.device = e.device;
  seg.address = e.address;
  seg.total_size = e.size;
  seg.stream = e.stream;
  seg.pool = 0; // a driver allocation (cudaMalloc) is no pool's: pools hand out blocks
  seg.stack = e.stack;
  // The caching allocator's small pool uses 2 MiB segments (kSmallBuffer); large-pool segments
  // are 20 MiB or more, or other multiples of 2 MiB.
  seg.type = e.size == (std::uint64_t{2} << 20) ? segment_type::small : segment_type::large;
  return seg;
}

bool step_in_segment(segment& seg, std::size_t at, const memory_event& e, bool backward,
                     bool two_step_frees) {
  // As apply_event / undo_event do it once they have found `seg` (a real segment is never
  // dropped, and holds the address, so no block is put outside it).
  constexpr auto allocated = block_state::active_allocated,
                 pending = block_state::active_pending_free, inactive = block_state::inactive;
  switch (e.action) {
  case memory_action::alloc:
    return backward ? transition_in(seg, at, e, allocated, inactive).value_or(false)
                    : carve(seg, at, e.address, e.size, allocated, e.stack);
  case memory_action::free_requested:
    return (backward ? transition_in(seg, at, e, pending, allocated)
                     : transition_in(seg, at, e, allocated, pending))
        .value_or(false);
  case memory_action::free_completed:
    return backward
               ? carve(seg, at, e.address, e.size, two_step_frees ? pending : allocated, no_stack)
               : complete_free(seg, at, e);
  default:
    assert(false && "step_in_segment: not a block event");
    return false;
  }
}

} // namespace detail

} // namespace tdiag::trace
