// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// replay_state's fragments (replay_state.hpp): a segment of many blocks kept as map entries that
// tile its range, each after the first marked as continuing the entry before it; how a segment
// goes into the map (whole, or cut where it holds too many blocks and no other overlaps it),
// and how one is made whole again.
#include <algorithm>
#include <iterator>
#include <optional>
#include <vector>

#include "replay_state.hpp"

namespace tdiag::trace::detail {

bool replay_state::overlapped(segment_map::const_iterator it) const {
  // A segment kept as fragments is never overlapped (put cuts only a segment alone).
  if (fragment(it))
    return false;
  const auto next = std::next(it);
  return next != by_address_.end() && next->first - it->first < it->second.total_size;
}

bool replay_state::fragment(segment_map::const_iterator it) const {
  if (continues_.empty())
    return false;
  if (continues_.contains(it->first))
    return true;
  const auto next = std::next(it);
  return next != by_address_.end() && continues_.contains(next->first);
}

// `seg` back into the map: whole, or cut into fragments where it holds too many blocks (and
// always as a fragment where it continues a segment, `continued`).
void replay_state::put(segment seg, bool continued) {
  const std::size_t per =
      std::max<std::size_t>(replay_fragment_blocks.load(std::memory_order_relaxed), 1);
  const std::size_t n = seg.blocks.size();
  const auto address = seg.address;
  const auto end = end_of(seg);
  // A segment is cut only where no other overlaps it (damaged input): a find by address then
  // sees the fragments as it would see the segment.
  bool cut = n > 2 * per && seg.total_size > 0 && end != ~std::uint64_t{0} && alone(address, end);
  for (std::size_t i = 0; cut && i < n; ++i) {
    const auto& b = seg.blocks[i];
    // Fragments tile the range at block starts: only sorted blocks inside it, each starting
    // after the one before (none of size 0 gives two fragments one key), can be cut.
    cut = b.address >= address && b.address < end &&
          (i == 0 || (seg.blocks[i - 1].address + seg.blocks[i - 1].size <= b.address &&
                      seg.blocks[i - 1].address < b.address));
  }
  if (!continued && !cut) {
    // A segment over one kept as fragments (damaged input) makes that one whole again first: a
    // fragment may even start at its address.
    if (!continues_.empty())
      for (const auto b : fragmented_around(address, end))
        make_whole(b);
    insert(std::move(seg), false);
    return;
  }
  const std::size_t pieces = cut ? n / per : 1;
  const std::vector<block> blocks = std::move(seg.blocks);
  seg.blocks = {}; // what every piece shares: the segment's fields
  for (std::size_t k = 0; k < pieces; ++k) {
    const std::size_t first = k * per, last = k + 1 == pieces ? n : (k + 1) * per;
    segment piece = seg;
    piece.address = k == 0 ? seg.address : blocks[first].address;
    piece.total_size = (last == n ? end : blocks[last].address) - piece.address;
    piece.blocks.assign(blocks.begin() + static_cast<std::ptrdiff_t>(first),
                        blocks.begin() + static_cast<std::ptrdiff_t>(last));
    insert(std::move(piece), k > 0 || continued);
  }
}

void replay_state::insert(segment seg, bool continued) {
  const auto address = seg.address;
  const bool real = seg.pool != implicit_pool;
  note_touched(address);
  const auto [it, made] = by_address_.try_emplace(address, std::move(seg));
  if (!made) {
    // Where another segment starts (damaged input: they overlap): kept as it is and left out
    // of the replay from here on, as the start's are (never lost).
    inert_real_ += real ? 1 : 0;
    inert_.push_back(std::move(seg));
    lost_ = true;
    return;
  }
  index_.insert(address, it);
  real_ += real ? 1 : 0;
  if (continued)
    continues_.insert(address);
}

bool replay_state::alone(std::uint64_t address, std::uint64_t end) const {
  const auto next = by_address_.lower_bound(address);
  if (next != by_address_.end() && next->first < end)
    return false;
  if (next == by_address_.begin())
    return true;
  const auto& prev = std::prev(next)->second;
  return prev.total_size <= address - prev.address;
}

std::vector<std::uint64_t> replay_state::fragmented_around(std::uint64_t address,
                                                           std::uint64_t end) const {
  std::vector<std::uint64_t> firsts;
  // From the last entry that starts before `address` (it may reach into the range).
  auto it = by_address_.lower_bound(address);
  if (it != by_address_.begin())
    --it;
  std::optional<std::uint64_t> first; // of the segment of the entry before `it`, when known
  for (; it != by_address_.end() && it->first < end; ++it) {
    if (!continues(it->first)) {
      first = it->first;
    } else if (!first) {
      auto x = it;
      while (continues(x->first))
        --x;
      first = x->first;
    }
    if (fragment(it) && it->second.total_size > address - std::min(address, it->second.address) &&
        std::find(firsts.begin(), firsts.end(), *first) == firsts.end())
      firsts.push_back(*first);
  }
  return firsts;
}

void replay_state::make_whole(std::uint64_t address) {
  has_floor_ = false;
  // The fragments tile the segment's range, one after another in the map.
  auto it = by_address_.find(address);
  if (it == by_address_.end())
    return; // not in the map now (assert-free: fragments go back whole at put_back)
  segment whole = std::move(it->second);
  std::size_t real = 0;
  for (bool first = true;; first = false) {
    if (!first) {
      whole.total_size += it->second.total_size;
      whole.blocks.insert(whole.blocks.end(), it->second.blocks.begin(), it->second.blocks.end());
    }
    real += it->second.pool != implicit_pool ? 1 : 0;
    note_touched(it->first);
    continues_.erase(it->first);
    index_.erase(it->first);
    it = by_address_.erase(it);
    if (it == by_address_.end() || !continues(it->first))
      break;
  }
  real_ = real_ - real + (whole.pool != implicit_pool ? 1 : 0);
  note_touched(address);
  index_.insert(address, by_address_.emplace(address, std::move(whole)).first);
}

} // namespace tdiag::trace::detail
