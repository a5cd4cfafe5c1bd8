// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/allocator_replay.hpp>

#include <algorithm>
#include <iterator>

namespace tdiag::view {
namespace {

using trace::allocator_state;
using trace::block;
using trace::block_state;
using trace::memory_action;
using trace::memory_event;
using trace::segment;

using segment_iter = std::vector<segment>::iterator;

// The segment containing `address` (or ending exactly at it when `or_adjacent`).
segment_iter find_segment(allocator_state& s, std::uint64_t address, bool or_adjacent = false) {
  auto it = std::upper_bound(s.segments.begin(), s.segments.end(), address,
                             [](std::uint64_t a, const segment& seg) { return a < seg.address; });
  if (it == s.segments.begin())
    return s.segments.end();
  --it;
  const std::uint64_t end = it->address + it->total_size;
  if (address < end || (or_adjacent && address == end))
    return it;
  return s.segments.end();
}

void insert_segment(allocator_state& s, segment seg) {
  auto it = std::lower_bound(s.segments.begin(), s.segments.end(), seg.address,
                             [](const segment& x, std::uint64_t a) { return x.address < a; });
  s.segments.insert(it, std::move(seg));
}

segment make_segment(const memory_event& e) {
  segment seg;
  seg.device = e.device;
  seg.address = e.address;
  seg.total_size = e.size;
  seg.stream = e.stream;
  seg.pool = e.pool;
  seg.stack = e.stack;
  seg.blocks.push_back({e.address, e.size, 0, block_state::inactive, trace::no_stack});
  return seg;
}

// Merges inactive neighbours around blocks[i].
void merge_free(segment& seg, std::size_t i) {
  auto& b = seg.blocks;
  if (i >= b.size() || b[i].state != block_state::inactive)
    return;
  b[i].stack = trace::no_stack;
  b[i].requested_size = 0;
  if (i + 1 < b.size() && b[i + 1].state == block_state::inactive) {
    b[i].size += b[i + 1].size;
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(i) + 1);
  }
  if (i > 0 && b[i - 1].state == block_state::inactive) {
    b[i - 1].size += b[i].size;
    b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// Gives [address, address + size) (clipped to the block containing address) the state `st`,
// splitting that block; returns the index of the block now covering `address`, or npos.
std::size_t set_range(segment& seg, std::uint64_t address, std::uint64_t size, block_state st,
                      trace::stack_id stack) {
  auto& b = seg.blocks;
  auto it = std::upper_bound(b.begin(), b.end(), address,
                             [](std::uint64_t a, const block& x) { return a < x.address; });
  if (it == b.begin())
    return static_cast<std::size_t>(-1);
  std::size_t i = static_cast<std::size_t>(std::prev(it) - b.begin());
  block cur = b[i];
  if (address >= cur.address + cur.size)
    return static_cast<std::size_t>(-1);
  const std::uint64_t end =
      std::min(address + std::max<std::uint64_t>(size, 1), cur.address + cur.size);
  block mid{address, end - address, end - address, st, stack};
  std::vector<block> pieces;
  if (address > cur.address)
    pieces.push_back({cur.address, address - cur.address, 0, cur.state, cur.stack});
  pieces.push_back(mid);
  if (end < cur.address + cur.size)
    pieces.push_back({end, cur.address + cur.size - end, 0, cur.state, cur.stack});
  b.erase(b.begin() + static_cast<std::ptrdiff_t>(i));
  b.insert(b.begin() + static_cast<std::ptrdiff_t>(i), pieces.begin(), pieces.end());
  return address > cur.address ? i + 1 : i;
}

// The block starting exactly at `address` in `seg`, or npos.
std::size_t block_at(segment& seg, std::uint64_t address) {
  auto it = std::lower_bound(seg.blocks.begin(), seg.blocks.end(), address,
                             [](const block& x, std::uint64_t a) { return x.address < a; });
  if (it == seg.blocks.end() || it->address != address)
    return static_cast<std::size_t>(-1);
  return static_cast<std::size_t>(it - seg.blocks.begin());
}

void allocate(allocator_state& s, const memory_event& e, block_state st) {
  auto seg = find_segment(s, e.address);
  if (seg == s.segments.end()) {
    segment implicit = make_segment(e);
    implicit.pool = implicit_pool;
    implicit.stack = trace::no_stack;
    implicit.blocks.front().state = st;
    implicit.blocks.front().requested_size = e.size;
    implicit.blocks.front().stack = e.stack;
    insert_segment(s, std::move(implicit));
    return;
  }
  set_range(*seg, e.address, e.size, st, e.stack);
}

void release(allocator_state& s, const memory_event& e) {
  auto seg = find_segment(s, e.address);
  if (seg == s.segments.end())
    return;
  const std::size_t i = block_at(*seg, e.address);
  if (i == static_cast<std::size_t>(-1))
    return;
  seg->blocks[i].state = block_state::inactive;
  merge_free(*seg, i);
  if (seg->pool == implicit_pool && seg->blocks.size() == 1 &&
      seg->blocks.front().state == block_state::inactive)
    s.segments.erase(seg);
}

void set_state(allocator_state& s, const memory_event& e, block_state st) {
  auto seg = find_segment(s, e.address);
  if (seg == s.segments.end())
    return;
  const std::size_t i = block_at(*seg, e.address);
  if (i == static_cast<std::size_t>(-1) || seg->blocks[i].state == block_state::inactive)
    return;
  seg->blocks[i].state = st;
}

void map_pages(allocator_state& s, const memory_event& e) {
  auto seg = find_segment(s, e.address, true);
  if (seg == s.segments.end()) {
    insert_segment(s, make_segment(e));
    return;
  }
  if (e.address != seg->address + seg->total_size)
    return; // already mapped
  seg->total_size += e.size;
  seg->blocks.push_back({e.address, e.size, 0, block_state::inactive, trace::no_stack});
  merge_free(*seg, seg->blocks.size() - 1);
}

void unmap_pages(allocator_state& s, const memory_event& e) {
  auto seg = find_segment(s, e.address);
  if (seg == s.segments.end())
    return;
  if (e.address == seg->address && e.size >= seg->total_size) {
    s.segments.erase(seg);
    return;
  }
  if (e.address + e.size != seg->address + seg->total_size)
    return; // a hole in the middle: not something expandable segments do
  seg->total_size -= e.size;
  auto& b = seg->blocks;
  while (!b.empty() && b.back().address >= e.address)
    b.pop_back();
  if (!b.empty() && b.back().address + b.back().size > e.address)
    b.back().size = e.address - b.back().address;
}

void remove_segment(allocator_state& s, const memory_event& e) {
  auto seg = find_segment(s, e.address);
  if (seg != s.segments.end() && seg->address == e.address)
    s.segments.erase(seg);
}

} // namespace

bool changes_allocator_state(trace::memory_action a) noexcept {
  switch (a) {
  case memory_action::alloc:
  case memory_action::free_requested:
  case memory_action::free_completed:
  case memory_action::segment_alloc:
  case memory_action::segment_free:
  case memory_action::segment_map:
  case memory_action::segment_unmap:
    return true;
  default:
    return false;
  }
}

void apply_event(allocator_state& s, const memory_event& e) {
  switch (e.action) {
  case memory_action::alloc:
    allocate(s, e, block_state::active_allocated);
    break;
  case memory_action::free_requested:
    set_state(s, e, block_state::active_pending_free);
    break;
  case memory_action::free_completed:
    release(s, e);
    break;
  case memory_action::segment_alloc:
    if (find_segment(s, e.address) == s.segments.end())
      insert_segment(s, make_segment(e));
    break;
  case memory_action::segment_free:
    remove_segment(s, e);
    break;
  case memory_action::segment_map:
    map_pages(s, e);
    break;
  case memory_action::segment_unmap:
    unmap_pages(s, e);
    break;
  default:
    break;
  }
}

void undo_event(allocator_state& s, const memory_event& e, bool has_requested) {
  switch (e.action) {
  case memory_action::alloc:
    release(s, e);
    break;
  case memory_action::free_requested:
    set_state(s, e, block_state::active_allocated);
    break;
  case memory_action::free_completed:
    allocate(s, e,
             has_requested ? block_state::active_pending_free : block_state::active_allocated);
    break;
  case memory_action::segment_alloc:
    remove_segment(s, e);
    break;
  case memory_action::segment_free:
    if (find_segment(s, e.address) == s.segments.end())
      insert_segment(s, make_segment(e));
    break;
  case memory_action::segment_map:
    unmap_pages(s, e);
    break;
  case memory_action::segment_unmap:
    map_pages(s, e);
    break;
  default:
    break;
  }
}

} // namespace tdiag::view
