// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>

#include <algorithm>
#include <array>
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
  seg.blocks.push_back({e.address, e.size, 0, block_state::inactive, no_stack});
  auto it = std::lower_bound(
      s.segments.begin(), s.segments.end(), seg, [](const segment& a, const segment& b) {
        return a.device != b.device ? a.device < b.device : a.address < b.address;
      });
  return *s.segments.insert(it, std::move(seg));
}

// Index of the block containing `address`, or blocks.size().
std::size_t block_index(const segment& seg, std::uint64_t address) {
  auto it = std::partition_point(seg.blocks.begin(), seg.blocks.end(),
                                 [&](const block& b) { return b.address <= address; });
  if (it == seg.blocks.begin())
    return seg.blocks.size();
  --it;
  return address - it->address < it->size ? static_cast<std::size_t>(it - seg.blocks.begin())
                                          : seg.blocks.size();
}

// Marks the block of a request of `size` bytes at `address` with `state`; the request must lie
// inside one inactive block.
bool carve(segment& seg, std::uint64_t address, std::uint64_t size, block_state state,
           stack_id stack) {
  const auto i = block_index(seg, address);
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

// The block starting at `address` in state `from`: set it to `to` (or release it).
bool transition(allocator_state& s, const memory_event& e, block_state from, block_state to) {
  auto* seg = find_segment(s, e.device, e.address);
  if (seg == nullptr)
    return false;
  const auto i = block_index(*seg, e.address);
  if (i == seg->blocks.size() || seg->blocks[i].address != e.address)
    return false;
  const bool matched = seg->blocks[i].state == from;
  if (to == block_state::inactive) {
    release(*seg, i);
    drop_if_idle_implicit(s, seg);
  } else {
    seg->blocks[i].state = to;
  }
  return matched;
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
    return carve(*seg, e.address, e.size, state, stack);
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

// Expandable segments: pages mapped at the end of a segment grow it.
bool map_pages(allocator_state& s, const memory_event& e) {
  if (find_segment(s, e.device, e.address) != nullptr)
    return false;
  if (e.address > 0) {
    if (auto* prev = find_segment(s, e.device, e.address - 1);
        prev != nullptr && prev->address + prev->total_size == e.address) {
      prev->total_size += e.size;
      prev->blocks.push_back({e.address, e.size, 0, block_state::inactive, no_stack});
      release(*prev, prev->blocks.size() - 1);
      return true;
    }
  }
  insert_segment(s, e).is_expandable = true; // not segments.back(): the order is by address
  return true;
}

bool unmap_pages(allocator_state& s, const memory_event& e) {
  auto* seg = find_segment(s, e.device, e.address);
  if (seg == nullptr)
    return false;
  if (seg->address == e.address && seg->total_size <= e.size)
    return remove_segment(s, e);
  if (e.address + e.size != seg->address + seg->total_size || seg->blocks.empty())
    return false;
  auto& last = seg->blocks.back();
  if (last.state != block_state::inactive || last.size < e.size)
    return false;
  last.size -= e.size;
  seg->total_size -= e.size;
  if (last.size == 0)
    seg->blocks.pop_back();
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
    // A plain free (no free_requested first) is fine too.
    auto* seg = find_segment(s, e.device, e.address);
    if (seg == nullptr)
      return false;
    const auto i = block_index(*seg, e.address);
    if (i == seg->blocks.size() || seg->blocks[i].address != e.address ||
        seg->blocks[i].state == block_state::inactive)
      return false;
    release(*seg, i);
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

} // namespace detail

void normalize(allocator_state& s, bool strict) {
  s.sort();
  for (auto& seg : s.segments) {
    std::vector<block> merged;
    for (auto b : seg.blocks) {
      if (!strict) {
        b.requested_size = 0;
        b.stack = no_stack;
      }
      if (b.state == block_state::inactive) {
        b.requested_size = 0;
        b.stack = no_stack;
        if (!merged.empty() && merged.back().state == block_state::inactive &&
            merged.back().address + merged.back().size == b.address) {
          merged.back().size += b.size;
          continue;
        }
      }
      merged.push_back(b);
    }
    seg.blocks = std::move(merged);
    if (!strict)
      seg.stack = no_stack;
  }
}

namespace {

std::size_t state_bytes(const allocator_state& s) {
  std::size_t n = sizeof(s) + s.segments.size() * sizeof(segment);
  for (const auto& seg : s.segments)
    n += seg.blocks.size() * sizeof(block);
  return n;
}

// The final state's segments of `device`. finalize() sorts them by (device, address), so a
// finalized trace takes one binary search: a replay per memory lane of a trace with 150k devices
// stays linear overall instead of scanning every segment per lane.
std::vector<segment> device_segments(const trace& t, std::int32_t device) {
  const auto& all = t.final_allocator_state->segments;
  if (t.finalized()) {
    // std::ranges::equal_range would do, but clang 14 with libstdc++ 12 rejects its subrange.
    struct by_device {
      bool operator()(const segment& s, std::int32_t d) const noexcept { return s.device < d; }
      bool operator()(std::int32_t d, const segment& s) const noexcept { return d < s.device; }
    };
    const auto [lo, hi] = std::equal_range(all.begin(), all.end(), device, by_device{});
    return {lo, hi};
  }
  std::vector<segment> out;
  for (const auto& seg : all)
    if (seg.device == device)
      out.push_back(seg);
  return out;
}

bool has_two_step_frees(std::span<const memory_event> events) {
  return std::any_of(events.begin(), events.end(), [](const memory_event& e) {
    return e.action == memory_action::free_requested;
  });
}

// The state before `events` (one device's lane): the final state with every event undone,
// newest first, or an empty one.
allocator_state derive_start(const trace& t, std::span<const memory_event> events,
                             std::int32_t device, bool two_step, std::size_t& mismatches,
                             std::size_t& final_bytes) {
  allocator_state start;
  if (t.final_allocator_state) {
    start.segments = device_segments(t, device);
    start.sort();
    final_bytes = state_bytes(start);
    detail::replay_state r(std::move(start), device);
    for (std::size_t i = events.size(); i-- > 0;)
      mismatches += r.step(events[i], true, two_step) ? 0 : 1;
    start = std::move(r).take();
  }
  start.time = events.empty() ? (t.final_allocator_state ? t.final_allocator_state->time : 0)
                              : events.front().time;
  return start;
}

} // namespace

bool has_memory_history(const trace& t, lane_id lane) noexcept {
  if (lane >= t.lanes.size() || t.lanes.at(lane).kind != lane_kind::device_memory)
    return false;
  if (!t.memory.lane(lane).empty())
    return true;
  if (!t.final_allocator_state)
    return false;
  const auto device = static_cast<std::int32_t>(t.lanes.at(lane).group);
  const auto& all = t.final_allocator_state->segments;
  if (t.finalized()) // sorted by (device, address): one search
    return std::binary_search(all.begin(), all.end(), device, [](const auto& a, const auto& b) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, segment>)
        return a.device < b;
      else
        return a < b.device;
    });
  return std::any_of(all.begin(), all.end(), [&](const segment& s) { return s.device == device; });
}

