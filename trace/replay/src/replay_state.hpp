// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: one memory lane's allocator state as a replay moves it, forward or backward, with the
// effect of each event on the lane's totals. Every replay pass goes through it (the initial
// state derived from a dump, allocator_replay's keyframes, memory_series, the timeline), so the
// choice of representation is made here once. The lane's segments are kept in an ordered map by
// address, and an event is applied to a state holding only the segments it can touch (the one
// at its address; for pages mapped, those ending and starting there), by the same
// apply_memory_event / undo_memory_event, so the semantics stay in one place. A block event inside
// a whole segment the source reported (most events) is applied where that segment is, by the block
// steps those two end in once they have found it (step_in_segment): nothing is taken out and put
// back. In allocator_state's sorted vector every segment made or dropped moved every later one: a
// history keeping 200,000 implicit blocks alive took 19 s for 200,000 events, and a lane mixing a
// real segment with them kept a 99.5M-event trace's viewer loading for 73 minutes.
//
// What a map keyed by address cannot hold (damaged input) stays out of the replay: segments of
// size 0 (they share an address with another), segments of another device than the lane's, and
// a second segment at one address are kept as the start state has them, unchanged; and an event
// on a segment of size 0 or on another device's state is counted as not matching, with no
// effect. Each was kept on the state's vector before, which made such a lane quadratic: 40,000
// allocations in one segment beside a segment of size 0 took 0.96 s, 20,000 0.23 s.
//
// A segment of many blocks (an expandable segment holds a whole stream's) is kept as fragments:
// map entries that tile its range, each of up to 2 * replay_fragment_blocks blocks, each after
// the first marked as continuing the entry before it (so an expandable segment is cut in two,
// or two are joined, by one mark, however many fragments follow). A block
// inserted or dropped moved every later block of its segment's vector: 160,000 allocations in
// one segment freed oldest first took 12.8 s. An event on a block applies to its fragment, joined
// with the one beside it where the block is at its edge (a free merges with its neighbours), so
// the same apply/undo sees the same blocks; an event on the segment itself (made, freed) applies
// to all of it, joined, and pages mapped or unmapped to the fragment they change. state() and
// take() give the segments whole.
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/events.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <unordered_set>
#include <vector>

#include "key_index.hpp"

namespace tdiag::trace::detail {

/// Blocks a fragment of a large segment holds (up to twice as many before it is cut); the tests
/// set it small to replay their random histories in fragments.
inline std::atomic<std::size_t> replay_fragment_blocks{256};

/// How many blocks of `seg` start at or below `address` (its blocks sorted by address). Blocks
/// tile their segment, so the search starts where the address's offset in the segment points and
/// gallops from there: a binary search over a segment of a hundred blocks missed the cache at
/// each step, a third of a fragmented snapshot's replay.
inline std::size_t blocks_at_or_below(const segment& seg, std::uint64_t address) noexcept {
  const auto& blocks = seg.blocks;
  const auto n = blocks.size();
  const auto key = [](const block& x) { return x.address; };
  if (n < 16 || address < seg.address || address - seg.address >= seg.total_size)
    return count_at_or_below(blocks.data(), n, address, key);
  // (Only where to start: a double's rounding costs a step at most.)
  const auto guess =
      std::min(n - 1, static_cast<std::size_t>(static_cast<double>(address - seg.address) /
                                               static_cast<double>(seg.total_size) *
                                               static_cast<double>(n)));
  // [lo, hi]: where the count lies; then a search of the blocks between.
  std::size_t lo = 0, hi = 0;
  if (blocks[guess].address <= address) {
    lo = guess + 1;
    hi = lo;
    for (std::size_t step = 1; hi < n && blocks[hi].address <= address; step *= 2) {
      lo = hi + 1;
      hi = lo + step;
    }
    hi = std::min(hi, n);
  } else {
    hi = guess;
    for (std::size_t step = 1; hi > 0; step *= 2) {
      const auto at = hi > step ? hi - step : 0;
      if (blocks[at].address <= address) {
        lo = at + 1;
        break;
      }
      hi = at;
    }
  }
  return lo + count_at_or_below(blocks.data() + lo, hi - lo, address, key);
}

/// The block of `seg` that holds `address`, or null (its blocks sorted by address).
inline const block* block_at(const segment& seg, std::uint64_t address) noexcept {
  const auto n = blocks_at_or_below(seg, address);
  if (n == 0)
    return nullptr;
  const auto& found = seg.blocks[n - 1];
  return address - found.address < found.size ? &found : nullptr;
}

/// The index of the block of `seg` that holds `address` (block_at's), or the block count.
inline std::size_t block_index(const segment& seg, std::uint64_t address) noexcept {
  const auto* found = block_at(seg, address);
  return found == nullptr ? seg.blocks.size() : static_cast<std::size_t>(found - seg.blocks.data());
}

/// block_index(seg, address), looked for at `hint` and beside it first (a block event's block
/// after the event is at most one away from where it was before), else searched.
inline std::size_t block_index_near(const segment& seg, std::uint64_t address,
                                    std::size_t hint) noexcept {
  const auto& blocks = seg.blocks;
  const auto n = blocks.size();
  for (auto i = hint > 0 ? hint - 1 : 0; i < n && i <= hint + 1; ++i)
    if (blocks[i].address <= address && (i + 1 == n || blocks[i + 1].address > address))
      return address - blocks[i].address < blocks[i].size ? i : n;
  return block_index(seg, address);
}

/// Where `seg` ends: 2^64 - 1 for one that would end past it (damaged input).
inline std::uint64_t end_of(const segment& seg) noexcept {
  return seg.total_size > ~seg.address ? ~std::uint64_t{0} : seg.address + seg.total_size;
}

/// Allocated, requested and reserved bytes (saturated sums).
struct replay_totals {
  std::int64_t allocated = 0, requested = 0, reserved = 0;
};

/// apply_memory_event / undo_memory_event on `part`, which holds only the segments around the
/// event; `real_segments` says whether the whole lane holds a segment the source reported (an
/// alloc outside every segment is then a mismatch).
bool apply_to_part(allocator_state& part, const memory_event& e, bool real_segments);
bool undo_on_part(allocator_state& part, const memory_event& e, bool two_step_frees,
                  bool real_segments);

/// The same for a block event (alloc, free_requested, free_completed) on `seg`, a segment the
/// source reported that holds its address: what they do once they have found it. `at`:
/// block_index(seg, e.address).
bool step_in_segment(segment& seg, std::size_t at, const memory_event& e, bool backward,
                     bool two_step_frees);

/// The segment (with no blocks yet) that a segment_alloc event `e` makes, its fields as the
/// event gives them.
[[nodiscard]] segment made_segment(const memory_event& e);

/// The totals of `device` in `s`.
[[nodiscard]] replay_totals totals_of(const allocator_state& s, std::int32_t device);

class replay_state {
public:
  /// Starts from `start` (the segments of `device`) to replay events of its lane.
  replay_state(allocator_state start, std::int32_t device);
  /// A copy replays on its own (and a move is a copy: the floor entry below stays with one map).
  replay_state(const replay_state& other);
  replay_state& operator=(const replay_state&) = delete;

