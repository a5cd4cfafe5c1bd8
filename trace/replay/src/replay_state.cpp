// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "replay_state.hpp"

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <unordered_set>

namespace tdiag::trace::detail {
namespace {

// The allocated and requested bytes of block `i` of `seg` (none: the block count), where it is
// an allocated one.
replay_totals allocated_at(const segment& seg, std::size_t i) {
  if (i >= seg.blocks.size() || seg.blocks[i].state != block_state::active_allocated)
    return {};
  const auto& b = seg.blocks[i];
  return {signed_size(b.size), signed_size(b.requested_size), 0};
}

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

// Whether [address, end) lies inside one free block of `seg` (pages PyTorch may unmap).
bool in_free_block(const segment& seg, std::uint64_t address, std::uint64_t end) {
  const auto* b = block_at(seg, address);
  return b != nullptr && b->state == block_state::inactive && end - b->address <= b->size;
}

bool is_block_action(memory_action a) noexcept {
  return a == memory_action::alloc || a == memory_action::free_requested ||
         a == memory_action::free_completed;
}

bool is_segment_action(memory_action a) noexcept {
  return a == memory_action::segment_alloc || a == memory_action::segment_free ||
         a == memory_action::segment_map || a == memory_action::segment_unmap;
}

// Whether the event is one the map cannot replay (see replay_state.hpp): a segment event of no
// bytes, or an event on the allocator state of another device than the lane's.
bool left_out(const memory_event& e, std::int32_t device) noexcept {
  const bool changes_state =
      e.action == memory_action::alloc || e.action == memory_action::free_requested ||
      e.action == memory_action::free_completed || is_segment_action(e.action);
  return changes_state && (e.device != device || (is_segment_action(e.action) && e.size == 0));
}

bool makes_segment(const memory_event& e, bool backward) noexcept {
  return e.action == (backward ? memory_action::segment_free : memory_action::segment_alloc);
}

} // namespace

replay_totals totals_of(const allocator_state& s, std::int32_t device) {
  return window(s, device, 0, ~std::uint64_t{0});
}

replay_state::replay_state(allocator_state start, std::int32_t device) : device_(device) {
  time_ = start.time;
  std::unordered_set<std::uint64_t> starts; // (the map's keys include fragments')
  for (auto& s : start.segments) {
    if (s.device == device && s.total_size > 0 && starts.insert(s.address).second) {
      put(std::move(s), false); // cut into fragments where large
      continue;
    }
    inert_real_ += s.device == device && s.pool != implicit_pool ? 1 : 0;
    inert_.push_back(std::move(s));
  }
  touched_.clear(); // nothing is tracked yet
}

// The copy's map is its own: the floor entry found in the original's is not in it.
replay_state::replay_state(const replay_state& other)
    : device_(other.device_), time_(other.time_), by_address_(other.by_address_),
      real_(other.real_), part_(other.part_), continues_(other.continues_), inert_(other.inert_),
      inert_real_(other.inert_real_) {
  for (auto it = by_address_.begin(); it != by_address_.end(); ++it)
    index_.insert(it->first, it);
}

replay_state::segment_map::iterator replay_state::find_entry(std::uint64_t address) {
  // The entry the last search found answers again for the addresses up to the next key, while
  // the map holds the same keys: a history often works in one segment for a while.
  const bool again = has_floor_ && floor_->first <= address && address < floor_end_;
  if (!again) {
    const auto floor = index_.floor(address);
    if (!floor.found)
      return by_address_.end();
    floor_ = floor.at;
    // Past the last key the entry answers for every address; floor_end_ = ~0 leaves out ~0.
    floor_end_ = floor.next;
    has_floor_ = true;
  }
  // Already taken out (its segment is in part_): as if it were no longer in the map.
  if (std::find(taken_.begin(), taken_.end(), floor_) != taken_.end() ||
      address - floor_->second.address >= floor_->second.total_size)
    return by_address_.end();
  return floor_;
}

void replay_state::gather(segment_map::iterator it, const memory_event& e, page_change pages) {
  if (it == by_address_.end())
    return;
  const auto of_segment = [&](segment_map::iterator x) {
    return x != by_address_.end() && continues(x->first);
  };
  auto lo = it, hi = std::next(it);
  const bool whole = !continues(it->first) && !of_segment(hi);
  // Pages unmapped from all of a segment (perhaps: unmap_refused leaves it to unmap_pages).
  const bool unmaps_all = pages == page_change::shrink && may_unmap_all(it, e, e.address + e.size);
  if (whole || pages == page_change::grow || (pages == page_change::shrink && !unmaps_all)) {
    // The segment; or the fragment that pages change: the last of the segment they grow (it
    // ends where they start; an expandable segment grows while it holds blocks, and joining it
    // whole for each mapping made that quadratic), the first of the one they join (it starts
    // where they end), or the one whose free pages are unmapped (cut, shrunk or gone: the
    // fragments after it then start a segment of their own, put_back).
  } else if (is_segment_action(e.action)) {
    // All of it, from its first fragment (fragments are never interleaved with another entry,
    // as none is cut where another segment overlaps it).
    while (continues(lo->first))
      --lo;
    while (of_segment(hi))
      ++hi;
  } else {
    // The block the event names, and whether a neighbour it may merge with is in another
    // fragment.
    const auto& blocks = it->second.blocks;
    const auto after = std::partition_point(blocks.begin(), blocks.end(),
                                            [&](const block& b) { return b.address <= e.address; });
    if (after != blocks.begin()) {
      if (after - 1 == blocks.begin() && continues(it->first))
        lo = std::prev(it);
      if (after == blocks.end() && of_segment(hi))
        ++hi;
    }
  }
  if (taken_.empty()) {
    pre_ = continues(lo->first);
    first_key_ = lo->first;
  }
  after_ = of_segment(hi) ? std::optional(hi->first) : std::nullopt;
  join(lo, hi);
}

bool replay_state::unmap_refused(segment_map::iterator it, const memory_event& e,
                                 std::uint64_t end) const {
  const auto& seg = it->second;
  const auto seg_end = end_of(seg);
  const auto next = std::next(it);
  const bool first = !continues(it->first);
  const bool last = next == by_address_.end() || !continues(next->first);
  const bool all_of_it = e.address == it->first && e.size >= seg.total_size;
  if (first && last) {
    // A whole segment: unmap_pages decides, but on a segment that starts inside it, which the
    // event does not take out (damaged input), a cut or a moved start is refused.
    return !all_of_it && end != seg_end && next != by_address_.end() && next->first < seg_end;
  }
  if (may_unmap_all(it, e, end)) {
    // All of the segment (gather takes it whole, and it goes) or refused: its fragments'
    // sizes tell, none taken out (a refusal each time would have joined it whole).
    std::uint64_t total = 0;
    for (auto x = it; x != by_address_.end() && (x == it || continues(x->first)); ++x) {
      total += std::min(x->second.total_size, ~total);
      if (total > e.size)
        return true;
    }
    return false;
  }
  if (!seg.is_expandable && !last)
    return true; // a segment that is not expandable shrinks at its end only
  // All of a fragment after the first: unmap_pages would drop it as a whole segment; in its
  // segment it goes where it is one free block, the segment cut there.
  return !first && all_of_it && !in_free_block(seg, e.address, end);
}

bool replay_state::may_unmap_all(segment_map::iterator it, const memory_event& e,
                                 std::uint64_t end) const {
  return !continues(it->first) && e.address == it->first && e.size >= it->second.total_size &&
         !in_free_block(it->second, e.address, end);
}

void replay_state::join(segment_map::iterator lo, segment_map::iterator hi) {
  segment whole = std::move(lo->second);
  for (auto x = lo;; ++x) {
    if (x != lo) {
      whole.total_size += x->second.total_size;
      whole.blocks.insert(whole.blocks.end(), x->second.blocks.begin(), x->second.blocks.end());
    }
    real_out_ += x->second.pool != implicit_pool ? 1 : 0;
    taken_.push_back(x);
    if (std::next(x) == hi)
      break;
  }
  taken_size_ = whole.total_size;
  part_.segments.push_back(std::move(whole));
}

void replay_state::note_touched(std::uint64_t address) {
  if (!track_ || all_touched_)
    return;
  touched_.push_back(address);
  // A long run of steps between two readings costs a reading of the whole state, not a list
  // longer than it.
  if (touched_.size() > 4 * by_address_.size() + 4096) {
    all_touched_ = true;
    touched_ = {};
  }
}

void replay_state::put_back() {
  real_ -= real_out_;
  real_out_ = 0;
  // The common case: one whole segment, still at its address and small, goes back into its own
  // entry.
  if (taken_.size() == 1 && !pre_ && !after_ && part_.segments.size() == 1 &&
      part_.segments.front().address == taken_.front()->first &&
      part_.segments.front().total_size == taken_size_ &&
      part_.segments.front().blocks.size() <=
          2 * replay_fragment_blocks.load(std::memory_order_relaxed)) {
    real_ += part_.segments.front().pool != implicit_pool ? 1 : 0;
    note_touched(taken_.front()->first);
    taken_.front()->second = std::move(part_.segments.front());
    return;
  }
  // Otherwise the entries leave the map, and what part_ holds now goes in.
  has_floor_ = false;
  for (const auto it : taken_) {
    note_touched(it->first);
    continues_.erase(it->first);
    index_.erase(it->first);
    by_address_.erase(it);
  }
  taken_.clear();
  const bool any = !part_.segments.empty();
  const std::uint64_t last_end = any ? end_of(part_.segments.back()) : 0; // where the last ends
  // Until they are in, the entry that continued them would seem to continue the one before
  // them.
  if (after_)
    continues_.erase(*after_);
  lost_ = false;
  for (std::size_t k = 0; k < part_.segments.size(); ++k) {
    // The first goes on with the segment the taken entries continued where it starts where
    // they did (pages unmapped at its start leave a segment of its own).
    const bool continued = k == 0 && pre_ && part_.segments[k].address == first_key_;
    put(std::move(part_.segments[k]), continued);
  }
  if (!after_)
    return;
  auto at = by_address_.find(*after_);
  if (any && last_end == *after_ && !lost_ && at != by_address_.end() &&
      at != by_address_.begin() &&
      std::prev(at)->second.total_size == *after_ - std::prev(at)->first) {
    continues_.insert(*after_);
    // The entries that go on with the segment have its fields (pages mapped between two runs
    // made one segment of two): the first that has them tells that the rest do.
    auto x = at;
    const auto& fields = std::prev(x)->second;
    for (; x != by_address_.end() && (x->first == *after_ || continues(x->first)); ++x) {
      auto& f = x->second;
      if (f.stream == fields.stream && f.pool == fields.pool && f.type == fields.type &&
          f.is_expandable == fields.is_expandable)
        break;
      f.stream = fields.stream;
      f.pool = fields.pool;
      f.type = fields.type;
      f.is_expandable = fields.is_expandable;
      note_touched(x->first);
    }
  } else if (at != by_address_.end()) {
    // Pages unmapped before the entry that continued them: it starts a segment of its own (a
    // run that no longer starts where its segment was mapped has no stack, as unmap_pages).
    at->second.stack = no_stack;
    note_touched(*after_);
  }
}

bool replay_state::step(const memory_event& e, bool backward, bool two_step_frees,
                        replay_totals* effect) {
  if (!backward)
    time_ = e.time;
  // An event that changes nothing: no effect, not matched.
  const auto refuse = [&] {
    if (effect != nullptr)
      *effect = {};
    return false;
  };
  if (left_out(e, device_))
    return refuse();
  // (Before any find_entry: the entry the last event took out is in the map again.)
  taken_.clear();
  if (is_block_action(e.action)) {
    if (const auto it = find_entry(e.address); it != by_address_.end() && in_place(it))
      return step_in_place(it, e, backward, two_step_frees, effect);
  }
  part_.segments.clear();
  real_out_ = 0;
  pre_ = false;
  after_.reset();
  // A segment made, or pages mapped, where a segment is (damaged input): add_segment and
  // map_pages refuse it with no change, told here without taking that segment out (all of its
  // fragments, each time). Segment events are of some bytes here (left_out).
  const auto pages = page_change_of(e, backward);
  if ((pages == page_change::grow || makes_segment(e, backward)) &&
      find_entry(e.address) != by_address_.end())
    return refuse();
  // A segment freed where none starts (a fragment's start, or inside one): remove_segment
  // refuses it, told without taking all of that segment out.
  if (e.action == (backward ? memory_action::segment_alloc : memory_action::segment_free))
    if (const auto it = find_entry(e.address);
        it != by_address_.end() && (it->first != e.address || continues(it->first)))
      return refuse();
  std::uint64_t end = 0; // of the pages mapped or unmapped
  if (pages != page_change::none) {
    if (e.size > ~e.address)
      return refuse(); // past 2^64: map_pages and unmap_pages refuse them
    end = e.address + e.size;
    if (pages == page_change::grow) {
      // Over a segment that starts inside them (damaged input), refused likewise.
      if (const auto next = by_address_.upper_bound(e.address);
          next != by_address_.end() && next->first < end)
        return refuse();
    } else if (const auto it = find_entry(e.address);
               it != by_address_.end() && unmap_refused(it, e, end)) {
      return refuse();
    }
  }
  // Pages mapped grow the segment that holds the byte before them, and join the one that starts
  // where they end, where neither is overlapped by another (map_pages: it sees all of them).
  auto next = by_address_.end();
  if (pages == page_change::grow) {
    const auto prev = e.address > 0 ? find_entry(e.address - 1) : by_address_.end();
    next = by_address_.find(end);
    if (next != by_address_.end() &&
        (continues(next->first) || overlapped(next) ||
         (prev != by_address_.end() && prev->second.pool != implicit_pool &&
          prev->second.total_size == e.address - prev->first && overlapped(prev))))
      next = by_address_.end();
    gather(prev, e, pages);
  }
  gather(find_entry(e.address), e, pages);
  if (next != by_address_.end())
    gather(next, e, pages);
  if (part_.segments.size() == 2 && part_.segments[1].address < part_.segments[0].address)
    std::swap(part_.segments[0], part_.segments[1]);
  // Only part_ changes: a block event's effect is within the blocks around its address; a
  // segment event's may be anywhere in the segments it took (a segment freed that had grown past
  // the event's size), which are few.
  const bool segment_event = is_segment_action(e.action);
  const std::uint64_t lo = segment_event || e.address == 0 ? 0 : e.address - 1;
  const std::uint64_t span = std::max<std::uint64_t>(e.size, 1);
  const std::uint64_t hi =
      segment_event || e.address > ~span ? ~std::uint64_t{0} : e.address + span;
  const auto before = effect != nullptr ? window(part_, device_, lo, hi) : replay_totals{};
  const bool real = real_ + inert_real_ > 0;
  const bool matched =
      backward ? undo_on_part(part_, e, two_step_frees, real) : apply_to_part(part_, e, real);
  if (effect != nullptr) {
    // Window totals are saturated sums (>= 0), so their difference fits.
    const auto after = window(part_, device_, lo, hi);
    *effect = {after.allocated - before.allocated, after.requested - before.requested,
               after.reserved - before.reserved};
  }
  put_back();
  return matched;
}

// A block event inside a whole segment the source reported changes only its blocks, and leaves
// it where it is (never dropped, moved or cut; put_back's common case): the block steps apply to
// the map's own entry, nothing taken out or put back. Most events of a history are these.
bool replay_state::in_place(segment_map::iterator it) const {
  const auto& seg = it->second;
  return seg.pool != implicit_pool && !fragment(it) &&
         seg.blocks.size() + 2 <= 2 * replay_fragment_blocks.load(std::memory_order_relaxed);
}

bool replay_state::step_in_place(segment_map::iterator it, const memory_event& e, bool backward,
                                 bool two_step_frees, replay_totals* effect) {
  auto& seg = it->second;
  // Of the blocks a block event touches only the one at its address can be allocated before or
  // after it (a carve splits off and a release merges inactive blocks), and the segment's
  // reserved bytes stay: its effect is that block's change.
  // One search: the block before the event; after it, that block or one beside it.
  const auto at = block_index(seg, e.address);
  const auto before = effect != nullptr ? allocated_at(seg, at) : replay_totals{};
  const bool matched = step_in_segment(seg, at, e, backward, two_step_frees);
  if (effect != nullptr) {
    const auto after = allocated_at(seg, block_index_near(seg, e.address, at));
    *effect = {after.allocated - before.allocated, after.requested - before.requested, 0};
  }
  note_touched(it->first);
  return matched;
}

std::size_t replay_state::segment_count() const noexcept {
  return by_address_.size() - continues_.size() + inert_.size();
}

const segment* replay_state::segment_at(std::uint64_t address) const {
  const auto it = by_address_.find(address);
  return it == by_address_.end() ? nullptr : &it->second;
}

// The map's segments in address order, a segment kept as fragments joined again: `seg` gives an
// entry's segment (copied or moved).
template <typename Map, typename Segment>
void replay_state::whole_segments(Map& map, allocator_state& out, Segment&& seg) const {
  out.segments.reserve(map.size() - continues_.size());
  for (auto it = map.begin(); it != map.end();) {
    out.segments.push_back(seg(it->second));
    for (++it; it != map.end() && continues(it->first); ++it) {
      auto& whole = out.segments.back();
      whole.total_size += it->second.total_size;
      whole.blocks.insert(whole.blocks.end(), it->second.blocks.begin(), it->second.blocks.end());
    }
  }
}

allocator_state replay_state::state() const {
  allocator_state s;
  s.time = time_;
  whole_segments(by_address_, s, [](const segment& seg) { return seg; });
  with_inert(s, inert_);
  return s;
}

allocator_state replay_state::take() && {
  allocator_state s;
  s.time = time_;
  whole_segments(by_address_, s, [](segment& seg) { return std::move(seg); });
  with_inert(s, std::move(inert_));
  return s;
}

void replay_state::with_inert(allocator_state& s, std::vector<segment> inert) {
  if (inert.empty())
    return;
  std::ranges::move(inert, std::back_inserter(s.segments));
  std::ranges::stable_sort(s.segments, [](const segment& a, const segment& b) {
    return a.device != b.device ? a.device < b.device : a.address < b.address;
  });
}

} // namespace tdiag::trace::detail
