// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "snapshot_stream.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <span>

#include "pickle_opcodes.hpp"

namespace tdiag::trace::detail {
namespace {

using kind = pickle_kind;
using namespace snap;

} // namespace

// --- snap_stream ------------------------------------------------------------------------------

snap_stream::snap_stream(input_file* file, std::string_view bytes, std::string source,
                         const pickle_limits& limits, entry_sink* sink)
    : file_(file), source_(std::move(source)), limits_(limits), sink_(sink) {
  if (sink_ != nullptr)
    memo_.set_frames(
        [](const void* context, std::uint32_t stack) {
          return static_cast<const entry_sink*>(context)->stack_frames(stack);
        },
        sink_);
  if (file_ != nullptr) {
    total_ = file_->size();
  } else {
    data_ = reinterpret_cast<const std::uint8_t*>(bytes.data());
    end_ = bytes.size();
    total_ = bytes.size();
  }
}

void snap_stream::check_footprint(std::uint64_t offset, std::uint64_t machine_bytes) const {
  const std::uint64_t held = (file_ == nullptr ? total_ : buffer_.capacity()) +
                             (ahead_ != nullptr ? ahead_->bytes() : 0) + arena_.capacity() +
                             boxes_.capacity() * sizeof(box) +
                             containers_.capacity() * sizeof(container) +
                             live_items_ * sizeof(std::uint64_t) * 3 / 2 + // and slack
                             memo_.size() * sizeof(std::uint32_t) + machine_bytes +
                             (sink_ != nullptr ? sink_->held_bytes() : 0);
  if (budget_ == 0)
    budget_ = memory_budget(); // read once, when a pickle first grows this big (tens of us)
  if (held > budget_)
    check_memory_budget(source_, fmt::format("what the pickle built by byte offset {}", offset),
                        held);
}

std::span<const std::uint64_t> snap_stream::items(snap_value v) const noexcept {
  if (const auto* c = promoted_block(v.raw()))
    return c->items;
  if (tag_of(v.raw()) != t_container)
    return {};
  const auto& c = containers_[payload_of(v.raw())];
  return c.converted ? std::span<const std::uint64_t>{} : std::span<const std::uint64_t>(c.items);
}
std::string_view snap_stream::box_text(std::uint64_t handle) const noexcept {
  if (tag_of(handle) != t_box)
    return {};
  const auto& b = boxes_[payload_of(handle)];
  if (b.kind != pickle_kind::string && b.kind != pickle_kind::bytes)
    return {};
  return std::string_view(arena_.data() + b.payload, b.aux);
}

// Makes [pos, pos + n) available: the unread tail moves to the front of the buffer and the rest
// of it is filled from the file. Returns the bytes still missing (0: all there).
std::uint64_t snap_stream::refill(std::size_t n, std::size_t chunk) {
  const std::size_t have = end_ - pos_;
  if (ahead_ != nullptr) {
    // The next block, read on the other thread: the unread tail goes in front of it.
    std::size_t got = 0;
    std::uint8_t* block = nullptr;
    if (have <= read_ahead::head && n <= have + chunk)
      block = ahead_->take(base_ + end_, got);
    if (block != nullptr) {
      if (have > 0)
        std::memcpy(block - have, data_ + pos_, have);
      base_ += pos_;
      pos_ = 0;
      end_ = have + got;
      data_ = block - have;
      ahead_->next();
      return end_ < n ? n - end_ : 0;
    }
    // A read the blocks do not serve (a value longer than a block): read here, as before, and
    // the thread starts again after it.
    ahead_->stop();
  }
  if (buffer_.size() < std::max(chunk, n)) {
    std::vector<std::uint8_t> bigger(std::max(chunk, n));
    if (have > 0)
      std::memcpy(bigger.data(), data_ + pos_, have);
    buffer_.swap(bigger);
  } else if (have > 0) {
    std::memmove(buffer_.data(), data_ + pos_, have);
  }
  base_ += pos_;
  pos_ = 0;
  end_ = have;
  data_ = buffer_.data();
  while (file_ != nullptr && end_ < buffer_.size() && base_ + end_ < total_) {
    const auto got =
        file_->read_at(base_ + end_, std::as_writable_bytes(std::span(buffer_).subspan(end_)));
    if (got == 0)
      break;
    end_ += got;
  }
  // A file of a few blocks or more: the blocks after this one are read on another thread.
  if (file_ != nullptr && total_ - (base_ + end_) >= 4 * chunk) {
    if (ahead_ == nullptr)
      ahead_ = std::make_unique<read_ahead>(*file_, chunk);
    if (!ahead_->start(base_ + end_))
      ahead_.reset();
  }
  return end_ < n ? n - end_ : 0;
}

namespace {

// An opcode with a memo index at `p`: `op1` takes one byte, `op4` four (little-endian); false
// for any other opcode.
[[gnu::always_inline]] inline bool read_index(const std::uint8_t*& p, std::uint8_t op1,
                                              std::uint8_t op4, std::uint64_t& index) {
  if (*p == op1) {
    index = p[1];
    p += 2;
    return true;
  }
  if (*p != op4)
    return false;
  index = std::uint64_t{p[1]} | std::uint64_t{p[2]} << 8 | std::uint64_t{p[3]} << 16 |
          std::uint64_t{p[4]} << 24;
  p += 5;
  return true;
}

} // namespace

// A memo fetch inside flat_dict(); false when it is not one or names nothing.
[[gnu::always_inline]] inline bool snap_stream::fast_get(const std::uint8_t*& p,
                                                         std::uint64_t& out) const {
  std::uint64_t index;
  if (!read_index(p, 'h', 'j', index) || !memo_.find(index, out))
    return false;
  if (tag_of(out) == t_block) [[unlikely]]
    block_fetched_ = true;
  return true;
}
// A dict's key `k` at `p`: a memo fetch of a str, matched by its bytes when `keys` met it at
// that place before (learnt otherwise); false when it is not one.
[[gnu::always_inline]] inline bool snap_stream::fetch_key(key_cache& keys, const std::uint8_t*& p,
                                                          std::size_t k, std::uint64_t& out,
                                                          bool& action) const {
  std::uint64_t word; // the callers leave at least 32 bytes after `p`
  std::memcpy(&word, p, sizeof word);
  if (k < keys.count && (word & keys.mask[k]) == keys.code[k]) [[likely]] {
    out = keys.handle[k];
    p += keys.length[k];
    action |= keys.action[k];
    return true;
  }
  const auto* const at = p;
  if (!fast_get(p, out) || tag_of(out) != t_box)
    return false;
  const bool is_action = boxes_[payload_of(out)].action;
  action |= is_action;
  if (k < key_cache::max_keys) {
    keys.action[k] = is_action;
    keys.slot[k] = sink_ != nullptr ? sink_->key_slot(out) : entry_slots::ignored;
    std::array<std::uint8_t, sizeof word> mask{};
    std::fill_n(mask.begin(), p - at, std::uint8_t{0xff}); // 2 or 5 bytes
    std::memcpy(&keys.mask[k], mask.data(), sizeof word);
    keys.code[k] = word & keys.mask[k];
    keys.length[k] = static_cast<std::uint8_t>(p - at);
    keys.handle[k] = out;
    keys.count = std::max(keys.count, k + 1);
  }
  return true;
}

// Key `k` of a dict as `keys` learnt it, matched by its bytes at `p` (moved past it).
[[gnu::always_inline]] inline bool
snap_stream::known_key(const key_cache& keys, const std::uint8_t*& p, std::size_t k) noexcept {
  std::uint64_t word; // the callers leave at least 32 bytes after `p`
  std::memcpy(&word, p, sizeof word);
  if (k >= keys.count || (word & keys.mask[k]) != keys.code[k])
    return false;
  p += keys.length[k];
  return true;
}

// The keys learnt stand while no PUT has replaced a stored slot.
[[gnu::always_inline]] inline void snap_stream::check_keys(key_cache& keys) const {
  if (keys.overwrites != memo_overwrites_) [[unlikely]] {
    keys.count = 0;
    keys.overwrites = memo_overwrites_;
  }
}

// A flat value inside flat_dict(): a memo fetch, a small int or None.
[[gnu::always_inline]] inline bool
snap_stream::fast_value(const std::uint8_t*& p, std::uint64_t& out, std::uint64_t& ints) const {
  switch (*p) {
  case 'h':
  case 'j':
    return fast_get(p, out);
  case 'K':
    out = make(t_int, p[1]);
    p += 2;
    break;
  case 'M':
    out = make(t_int, std::uint64_t{p[1]} | std::uint64_t{p[2]} << 8);
    p += 3;
    break;
  case 'J': {
    const auto v = static_cast<std::int32_t>(std::uint32_t{p[1]} | std::uint32_t{p[2]} << 8 |
                                             std::uint32_t{p[3]} << 16 | std::uint32_t{p[4]} << 24);
    out = make(t_int, static_cast<std::uint64_t>(std::int64_t{v}));
    p += 5;
    break;
  }
  case 0x8a: {
    const std::size_t n = p[1];
    if (n == 0 || n > 7)
      return false;
    std::uint64_t v; // little-endian: n bytes, then the next (the callers leave 32 after `p`)
    std::memcpy(&v, p + 2, sizeof v);
    if constexpr (std::endian::native == std::endian::big)
      v = __builtin_bswap64(v);
    const auto drop = static_cast<unsigned>(64 - 8 * n); // sign-extended from byte n - 1
    out = make(t_int, static_cast<std::uint64_t>(static_cast<std::int64_t>(v << drop) >> drop));
    p += 2 + n;
    break;
  }
  case 'N':
    out = make(t_none, 0);
    p += 1;
    return true;
  default:
    return false;
  }
  ++ints;
  return true;
}

// Past any FRAME opcodes at `p` (protocol 4 starts one every 64 KiB, before any object); false
// for one that claims more bytes than are left, which the opcodes refuse.
[[gnu::always_inline]] inline bool snap_stream::skip_frames(const std::uint8_t*& p) const {
  while (*p == 0x95) {
    if (p + 32 > data_ + end_)
      return false; // several in a row: the next item must still be in the window
    std::uint64_t n = 0;
    for (int i = 0; i < 8; ++i)
      n |= std::uint64_t{p[1 + i]} << (8 * i);
    if (n > total_ - (base_ + static_cast<std::size_t>(p + 9 - data_)))
      return false;
    p += 9;
  }
  return true;
}

// A memo put at `p`: MEMOIZE (protocols 4, 5: index `next`) or BINPUT / LONG_BINPUT
// (protocols 2, 3); false for anything else.
[[gnu::always_inline]] inline bool snap_stream::fast_put(const std::uint8_t*& p, std::uint64_t next,
                                                         std::uint64_t& index) const {
  if (*p == 0x94) {
    index = next;
    p += 1;
    return true;
  }
  return read_index(p, 'q', 'r', index);
}

// The start of a flat dict at the read position: EMPTY_DICT, a memo put (its index in `memo`),
// MARK; the byte after them, or null. At least 1 KiB of the window must be left: every item is
// then read with 32 bytes after it (a memo put, key or value is at most 10). An index the
// opcode would refuse, or one that replaces a stored value (which the dict's own items might
// fetch), is left to the opcodes. `stop`: the last byte an item may start at. The keys of
// entries and blocks learnt before are checked to still stand.
[[gnu::always_inline]] inline const std::uint8_t*
snap_stream::open_flat_dict(std::uint64_t& memo, const std::uint8_t*& stop) const {
  const auto* p = data_ + pos_;
  if (end_ - pos_ < 1024 || !fast_put(p, memo_.size(), memo) || *p != '(' || memo < memo_.size() ||
      memo > memo_.size() + 4096 || memo >= limits_.max_values)
    return nullptr;
  stop = data_ + end_ - 32;
  check_keys(entry_keys_);
  return p + 1;
}

// The shape of nearly every trace entry, read in one go: (EMPTY_DICT) a memo put, MARK, then keys
// fetched from the memo with small ints, None or memo fetches as values (and at most one
// frames list of such dicts, see inline_list), then SETITEMS. Returns the bytes it spans with
// the dict's items in `items`; 0 (nothing consumed) for anything else, which the opcodes then
// read one by one.
std::size_t snap_stream::scan_flat_dict(flat_items& items, std::uint64_t& ints) const {
  const std::uint8_t* stop = nullptr;
  const auto* p = open_flat_dict(items.memo, stop);
  if (p == nullptr)
    return 0;
  items.count = 0;
  items.containers = 0;
  items.action = false;
  items.list.present = false;
  for (;;) {
    if (p > stop || !skip_frames(p))
      return 0;
    if (*p == 'u')
      break;
    if (items.count == items.handles.size() ||
        !fetch_key(entry_keys_, p, items.count / 2, items.handles[items.count], items.action) ||
        !skip_frames(p))
      return 0;
    if (*p == ']') {
      if (items.list.present || !scan_inline_list(p, stop, items, ints))
        return 0;
      items.handles[items.count + 1] = make(t_inline, 0);
    } else if (!fast_value(p, items.handles[items.count + 1], ints)) {
      return 0;
    } else if (tag_of(items.handles[items.count + 1]) == t_container) {
      ++items.containers;
    }
    items.count += 2;
  }
  return static_cast<std::size_t>(p + 1 - (data_ + pos_));
}

// A flat dict at the read position whose keys are those the dicts before it fetched
// (entry_keys_), in order: `value(k, p)` reads key k's value at `p` (false: not this shape).
// Returns the bytes the dict spans, with its number of keys in `count`; 0 (nothing consumed) for
// anything else, which scan_flat_dict then reads. A FRAME opcode inside the dict (one in a
// thousand entries) is left to scan_flat_dict too: a key or value that is one is no match.
template <typename Value>
[[gnu::always_inline]] inline std::size_t
snap_stream::scan_known_keys(std::uint64_t& memo, std::size_t& count, Value&& value) const {
  const std::uint8_t* stop = nullptr;
  const auto* p = open_flat_dict(memo, stop);
  if (p == nullptr)
    return 0;
  for (std::size_t k = 0;; ++k) {
    if (p > stop)
      return 0;
    if (*p == 'u') {
      count = k;
      return static_cast<std::size_t>(p + 1 - (data_ + pos_));
    }
    if (!known_key(entry_keys_, p, k) || !value(k, p))
      return 0;
  }
}

// A trace entry (a key is "action") with flat values (no container, no frames list): its values
// by the sink's slots (a key given twice: the last, as in Python), read in one go.
std::size_t snap_stream::scan_slots(entry_slots& e, std::uint64_t& ints) const {
  const auto& keys = entry_keys_;
  e.present = 0;
  bool action = false;
  std::size_t count = 0;
  const auto n = scan_known_keys(e.memo, count, [&](std::size_t k, const std::uint8_t*& p) {
    action |= keys.action[k];
    std::uint64_t v = 0;
    if (!fast_value(p, v, ints) || tag_of(v) == t_container || tag_of(v) == t_block)
      return false;
    if (const auto slot = keys.slot[k]; slot != entry_slots::ignored) {
      e.present |= std::uint32_t{1} << slot;
      e.values[slot] = v;
    }
    return true;
  });
  return action ? n : 0;
}

// A segment's block dict (no key is "action") with small ints, None, strs or settled tracebacks
// as values, and at most one empty frames list of its own (EMPTY_LIST and the memo put after the
// dict's, then the next key or SETITEMS), read in one go: what scan_flat_dict would read of it,
// for the block record that compact_block makes.
std::size_t snap_stream::scan_block(block_items& b, std::uint64_t& ints) const {
  const auto& keys = entry_keys_;
  b.own_empty_list = false;
  std::size_t count = 0;
  const auto n = scan_known_keys(b.memo, count, [&](std::size_t k, const std::uint8_t*& p) {
    if (k >= block_layout::max_keys || keys.action[k])
      return false;
    b.handles[2 * k] = keys.handle[k];
    auto& v = b.handles[2 * k + 1];
    if (*p != ']') {
      const auto t = fast_value(p, v, ints) ? tag_of(v) : t_container;
      return t == t_int || t == t_none || t == t_box || t == t_stack || t == t_empty;
    }
    // As scan_inline_list reads an empty list: not a batch, and no frame after it (a fetch
    // followed by APPEND, or a new dict).
    std::uint64_t index = 0;
    ++p;
    if (b.own_empty_list || !fast_put(p, b.memo + 1, index) || index != b.memo + 1 ||
        index >= limits_.max_values || *p == '(' || !skip_frames(p) || *p == '}')
      return false;
    if (*p == 'h' || *p == 'j') {
      const auto* q = p;
      std::uint64_t next = 0;
      if (!fast_get(q, next) || !skip_frames(q) || *q == 'a')
        return false;
    }
    b.own_empty_list = true;
    b.list_memo = index;
    v = make(t_empty, 0);
    return true;
  });
  b.count = 2 * count;
  return n;
}

// A frames list (inline_list) at `p`, as pickle writes it: EMPTY_LIST, a memo put, then MARK,
// the frames, APPENDS; or one frame and APPEND; or nothing (an empty list). A frame is a new
// flat dict (EMPTY_DICT, a memo put, MARK, memo-fetched keys with flat values, SETITEMS) or a
// memo fetch of a frame already interned (frame_ref). Every memo put must take the next index
// after the entry's, as pickle numbers them; a dict with an "action" key (which a list makes a
// row), a fetch of anything else, or more frames than one APPENDS carries is left to the
// opcodes.
bool snap_stream::scan_inline_list(const std::uint8_t*& p, const std::uint8_t* stop,
                                   flat_items& items, std::uint64_t& ints) const {
  auto& l = items.list;
  check_keys(frame_keys_);
  std::uint64_t next = items.memo + 1, index = 0;
  ++p;
  if (!fast_put(p, next, index) || index != next || next >= limits_.max_values)
    return false;
  l.memo = next++;
  l.count = 0;
  l.fresh = 0;
  l.used = 0;
  const bool batch = *p == '(';
  if (batch)
    ++p;
  for (;;) {
    if (p > stop || !skip_frames(p))
      return false;
    if (*p == 'h' || *p == 'j') {
      // Without a MARK, a fetch not followed by APPEND is the entry's next key: the list is empty.
      const auto* const at = p;
      if (l.count == l.source.size() || !fast_get(p, l.source[l.count]))
        return false;
      if (!batch && (!skip_frames(p) || *p != 'a')) {
        p = at;
        break;
      }
      if (!frame_ref(l.source[l.count]))
        return false;
      ++l.count;
    } else if (*p == '}') {
      if (l.count == l.source.size())
        return false;
      ++p;
      if (!fast_put(p, next, index) || index != next || next >= limits_.max_values || *p != '(')
        return false;
      l.dict_memo[l.fresh] = next++;
      l.first[l.fresh] = static_cast<std::uint32_t>(l.used);
      ++p;
      bool action = false; // a dict with an "action" key
      for (;;) {
        if (p > stop || !skip_frames(p))
          return false;
        if (*p == 'u')
          break;
        if (l.used + 2 > l.items.size() ||
            !fetch_key(frame_keys_, p, (l.used - l.first[l.fresh]) / 2, l.items[l.used], action) ||
            !skip_frames(p) || !fast_value(p, l.items[l.used + 1], ints))
          return false;
        l.used += 2;
      }
      ++p;
      if (action)
        return false;
      l.source[l.count++] = make(t_inline, l.fresh++);
    } else {
      break;
    }
    if (!batch)
      break;
  }
  l.first[l.fresh] = static_cast<std::uint32_t>(l.used);
  if (batch || l.count == 1) {
    if (!skip_frames(p) || *p != static_cast<std::uint8_t>(batch ? 'e' : 'a'))
      return false;
    ++p;
  }
  // A second batch of the same list (more than 1000 frames) is left to the opcodes.
  if (batch && (!skip_frames(p) || *p == '('))
    return false;
  l.present = true;
  return true;
}

// A memo fetch that may stand for a frame: one a row's frames list left (t_frame), or a dict
// held elsewhere (a frame dict torch shares between tracebacks) that a list would not make a row.
// The sink interns (or finds) the dict's frame, or gives up if it is not a plain frame.
bool snap_stream::frame_ref(std::uint64_t v) const noexcept {
  if (tag_of(v) == t_frame)
    return true;
  if (tag_of(v) != t_container)
    return false;
  const auto& c = containers_[payload_of(v)];
  return c.kind == kind::dict && !c.converted && c.run_count == 0 && !has_action(c.items);
}

// A dict with an "action" key: a device_traces entry.
bool snap_stream::has_action(std::span<const std::uint64_t> items) const noexcept {
  for (std::size_t i = 0; i < items.size(); i += 2)
    if (tag_of(items[i]) == t_box && boxes_[payload_of(items[i])].action)
      return true;
  return false;
}

void snap_stream::fail_at(std::uint64_t offset, std::uint8_t op, std::string_view code,
                          std::string_view title, std::string message, std::string hint) const {
  const auto name = opcode_name(op);
  throw_input_error(code, std::string(title),
                    fmt::format("{}: byte offset {}: {}", source_, offset, message),
                    std::move(hint),
                    {{"file", source_},
                     {"offset", static_cast<std::int64_t>(offset)},
                     {"opcode", name.empty() ? fmt::format("0x{:02x}", op) : std::string(name)}});
}

// Depth-first over the containers, iteratively: a container met again while it is open is a
// cycle; nesting beyond limits.max_depth is refused.
void snap_stream::check_depth() {
  constexpr std::uint32_t unknown = 0, visiting = 0xffffffffu;
  std::vector<std::uint32_t> depth(containers_.size(), unknown);
  struct frame {
    std::uint32_t container;
    std::size_t next;
    std::uint32_t best;
  };
  std::vector<frame> work;
  for (std::uint32_t start = 0; start < containers_.size(); ++start) {
    if (depth[start] != unknown)
      continue;
    depth[start] = visiting;
    work.push_back({start, 0, 1});
    while (!work.empty()) {
      auto& f = work.back();
      const auto& items = containers_[f.container].items;
      if (f.next == items.size()) {
        depth[f.container] = f.best;
        const auto done = f.best;
        work.pop_back();
        if (!work.empty())
          work.back().best = std::max(work.back().best, done + 1);
        continue;
      }
      const auto child = items[f.next++];
      if (tag_of(child) != t_container)
        continue;
      const auto c = static_cast<std::uint32_t>(payload_of(child));
      if (depth[c] == visiting) {
        fail_at(containers_[c].offset, 0x94, codes::pickle_cycle, "unsafe pickle",
                "a container holds itself (a reference cycle through the memo)");
      }
      if (depth[c] != unknown) {
        f.best = std::max(f.best, depth[c] + 1);
        continue;
      }
      if (work.size() >= limits_.max_depth)
        fail_at(containers_[c].offset, '(', codes::pickle_limit, "pickle over limit",
                fmt::format("containers nested deeper than {}", limits_.max_depth));
      depth[c] = visiting;
      work.push_back({c, 0, 1});
    }
  }
}

} // namespace tdiag::trace::detail