lane_id memory_lane_of(const trace& t, std::int32_t device) noexcept {
  const auto lane = t.lanes.find_memory(device);
  return lane == no_lane ? static_cast<lane_id>(t.lanes.size()) : lane;
}

allocator_state initial_allocator_state(const trace& t, lane_id lane, std::size_t* mismatches) {
  const auto events = t.memory.lane(lane);
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  std::size_t missed = 0, final_bytes = 0;
  auto start = derive_start(t, events, device, has_two_step_frees(events), missed, final_bytes);
  if (mismatches != nullptr)
    *mismatches = missed;
  return start;
}

allocator_state allocator_state_after(const trace& t, lane_id lane, std::size_t index,
                                      std::size_t* mismatches) {
  const auto events = t.memory.lane(lane).first(std::min(index, t.memory.lane(lane).size()));
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  std::size_t missed = 0;
  detail::replay_state r(initial_allocator_state(t, lane, &missed), device);
  for (const auto& e : events)
    missed += r.step(e, false, false) ? 0 : 1;
  if (mismatches != nullptr)
    *mismatches = missed;
  return std::move(r).take();
}

allocator_replay::allocator_replay(const trace& t, lane_id lane, std::size_t interval) {
  replay_options o;
  // Explicit, or about 256 keyframes at most.
  o.keyframe_interval =
      interval != 0 ? interval : std::max<std::size_t>(256, t.memory.lane(lane).size() / 256 + 1);
  build(t, lane, o);
}

allocator_replay::allocator_replay(const trace& t, lane_id lane, const replay_options& options) {
  build(t, lane, options);
}