  /// apply_memory_event (forward) or undo_memory_event (backward, with `two_step_frees`);
  /// returns whether the event matched, as they do. `effect`, when given, receives the change
  /// of the lane's totals.
  bool step(const memory_event& e, bool backward, bool two_step_frees,
            replay_totals* effect = nullptr);

  /// Segments in the state now.
  [[nodiscard]] std::size_t segment_count() const noexcept;
  /// Map entries that continue a segment kept as fragments (0 when every segment is whole).
  [[nodiscard]] std::size_t fragment_count() const noexcept { return continues_.size(); }
  /// The state now (its time: the last forward event's, else the start's).
  [[nodiscard]] allocator_state state() const;
  /// The same, moved out.
  [[nodiscard]] allocator_state take() &&;

  /// From now on each step lists the addresses of the segments it took out of the map
  /// and put back (see touched()).
  void track_touched() noexcept { track_ = true; }
  /// The addresses of the segments the steps since the last clear_touched() took out of the map
  /// or put in it (with repeats): every segment they changed, made or dropped is among them.
  /// Once the list would outgrow the state it is dropped and all_touched() says so.
  [[nodiscard]] std::span<const std::uint64_t> touched() const noexcept { return touched_; }
  [[nodiscard]] bool all_touched() const noexcept { return all_touched_; }
  void clear_touched() noexcept {
    touched_.clear();
    all_touched_ = false;
  }
  /// The segment that starts at `address` now, or null; for a segment kept as
  /// fragments, the fragment that starts there (touched() lists fragments likewise).
  [[nodiscard]] const segment* segment_at(std::uint64_t address) const;

private:
  using segment_map = std::map<std::uint64_t, segment>;
  /// The map's entry that holds `address` (the last one starting at or below it, if it holds
  /// it), or end(); an entry the event at hand already took out counts as gone.
  segment_map::iterator find_entry(std::uint64_t address);
  /// Whether a block event at an address entry `it` holds is stepped in place (step_in_place).
  [[nodiscard]] bool in_place(segment_map::iterator it) const;
  bool step_in_place(segment_map::iterator it, const memory_event& e, bool backward,
                     bool two_step_frees, replay_totals* effect);
  /// What an event does to a segment's pages, as replayed: map_pages (grow) or unmap_pages.
  enum class page_change : std::uint8_t { none, grow, shrink };
  static page_change page_change_of(const memory_event& e, bool backward) noexcept {
    const auto maps = backward ? memory_action::segment_unmap : memory_action::segment_map;
    const auto unmaps = backward ? memory_action::segment_map : memory_action::segment_unmap;
    return e.action == maps     ? page_change::grow
           : e.action == unmaps ? page_change::shrink
                                : page_change::none;
  }
  /// Moves what event `e` can touch of entry `it` (none: end()) into part_: the segment, or
  /// the fragments of one as the header says.
  void gather(segment_map::iterator it, const memory_event& e, page_change pages);
  /// Whether pages unmapped from [e.address, end) in fragment `it` (of a segment kept as
  /// fragments) are refused, where unmap_pages on that fragment alone would not see it: the
  /// segment's rules are its whole range's, not the fragment's.
  [[nodiscard]] bool unmap_refused(segment_map::iterator it, const memory_event& e,
                                   std::uint64_t end) const;
  /// Whether pages unmapped at [e.address, end) may be all of entry `it`'s segment: from its
  /// first fragment's start, over all of that fragment, and not inside one free block (then
  /// unmap_pages drops the segment where they cover it, and refuses them otherwise).
  [[nodiscard]] bool may_unmap_all(segment_map::iterator it, const memory_event& e,
                                   std::uint64_t end) const;
  /// The fragments of one segment from `lo` to `hi` (exclusive), joined into part_.
  void join(segment_map::iterator lo, segment_map::iterator hi);
  /// Puts part_'s segments back into the map after the event (the first continuing the segment
  /// the taken entries were part of, where it still starts where they did; whole segments, cut
  /// into fragments where they grew large).
  void put_back();
  /// `continued`: its first entry continues the entry before it.
  void put(segment seg, bool continued);
  /// One entry into the map (into inert_ where its key is taken: lost_).
  void insert(segment seg, bool continued);
  /// Whether the entry at `key` continues the segment of the entry before it.
  [[nodiscard]] bool continues(std::uint64_t key) const {
    return !continues_.empty() && continues_.contains(key);
  }
  /// Whether entry `it` is a fragment (of a segment kept as fragments).
  [[nodiscard]] bool fragment(segment_map::const_iterator it) const;
  /// Whether another entry starts inside entry `it`, a whole segment (damaged input).
  [[nodiscard]] bool overlapped(segment_map::const_iterator it) const;
  template <typename Map, typename Segment>
  void whole_segments(Map& map, allocator_state& out, Segment&& seg) const;
  void note_touched(std::uint64_t address);
  /// Whether no entry of the map holds a byte of [address, end).
  [[nodiscard]] bool alone(std::uint64_t address, std::uint64_t end) const;
  /// The segments kept as fragments that hold a byte of [address, end): their addresses.
  [[nodiscard]] std::vector<std::uint64_t> fragmented_around(std::uint64_t address,
                                                             std::uint64_t end) const;
  /// Joins the fragments of the segment at `address` into one entry.
  void make_whole(std::uint64_t address);

