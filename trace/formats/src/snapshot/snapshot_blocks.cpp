// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A segment's block dict kept as a 32-byte record (snap_stream::block_record) instead of a dict
// (a container and its items on the heap): fragmented snapshots list more blocks than trace
// entries, and every block waits until the importer reads the segments at the end. The record
// keeps every key and value the dict had, so it reads back as that dict wherever it is met.
#include <tensordiag/trace/allocator_state.hpp>

#include <algorithm>
#include <limits>
#include <string_view>

#include "snapshot_fields.hpp"
#include "snapshot_machine.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {
namespace {

using field = snap_stream::block_layout::field;
constexpr int no_layout = -1;
/// Key sets remembered (usable or not): a file whose dicts each have keys of their own (strings
/// not memoized) keeps its dicts as dicts after these.
constexpr std::size_t max_layouts = 64;

constexpr unsigned bit(field f) noexcept {
  return 1u << static_cast<unsigned>(f);
}

bool field_named(std::string_view k, field& f) noexcept {
  if (k == "address")
    f = field::address;
  else if (k == "size")
    f = field::size;
  else if (k == "requested_size")
    f = field::requested_size;
  else if (k == "state")
    f = field::state;
  else if (k == "frames")
    f = field::frames;
  else
    return false;
  return true;
}

} // namespace

// The layout of a dict's keys (items alternate keys and values), learnt once per key set.
int snap_stream::layout_of(std::span<const std::uint64_t> items) {
  const auto n = items.size() / 2;
  const auto same = [&](const block_layout& l) {
    if (l.count != n)
      return false;
    for (std::size_t i = 0; i < n; ++i)
      if (l.keys[i] != items[2 * i])
        return false;
    return true;
  };
  if (!layouts_.empty() && same(layouts_[last_layout_]))
    return last_layout_;
  for (std::size_t k = 0; k < layouts_.size(); ++k)
    if (same(layouts_[k])) {
      last_layout_ = static_cast<std::uint16_t>(k);
      return static_cast<int>(k);
    }
  if (layouts_.size() >= max_layouts)
    return no_layout;
  block_layout l;
  l.count = static_cast<std::uint8_t>(n);
  unsigned seen = 0;
  l.usable = true;
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = items[2 * i];
    l.keys[i] = k;
    if (!l.usable)
      continue;
    if (tag_of(k) != t_box || boxes_[payload_of(k)].kind != pickle_kind::string ||
        !field_named(box_text(k), l.fields[i]) || (seen & bit(l.fields[i])) != 0)
      l.usable = false; // another key, or one twice
    else
      seen |= bit(l.fields[i]);
  }
  constexpr unsigned needed = bit(field::size) | bit(field::state);
  l.usable = l.usable && (seen & needed) == needed;
  layouts_.push_back(l);
  last_layout_ = static_cast<std::uint16_t>(layouts_.size() - 1);
  return last_layout_;
}

std::uint64_t snap_stream::compact_block(std::span<const std::uint64_t> items,
                                         std::uint64_t offset) {
  const auto n = items.size() / 2;
  if (n < 2 || n > block_layout::max_keys || items.size() % 2 != 0 || tag_of(items[0]) != t_box ||
      blocks_.size() >= (std::uint64_t{1} << 32) || offset > block_record::max_offset)
    return 0;
  const auto index = layout_of(items);
  if (index == no_layout || !layouts_[static_cast<std::size_t>(index)].usable)
    return 0;
  const auto& l = layouts_[static_cast<std::size_t>(index)];
  block_record b;
  std::uint64_t requested = 0, frames = 0;
  std::uint8_t state = 0, present = 0, slot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = items[2 * i + 1];
    switch (l.fields[i]) {
    case field::address:
    case field::size:
    case field::requested_size: {
      if (tag_of(v) != t_int)
        return 0; // a wide int, or another kind: the dict says what it is
      const auto u = static_cast<std::uint64_t>(inline_int(v));
      if (l.fields[i] == field::address) {
        b.address = u;
        present |= has_address;
      } else if (l.fields[i] == field::size) {
        b.size = u;
      } else {
        requested = u;
        present |= has_requested;
      }
      break;
    }
    case field::state: {
      if (tag_of(v) != t_box || payload_of(v) > 0xffffffffu)
        return 0;
      auto* hit = &states_[0];
      for (auto& s : states_)
        if (s.first == v)
          hit = &s;
      if (hit->first != v) {
        const auto parsed = parse_block_state(box_text(v));
        if (!parsed)
          return 0; // not a str, or no block state: the importer names it
        std::copy_backward(states_.begin(), states_.end() - 1, states_.end());
        states_[0] = {v, static_cast<std::uint8_t>(*parsed)};
        hit = &states_[0];
      }
      state = hit->second;
      const auto text = static_cast<std::uint32_t>(payload_of(v));
      const auto at = std::find(state_boxes_.begin(), state_boxes_.end(), text);
      if (at == state_boxes_.end() && state_boxes_.size() > 0xff)
        return 0; // a str of its own for each block's state: they stay dicts
      slot = static_cast<std::uint8_t>(at - state_boxes_.begin());
      if (at == state_boxes_.end())
        state_boxes_.push_back(text);
      break;
    }
    case field::frames:
      frames = v;
      present |= has_frames;
      break;
    }
  }
  // A requested size above the size, or far below it (both damaged), is read from the dict.
  if ((present & has_requested) != 0 &&
      (requested > b.size || b.size - requested > std::numeric_limits<std::uint32_t>::max()))
    return 0;
  b.unrequested =
      (present & has_requested) != 0 ? static_cast<std::uint32_t>(b.size - requested) : 0;
  if (tag_of(frames) == t_container) {
    // An empty traceback (every inactive block has one of its own) held by this dict only: a
    // handle that reads as an empty list, in the memo too, instead of a container.
    const auto list = payload_of(frames);
    const auto& c = containers_[list];
    if (c.kind == pickle_kind::list && !c.converted && c.refs == 1 && c.run_count == 0 &&
        c.items.empty() && c.cached == none32) {
      const auto empty = make(t_empty, 0);
      if (c.memo != none32 && memo_.get(c.memo) == frames)
        (void)memo_.set(c.memo, empty);
      release(list);
      frames = empty;
    }
  }
  if (payload_of(frames) > block_record::max_frames_payload)
    return 0;
  b.frames_handle = static_cast<std::uint32_t>(tag_of(frames)) << 28 |
                    static_cast<std::uint32_t>(payload_of(frames));
  b.set(offset, static_cast<std::uint8_t>(index), state, present, slot);
  blocks_.push_back(b);
  return make(t_block, blocks_.size() - 1);
}