void allocator_replay::build(const trace& t, lane_id lane, const replay_options& options) {
  events_ = t.memory.lane(lane);
  first_index_ =
      events_.empty() ? 0 : static_cast<std::size_t>(events_.data() - t.memory.all().data());
  device_ = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  two_step_ = has_two_step_frees(events_);
  std::size_t final_bytes = 0; // this device's share of the final state
  allocator_state start = derive_start(t, events_, device_, two_step_, mismatches_, final_bytes);

  detail::replay_state r(start, device_);
  const bool adaptive = options.keyframe_interval == 0;
  interval_ = options.keyframe_interval;
  const auto budget = std::max<std::size_t>(options.keyframe_budget_bytes, 1);
  if (adaptive) {
    // Sized from the larger of the first and last states, so the thinning below is rare. A
    // source without a dump (Kineto, CUPTI) has no last state: where a pass is cheap (the map
    // replay) one finds the largest, or keyframes every 64 events would copy a state of
    // 100,000 blocks thousands of times before the thinning caught up.
    std::size_t estimate = std::max(state_bytes(start), final_bytes);
    if (!t.final_allocator_state) {
      auto probe = r;
      std::size_t largest = 0;
      for (const auto& e : events_) {
        probe.step(e, false, two_step_);
        largest = std::max(largest, probe.segment_count());
      }
      // At least a block a segment.
      estimate =
          std::max(estimate, sizeof(allocator_state) + largest * (sizeof(segment) + sizeof(block)));
    }
    const std::size_t wanted =
        events_.size() / budget * estimate + events_.size() % budget * estimate / budget;
    interval_ = 64;
    while (interval_ < wanted)
      interval_ *= 2;
  }
  keyframes_.reserve(events_.size() / interval_ + 1);
  std::size_t bytes = state_bytes(start);
  max_reserved_ = start.reserved_bytes();
  keyframes_.push_back(std::move(start));
  allocator_state s;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    mismatches_ += r.step(events_[i], false, two_step_) ? 0 : 1;
    if ((i + 1) % interval_ != 0)
      continue;
    s = r.state();
    max_reserved_ = std::max(max_reserved_, s.reserved_bytes());
    keyframes_.push_back(s);
    bytes += state_bytes(s);
    // Over the budget: keep every other keyframe and double the interval.
    while (adaptive && bytes > budget && keyframes_.size() > 2) {
      std::vector<allocator_state> kept;
      bytes = 0;
      for (std::size_t k = 0; k < keyframes_.size(); k += 2) {
        bytes += state_bytes(keyframes_[k]);
        kept.push_back(std::move(keyframes_[k]));
      }
      keyframes_ = std::move(kept);
      interval_ *= 2;
    }
  }
  max_reserved_ = std::max(max_reserved_, std::move(r).take().reserved_bytes());
}

void allocator_replay::replay_forward(allocator_state& s, std::size_t from, std::size_t to) const {
  const auto events = events_.subspan(from, to - from);
  // A few events go straight onto the vector. More go through replay_state, which keeps the
  // lane's segments in a map: on the vector each segment made or dropped moves every later one
  // (a seek among 1,000,000 live blocks took minutes), and the map's set-up costs one pass.
  if (events.size() <= 64) {
    for (const auto& e : events)
      apply_memory_event(s, e);
    return;
  }
  detail::replay_state r(std::move(s), device_);
  for (const auto& e : events)
    r.step(e, false, two_step_);
  s = std::move(r).take();
}

allocator_state allocator_replay::state_at(std::size_t index) const {
  index = std::min(index, events_.size());
  const auto k = std::min(index / interval_, keyframes_.size() - 1);
  allocator_state s = keyframes_[k];
  replay_forward(s, k * interval_, index);
  return s;
}

allocator_state allocator_replay::replay_from_start(std::size_t index) const {
  index = std::min(index, events_.size());
  allocator_state s = keyframes_.front();
  for (std::size_t i = 0; i < index; ++i)
    apply_memory_event(s, events_[i]);
  return s;
}

std::size_t events_until(std::span<const memory_event> events, std::int64_t time) noexcept {
  return static_cast<std::size_t>(
      std::partition_point(events.begin(), events.end(),
                           [&](const memory_event& e) { return e.time <= time; }) -
      events.begin());
}

std::size_t allocator_replay::index_at_time(std::int64_t t) const noexcept {
  return events_until(events_, t);
}

replay_cursor::replay_cursor(const allocator_replay& replay)
    : replay_(&replay), state_(replay.initial_state()) {}

const allocator_state& replay_cursor::seek(std::size_t index) {
  index = std::min(index, replay_->size());
  const auto interval = replay_->keyframe_interval();
  // Forward and within one keyframe interval: replay from here; otherwise restart from the
  // keyframe at or before the target.
  if (index < position_ || index - position_ > interval)
    state_ = replay_->state_at(index);
  else
    replay_->replay_forward(state_, position_, index);
  position_ = index;
  return state_;
}

} // namespace tdiag::trace
