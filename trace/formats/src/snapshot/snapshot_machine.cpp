// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The pickle machine's containers: lists, dicts, tuples and sets as the opcodes build them,
// and trace entries turned into rows as they are read or appended (snapshot_stream.hpp).
#include "snapshot_machine.hpp"

#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <array>
#include <cstring>

namespace tdiag::trace::detail {

void snap_stream::release(std::uint64_t index) {
  auto& c = containers_[index];
  live_items_ -= std::min<std::uint64_t>(live_items_, c.items.size());
  // A slot is reused for a container of any size: room for a long list is given back.
  if (c.items.capacity() > 64)
    std::vector<std::uint64_t>().swap(c.items);
  else
    c.items.clear();
  c.run_first = 0;
  c.run_count = 0;
  c.memo = none32;
  c.refs = 0;
  c.cached = none32;
  c.converted = false;
  free_.push_back(static_cast<std::uint32_t>(index));
}

void snap_stream::settle(snap_value v, std::uint32_t id, bool is_stack, bool exclusive) {
  if (tag_of(v.raw()) != t_container)
    return;
  const auto index = payload_of(v.raw());
  auto& c = containers_[index];
  if (exclusive && c.refs <= 1) {
    if (c.memo != none32)
      (void)memo_.set(c.memo, make(is_stack ? t_stack : t_frame, id));
    release(index);
  } else {
    c.cached = id;
    // Fetched from the memo from now on as the id itself, like a freed one: torch shares one
    // frame dict among all the tracebacks holding it, and one list among all the entries with
    // that traceback, so these fetches are most of a snapshot's (those holding it already keep
    // the container, with its id cached).
    if (c.memo != none32 && memo_.has(c.memo) && memo_.get(c.memo) == v.raw())
      (void)memo_.set(c.memo, make(is_stack ? t_stack : t_frame, id));
  }
}

void snap_machine::wrong_target(std::uint64_t v, kind expected) {
  const auto k = kind_of(v);
  // A traceback, frame or trace entry is read (and its container freed) once complete.
  const bool read = tag_of(v) == t_row || tag_of(v) == t_stack || tag_of(v) == t_frame ||
                    tag_of(v) == t_empty ||
                    (tag_of(v) == t_container && s.containers_[payload_of(v)].converted);
  if (read && k == expected)
    fail(codes::malformed_pickle, "malformed pickle",
         fmt::format("{} changes a {} already read whole (a traceback, frame or trace entry is "
                     "read once complete; PyTorch never changes one afterwards)",
                     opname(), to_string(k)));
  fail(
      codes::malformed_pickle, "malformed pickle",
      fmt::format("{} applied to a {} (expected {})", opname(), to_string(k), to_string(expected)));
}

// An item appended to a list: a trace entry dict becomes a row.
std::uint64_t snap_machine::list_item(std::uint64_t v) {
  if (tag_of(v) != t_container)
    return v;
  const auto index = payload_of(v);
  auto& c = s.containers_[index];
  if (c.converted)
    return make(t_row, c.cached);
  if (s.sink_ == nullptr || c.kind != kind::dict)
    return stored(v);
  if (!s.has_action(c.items)) {
    // A segment's block held by nothing else: kept as its record (snapshot_blocks.cpp).
    if (c.refs != 0 || c.run_count != 0)
      return stored(v);
    s.own_dict_traceback(c.items, c.offset); // a segment's or block's
    const auto block = s.compact_block(c.items, c.offset);
    if (block == 0)
      return stored(v);
    if (c.memo != none32 && s.memo_.get(c.memo) == v)
      (void)s.memo_.set(c.memo, block);
    s.release(index);
    return block;
  }
  const bool exclusive = c.refs == 0;
  const auto row = s.sink_->entry(snap_value(&s, v, c.offset), exclusive);
  auto& after = s.containers_[index];
  if (exclusive) {
    if (after.memo != none32)
      (void)s.memo_.set(after.memo, make(t_row, row));
    s.release(index);
  } else {
    after.converted = true;
    after.cached = row;
  }
  return make(t_row, row);
}

// Rows appended one after another (a device's trace entries) and block records likewise (a
// segment's blocks) are kept as a run: a handle and a count, no item each.
void snap_machine::append_to(snap_stream::container& list, std::uint64_t item) {
  if ((tag_of(item) == t_row || tag_of(item) == t_block) && list.extend_run(item))
    return;
  list.items.push_back(item);
}

void snap_machine::append_items(std::size_t mark, kind k) {
  const auto n = stack.size() - mark;
  if (mark == 0 || mark <= floor())
    fail(codes::malformed_pickle, "malformed pickle", fmt::format("{} without a target", opname()));
  const auto target = stack[mark - 1];
  grow(container_of(target, k), n);
  auto i = mark;
  // A batch of rows that goes on with the list's run (a device's trace entries): counted in a
  // tight loop (a row is its own list item, so list_item has nothing to do).
  if (auto& list = s.containers_[payload_of(target)]; k == kind::list)
    while (i < stack.size() && tag_of(stack[i]) == t_row && list.extend_run(stack[i]))
      ++i;
  for (; i < stack.size(); ++i) {
    const auto item = k == kind::list ? list_item(stack[i]) : stored(stack[i]);
    append_to(s.containers_[payload_of(target)], item);
  }
  stack.resize(mark);
}

void snap_machine::set_items(std::size_t mark) {
  const auto n = stack.size() - mark;
  if (n % 2 != 0)
    fail(codes::malformed_pickle, "malformed pickle",
         fmt::format("{} with an odd item count", opname()));
  if (mark == 0 || stack.size() < mark)
    fail(codes::malformed_pickle, "malformed pickle", fmt::format("{} without a dict", opname()));
  auto& items = container_of(stack[mark - 1], kind::dict);
  grow(items, n);
  for (std::size_t i = mark; i < stack.size(); ++i)
    items.items.push_back(stored(stack[i]));
  stack.resize(mark);
  entry_now();
}

// A trace entry dict the opcodes just completed (SETITEMS) in a batch of entries (next_in_batch,
// the dict itself aside) becomes its row now, as the list would make it, when that cannot fail:
// the entries after it in the batch are then rows at once too (flat_dict), in file order, instead
// of all waiting for the list. Not when more items may follow (the next opcode neither starts
// another entry nor ends the batch).
void snap_machine::entry_now() {
  const auto top = stack.back();
  if (s.sink_ == nullptr || tag_of(top) != t_container)
    return;
  const auto& c = s.containers_[payload_of(top)];
  if (c.kind != kind::dict || c.converted)
    return;
  stack.pop_back();
  const bool batch = next_in_batch();
  stack.push_back(top);
  const auto* p = s.data_ + s.pos_;
  const auto* const end = s.data_ + s.end_;
  while (end - p >= 9 && *p == 0x95)
    p += 9; // FRAME
  if (!batch || p == end || (*p != '}' && *p != 'e') || !s.has_action(c.items) ||
      !s.sink_->readable(snap_value(&s, top, c.offset)))
    return;
  stack.back() = list_item(top);
}

void snap_machine::build_from_mark(kind k, std::size_t mark) {
  const auto v = new_container(k);
  grow(s.containers_[payload_of(v)], stack.size() - mark);
  for (std::size_t i = mark; i < stack.size(); ++i) {
    if (k == kind::list)
      append_to(s.containers_[payload_of(v)], list_item(stack[i]));
    else
      s.containers_[payload_of(v)].items.push_back(stored(stack[i]));
  }
  stack.resize(mark);
  push(v);
}

void snap_machine::build_tuple(std::size_t n) {
  if (stack.size() < floor() + n)
    fail(codes::malformed_pickle, "malformed pickle", fmt::format("{} on a short stack", opname()));
  build_from_mark(kind::tuple, stack.size() - n);
}

// Nearly every trace entry (next_in_batch): keys met before, with flat values, into its row by
// slots; then the entries after it in the batch, while they read alike, without going back to
// run() (a row pushed leaves next_in_batch true). False where the entry at hand (the first, or
// a later one whose EMPTY_DICT it took) is not one: the rest of flat_dict() reads it.
bool snap_machine::rows_by_slots() {
  for (;;) {
    std::uint64_t ints = 0;
    std::uint32_t row = 0;
    const auto n = s.scan_slots(slots, ints);
    if (n == 0 || !s.sink_->slot_entry(slots, row)) {
      by_slots.missed();
      return false;
    }
    by_slots.read();
    created += ints;
    count();
    push(make(t_row, row));
    memo_put(slots.memo);
    s.pos_ += n;
    if (!next_dict())
      return true;
  }
}

// A segment's block about to go into its list (block_next) read by scan_block, then the blocks
// after it in the batch, while they read alike, without going back to run() (a block pushed
// leaves block_next true, and next_in_batch false). False where the dict at hand (the first, or
// a later one whose EMPTY_DICT it took) is not one: the rest of flat_dict() reads it.
bool snap_machine::blocks_by_scan() {
  for (;;) {
    if (!scanned_block()) {
      by_block.missed();
      return false;
    }
    by_block.read();
    if (!next_dict())
      return true;
    // flat_dict() would count a try of the read by slots (next_in_batch is false above a block).
    if (s.sink_ != nullptr)
      (void)by_slots.worth_trying();
  }
}

// The shape of nearly every trace entry, read in one go: EMPTY_DICT, a memo put, MARK, then keys
// fetched from the memo with small ints, None or memo fetches as values, then SETITEMS. A
// trace entry about to be appended becomes its row at once, with no dict made; anything else
// becomes the dict the opcodes would build. False (nothing consumed) for other shapes, which
// the opcodes then read one by one.
bool snap_machine::flat_dict() {
  std::uint64_t ints = 0;
  // Near the end of the window the read would give up (and with it, the rest of a batch of
  // entries: next_in_batch): the window slides on first.
  if (window_short())
    refill(static_cast<std::size_t>(std::min<std::uint64_t>(flat_window, left())));
  if (s.sink_ != nullptr && by_slots.worth_trying() && next_in_batch() && rows_by_slots())
    return true;
  if (by_block.worth_trying() && block_next() && blocks_by_scan())
    return true;
  const auto n = s.scan_flat_dict(scratch, ints);
  if (n == 0)
    return false;
  const auto kv = scratch.span();
  auto& list = scratch.list;
  // A frames list read inline goes only into a row: anything else is read opcode by opcode
  // (so is one that would cross limits.max_values, to fail where the opcodes fail).
  const bool ready = scratch.action && next_in_batch();
  if (list.present &&
      (created + ints + list.fresh + 2 > limits.max_values ||
       stack.size() + list.count + 2 > limits.max_stack || list.count > limits.max_container))
    return false;
  if (list.present && !ready) {
    if (list.count == 0 && flat_block(ints, n))
      return true;
    // Not an entry (a segment's block, say): the dict and list the opcodes would make.
    flat_containers(ints);
    s.pos_ += n;
    return true;
  }
  created += ints;
  for (std::size_t i = 1; scratch.containers != 0 && i < kv.size(); i += 2) // (keys are strs)
    if (tag_of(kv[i]) == t_container)
      s.containers_[payload_of(kv[i])].refs += 3; // fetched from the memo, then stored
  for (std::size_t i = 0; list.present && i < list.used; ++i)
    if (tag_of(list.items[i]) == t_container)
      s.containers_[payload_of(list.items[i])].refs += 3;
  for (std::size_t k = 0; list.present && k < list.count; ++k)
    if (tag_of(list.source[k]) == t_container)
      s.containers_[payload_of(list.source[k])].refs += 3; // fetched, then appended
  if (!ready && !list.present && block_next()) {
    // A block (its traceback one met before): its record, with no dict made.
    if (const auto block = s.compact_block(kv, op_offset); block != 0) {
      count();
      push(block);
      memo_put(scratch.memo);
      s.pos_ += n;
      return true;
    }
  }
  std::uint32_t row = 0;
  s.inline_ = list.present ? &list : nullptr;
  const bool converted = ready && s.sink_->flat_entry(kv, op_offset, row);
  s.inline_ = nullptr;
  if (converted) {
    count();
    push(make(t_row, row));
  } else if (list.present) {
    // Only the references taken above are undone: the sink changed nothing the opcodes would
    // not change alike.
    created -= ints;
    for (std::size_t i = 1; scratch.containers != 0 && i < kv.size(); i += 2)
      if (tag_of(kv[i]) == t_container)
        s.containers_[payload_of(kv[i])].refs -= 3;
    for (std::size_t i = 0; i < list.used; ++i)
      if (tag_of(list.items[i]) == t_container)
        s.containers_[payload_of(list.items[i])].refs -= 3;
    for (std::size_t k = 0; k < list.count; ++k)
      if (tag_of(list.source[k]) == t_container)
        s.containers_[payload_of(list.source[k])].refs -= 3;
    return false;
  } else {
    const auto v = new_container(kind::dict);
    s.containers_[payload_of(v)].items.assign(kv.begin(), kv.end());
    push(v);
    memo_put(scratch.memo);
    s.pos_ += n;
    // As if its SETITEMS had just been read: an entry the sink could not read flat (a frames
    // list not yet interned) need not hold back the rest of its batch.
    if (ready)
      entry_now();
    return true;
  }
  memo_put(scratch.memo);
  if (list.present) {
    // What the opcodes leave once the entry's row frees the list and its dicts (settle).
    created += 1 + list.fresh;
    (void)s.memo_.set(list.memo, make(t_stack, list.stack));
    for (std::size_t j = 0; j < list.fresh; ++j)
      (void)s.memo_.set(list.dict_memo[j], make(t_frame, list.frame_ids[j]));
  }
  s.pos_ += n;
  return true;
}

// A value pushed now goes into the list under the open MARK (a segment's blocks list, say).
bool snap_machine::block_next() const noexcept {
  if (s.sink_ == nullptr || marks.empty() || marks.back() == 0)
    return false;
  const auto target = stack[marks.back() - 1];
  if (tag_of(target) != t_container)
    return false;
  const auto& list = s.containers_[payload_of(target)];
  return list.kind == kind::list && !list.converted;
}

// A flat dict read with an empty frames list of its own (an inactive block's) about to go into
// a list: its block record and an empty-list handle (snapshot_blocks.cpp) instead of the dict and
// list flat_containers would make and the list would then make the record of. False (nothing
// done) when it is not a block.
bool snap_machine::flat_block(std::uint64_t ints, std::size_t n) {
  if (!block_next())
    return false;
  const auto empty = make(t_empty, 0);
  std::array<std::uint64_t, 2 * snap_stream::block_layout::max_keys> items;
  if (scratch.count > items.size())
    return false;
  for (std::size_t i = 0; i < scratch.count; ++i)
    items[i] = tag_of(scratch.handles[i]) == t_inline ? empty : scratch.handles[i];
  const auto block = s.compact_block(std::span(items.data(), scratch.count), op_offset);
  if (block == 0)
    return false;
  put_block(block, ints, scratch.memo, scratch.list.memo, n);
  return true;
}

void snap_machine::put_block(std::uint64_t block, std::uint64_t ints, std::uint64_t memo,
                             std::optional<std::uint64_t> list_memo, std::size_t n) {
  // As flat_containers counts and memoizes them: the ints, the dict, then its list.
  created += ints;
  count();
  push(block);
  memo_put(memo);
  if (list_memo) {
    count();
    push(make(t_empty, 0));
    memo_put(*list_memo);
    stack.pop_back();
  }
  s.pos_ += n;
}

bool snap_machine::scanned_block() {
  auto& b = block_scratch;
  std::uint64_t ints = 0;
  const auto n = s.scan_block(b, ints);
  // The limits flat_dict holds a dict with a frames list to (the opcodes then fail there).
  if (n == 0 || (b.own_empty_list &&
                 (created + ints + 2 > limits.max_values || stack.size() + 2 > limits.max_stack)))
    return false;
  const auto block = s.compact_block(std::span(b.handles.data(), b.count), op_offset);
  if (block == 0)
    return false;
  put_block(block, ints, b.memo,
            b.own_empty_list ? std::optional<std::uint64_t>(b.list_memo) : std::nullopt, n);
  return true;
}

// The containers the opcodes make of a flat dict read with its frames list (scratch) that does
// not become a row: the dict, the list and the list's new dicts, each memoized where the pickle
// puts it, with the references the opcodes count (a memo fetch 2, a store 1).
void snap_machine::flat_containers(std::uint64_t ints) {
  const auto& list = scratch.list;
  const auto ref = [this](std::uint64_t v, std::uint32_t n) {
    if (tag_of(v) == t_container)
      s.containers_[payload_of(v)].refs += n;
  };
  created += ints;
  const auto dict = new_container(kind::dict);
  push(dict);
  memo_put(scratch.memo);
  const auto lst = new_container(kind::list);
  push(lst);
  memo_put(list.memo);
  stack.pop_back();
  for (std::size_t k = 0; k < list.count; ++k) {
    auto item = list.source[k];
    if (snap_stream::inline_list::element_is_fresh(item)) {
      const auto j = payload_of(item);
      item = new_container(kind::dict);
      auto& items = s.containers_[payload_of(item)].items;
      items.assign(list.items.begin() + list.first[j], list.items.begin() + list.first[j + 1]);
      for (const auto v : items)
        ref(v, 3);
      push(item);
      memo_put(list.dict_memo[j]);
      stack.pop_back();
      ref(item, 1);
    } else {
      ref(item, 3);
    }
    append_to(s.containers_[payload_of(lst)], item);
  }
  auto& items = s.containers_[payload_of(dict)].items;
  items.assign(scratch.handles.begin(), scratch.handles.begin() + scratch.count);
  for (auto& v : items) {
    if (tag_of(v) == t_inline)
      v = lst;
    ref(v, v == lst ? 1 : 3);
  }
}

// A value pushed now is appended to a list next, in order: the open MARK sits on a list and
// nothing but rows is above it (so rows keep the order the list gives them; a dict above
// the MARK becomes its row only when the list takes it).
bool snap_machine::next_in_batch() const noexcept {
  if (s.sink_ == nullptr || marks.empty() || marks.back() == 0)
    return false;
  const auto target = stack[marks.back() - 1];
  if (tag_of(target) != t_container)
    return false;
  const auto& list = s.containers_[payload_of(target)];
  return list.kind == kind::list && !list.converted && stack.size() >= marks.back() &&
         (stack.size() == marks.back() || tag_of(stack.back()) == t_row);
}

void snap_machine::push_string(kind k, std::uint64_t len) {
  if (len > left())
    truncated(len - left());
  if (len > 0xffffffffu)
    fail(codes::pickle_limit, "pickle over limit", "a string over 4 GiB");
  count();
  big_value(len);
  const auto* p = take(static_cast<std::size_t>(len));
  const auto at = s.arena_.size();
  s.arena_.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
  // Marked once here: has_action asks of every key of every dict whether it is this one, and
  // own_dict_traceback of every key of every segment and block.
  const auto is = [&](std::string_view name) {
    return k == kind::string && len == name.size() && std::memcmp(p, name.data(), len) == 0;
  };
  const auto dict_key = is("frames")                  ? snap_stream::frames_key
                        : is("blocks") || is("state") ? snap_stream::owner_key
                                                      : std::uint8_t{0};
  push(boxed(k, at, static_cast<std::uint32_t>(len), is("action"), dict_key));
}

void snap_machine::push_long(std::uint64_t n) {
  if (n > left())
    truncated(n - left());
  big_value(n);
  const auto* p = take(static_cast<std::size_t>(n));
  if (n == 0)
    return push(integer(0));
  if (n <= 8) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= std::uint64_t{p[i]} << (8 * i);
    if (n < 8 && (p[n - 1] & 0x80) != 0)
      v |= ~std::uint64_t{0} << (8 * n); // sign-extend
    return push(integer(static_cast<std::int64_t>(v)));
  }
  if (n > 0xffffffffu)
    fail(codes::pickle_limit, "pickle over limit", "an integer over 4 GiB");
  count();
  const auto at = s.arena_.size();
  s.arena_.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n));
  push(boxed(kind::big_integer, at, static_cast<std::uint32_t>(n)));
}

void snap_machine::append_one() {
  const auto item = pop();
  const auto target = top();
  grow(container_of(target, kind::list), 1);
  const auto v = list_item(item);
  append_to(s.containers_[payload_of(target)], v);
}

void snap_machine::set_one() {
  const auto value = pop();
  const auto key = pop();
  auto& c = container_of(top(), kind::dict);
  grow(c, 2);
  c.items.push_back(stored(key));
  c.items.push_back(stored(value));
}

} // namespace tdiag::trace::detail