// The record becomes the dict it was (keys and values in order, at its offset), held as shared
// (the record's handle stays wherever it is: in a list, the memo, on the stack), and every read
// of the handle goes to the dict from now on.
snap_stream::container& snap_machine::promote(std::uint64_t block) {
  auto& b = s.blocks_[payload_of(block)];
  if (b.layout() == snap_stream::promoted)
    return s.containers_[b.address];
  std::uint32_t index;
  if (!s.free_.empty()) {
    index = s.free_.back();
    s.free_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(s.containers_.size());
    s.containers_.emplace_back();
  }
  auto& c = s.containers_[index];
  c.kind = pickle_kind::dict;
  c.offset = b.offset();
  c.refs = 2;
  const auto& l = s.layouts_[b.layout()];
  for (std::size_t i = 0; i < l.count; ++i) {
    c.items.push_back(l.keys[i]);
    c.items.push_back(s.block_value(b, i));
  }
  b.set_layout(snap_stream::promoted);
  b.address = index;
  return c;
}

// Value i of a block record's dict, as the dict held it.
std::uint64_t snap_stream::block_value(const block_record& b, std::size_t i) const noexcept {
  switch (layouts_[b.layout()].fields[i]) {
  case field::address:
    return make(t_int, b.address);
  case field::size:
    return make(t_int, b.size);
  case field::requested_size:
    return make(t_int, b.requested_size());
  case field::state:
    return make(t_box, state_boxes_[b.state_slot()]);
  case field::frames:
    return b.frames();
  }
  return 0;
}

// The first block or segment with a traceback holds its list alone (torch shares one list
// among all the blocks, segments and entries with that traceback; the others fetch it from the
// memo, which then gives the stack id).
void snap_stream::own_traceback(std::uint64_t& frames, std::uint64_t offset) {
  if (sink_ == nullptr || tag_of(frames) != t_container)
    return;
  const auto& c = containers_[payload_of(frames)];
  // (An empty list of its own, an inactive block's, becomes a t_empty handle: compact_block.)
  if (c.kind != pickle_kind::list || c.converted || c.refs != 1 ||
      (c.items.empty() && c.run_count == 0))
    return;
  if (const auto id = sink_->own_traceback(snap_value(this, frames, offset)))
    frames = make(t_stack, *id);
}

void snap_stream::own_dict_traceback(std::vector<std::uint64_t>& items, std::uint64_t offset) {
  // A segment's (a dict with "blocks") or a block's (with "state"); of a key given twice, the
  // last value is the dict's. What else holds a traceback is not read by the importer, which
  // interns none of it.
  std::size_t frames = items.size();
  bool read = false;
  for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
    const auto key = tag_of(items[i]) == t_box ? boxes_[payload_of(items[i])].dict_key : 0;
    if (key == frames_key)
      frames = i + 1;
    else if (key == owner_key)
      read = true;
  }
  if (read && frames < items.size())
    own_traceback(items[frames], offset);
}

} // namespace tdiag::trace::detail