  /// `s` with `inert` among its segments, in (device, address) order.
  static void with_inert(allocator_state& s, std::vector<segment> inert);

  std::int32_t device_;
  std::int64_t time_ = 0;                  // the last forward event's, else the start's
  segment_map by_address_;                 // the segments
  key_index<segment_map::iterator> index_; // by_address_'s keys, searched (key_index.hpp)
  std::size_t real_ = 0;                   // segments the source reported (not implicit) in the map
  allocator_state part_;                   // the segments the event at hand can touch
  // has_floor_: the entry the last search found (the last key at or below its
  // address) and the next key: the answer for every address in [floor_->first, floor_end_)
  // while the map keeps its keys (a step that takes entries out forgets it; a copy starts
  // without).
  segment_map::iterator floor_;
  std::uint64_t floor_end_ = 0;
  bool has_floor_ = false;
  bool track_ = false, all_touched_ = false;
  std::vector<std::uint64_t> touched_;
  // The keys of the entries that continue the segment of the entry before them (every fragment
  // but a segment's first).
  std::unordered_set<std::uint64_t> continues_;
  std::vector<segment_map::iterator> taken_; // the entries the event at hand took out
  std::size_t real_out_ = 0;                 // how many of them the source reported
  std::uint64_t taken_size_ = 0;             // the size of the one whole segment taken
  // What the taken entries were part of: the first continued a segment (pre_), at first_key_;
  // the entry after the last continues it (after_, its key).
  bool pre_ = false;
  std::uint64_t first_key_ = 0;
  std::optional<std::uint64_t> after_;
  bool lost_ = false;          // put_back moved a segment to inert_
  std::vector<segment> inert_; // the start's segments left out of the replay (above)
  std::size_t inert_real_ = 0; // how many of them are the lane device's and reported
};
} // namespace tdiag::trace::detail
