// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the pickle machine over a snap_stream (snapshot_stream.hpp): its stack, marks and
// memo, with the primitives every opcode uses inline here. What the opcodes do is in
// snapshot_opcodes.cpp; how containers are built (and trace entries become rows) in
// snapshot_machine.cpp. The same subset and refusals as pickle_reader.hpp.
#pragma once

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pickle_opcodes.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {

// A struct so that it reaches the stream's internals.
struct snap_machine {
  using kind = pickle_kind;
  static constexpr std::size_t chunk_bytes = std::size_t{256} << 10;
  /// Input kept ahead of a flat dict's read (snap_stream::scan_flat_dict).
  static constexpr std::size_t flat_window = std::size_t{32} << 10;

  snap_stream& s;
  const pickle_limits& limits;
  std::size_t op_offset = 0;
  std::uint8_t op = 0;
  std::uint64_t created = 0;
  std::vector<std::uint64_t> stack;
  std::vector<std::size_t> marks;
  /// A flat dict's read (with a frames list of up to 1000 frames: about 90 KiB, not on the stack).
  std::unique_ptr<snap_stream::flat_items> scratch_owner =
      std::make_unique<snap_stream::flat_items>();
  snap_stream::flat_items& scratch = *scratch_owner;
  entry_slots slots; ///< a trace entry read by slots (flat_dict)
  /// A read in one go (by slots, or a block's) that failed on `give_up` dicts in a row (new
  /// tracebacks, say, or dicts that are no blocks) is tried on only every `retry`-th dict after,
  /// until one is read: a failed try reads the dict twice.
  struct one_go {
    static constexpr std::uint32_t give_up = 8, retry = 16;
    std::uint32_t misses = 0, skipped = 0;
    [[nodiscard]] bool worth_trying() noexcept {
      return misses < give_up || ++skipped % retry == 0;
    }
    void read() noexcept { misses = 0; }
    void missed() noexcept { misses += misses < give_up ? 1 : 0; }
  };
  one_go by_slots, by_block;
  /// What the machine holds is held against the memory budget every so many values.
  static constexpr std::uint64_t footprint_interval = std::uint64_t{1} << 18;
  std::uint64_t next_footprint_check = footprint_interval;
  std::uint64_t next_items_check = footprint_interval;
  std::size_t next_stack_check = footprint_interval;

  [[noreturn, gnu::cold, gnu::noinline]] void fail(std::string_view code, std::string_view title,
                                                   std::string message,
                                                   std::string hint = {}) const {
    s.fail_at(op_offset, op, code, title, std::move(message), std::move(hint));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void truncated(std::uint64_t needed) const {
    fail(codes::truncated_pickle, "truncated pickle",
         fmt::format("{} needs {} more byte(s) but the input ends at byte {}", opname(), needed,
                     s.total_),
         "the file was cut short (an interrupted copy or dump?); re-create it");
  }
  [[nodiscard]] std::string opname() const {
    const auto name = opcode_name(op);
    return name.empty() ? fmt::format("opcode 0x{:02x}", op) : std::string(name);
  }
  [[nodiscard]] std::uint64_t left() const noexcept { return s.total_ - s.position(); }

  void refill(std::size_t n) {
    if (n > left())
      truncated(n - left());
    if (const auto missing = s.refill(n, chunk_bytes); missing != 0)
      truncated(missing);
  }
  const std::uint8_t* take(std::size_t n) {
    if (n > s.end_ - s.pos_)
      refill(n);
    const auto* p = s.data_ + s.pos_;
    s.pos_ += n;
    return p;
  }
  std::uint64_t read_le(std::size_t n) {
    const auto* p = take(n);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= std::uint64_t{p[i]} << (8 * i);
    return v;
  }
  std::string_view read_line() {
    for (;;) {
      const auto* begin = s.data_ + s.pos_;
      const void* nl = std::memchr(begin, '\n', s.end_ - s.pos_);
      if (nl != nullptr) {
        const auto n = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - begin);
        s.pos_ += n + 1;
        return {reinterpret_cast<const char*>(begin), n};
      }
      if (s.end_ - s.pos_ >= left() || s.end_ - s.pos_ > 4096)
        truncated(1);
      refill(s.end_ - s.pos_ + 1);
    }
  }

  // The refusals of the steps below, out of line: each step is then small enough to inline.
  [[noreturn, gnu::cold, gnu::noinline]] void too_many_values() const {
    fail(codes::pickle_limit, "pickle over limit",
         fmt::format("more than {} values", limits.max_values));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void stack_too_deep() const {
    fail(codes::pickle_limit, "pickle over limit",
         fmt::format("stack deeper than {}", limits.max_stack));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void empty_stack() const {
    fail(codes::malformed_pickle, "malformed pickle",
         fmt::format("{} on an empty stack", opname()));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void memo_out_of_range(std::uint64_t index) const {
    fail(codes::bad_memo, "malformed pickle", fmt::format("memo index {} out of range", index));
  }

  void count() {
    if (++created > limits.max_values)
      too_many_values();
    if (created >= next_footprint_check) [[unlikely]] {
      next_footprint_check = created + footprint_interval;
      check_footprint();
    }
  }
  void check_footprint() const {
    s.check_footprint(op_offset, (stack.capacity() + marks.capacity()) * sizeof(std::uint64_t));
  }
  std::uint64_t boxed(kind k, std::uint64_t payload, std::uint32_t aux = 0, bool action = false,
                      std::uint8_t dict_key = 0) {
    s.boxes_.push_back({payload, op_offset, aux, k, action, dict_key});
    return make(t_box, s.boxes_.size() - 1);
  }
  std::uint64_t integer(std::int64_t v) {
    count();
    constexpr std::int64_t lim = std::int64_t{1} << 59;
    if (v >= -lim && v < lim)
      return make(t_int, static_cast<std::uint64_t>(v));
    return boxed(kind::integer, static_cast<std::uint64_t>(v));
  }
  std::uint64_t new_container(kind k) {
    count();
    std::uint32_t index;
    if (!s.free_.empty()) {
      index = s.free_.back();
      s.free_.pop_back();
    } else {
      index = static_cast<std::uint32_t>(s.containers_.size());
      s.containers_.emplace_back();
    }
    auto& c = s.containers_[index];
    c.kind = k;
    c.offset = op_offset;
    return make(t_container, index);
  }
  [[gnu::always_inline]] void push(std::uint64_t v) {
    if (stack.size() >= limits.max_stack)
      stack_too_deep();
    // Memo fetches make no value (count() does not look) yet grow the stack.
    if (stack.size() >= next_stack_check) [[unlikely]] {
      next_stack_check = stack.size() + footprint_interval;
      check_footprint();
    }
    stack.push_back(v);
  }
  [[nodiscard]] std::size_t floor() const { return marks.empty() ? 0 : marks.back(); }
  std::uint64_t pop() {
    if (stack.size() <= floor())
      empty_stack();
    const auto v = stack.back();
    stack.pop_back();
    return v;
  }
  [[nodiscard]] std::uint64_t top() const {
    if (stack.size() <= floor())
      empty_stack();
    return stack.back();
  }
  std::size_t pop_mark() {
    if (marks.empty())
      fail(codes::malformed_pickle, "malformed pickle", fmt::format("{} without a MARK", opname()));
    const auto m = marks.back();
    marks.pop_back();
    return m;
  }
  [[nodiscard]] kind kind_of(std::uint64_t v) const noexcept { return snap_value(&s, v, 0).kind(); }
  snap_stream::container& container_of(std::uint64_t v, kind expected) {
    if (tag_of(v) == t_block && expected == kind::dict)
      return promote(v);
    if (tag_of(v) != t_container || s.containers_[payload_of(v)].converted ||
        s.containers_[payload_of(v)].kind != expected)
      wrong_target(v, expected);
    return s.containers_[payload_of(v)];
  }
  void grow(const snap_stream::container& c, std::size_t extra) {
    if (c.run_count + c.items.size() + extra > limits.max_container)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("a container with more than {} items", limits.max_container));
    s.live_items_ += extra;
    // Items that are memo fetches make no value either (count() does not look).
    if (s.live_items_ >= next_items_check) [[unlikely]] {
      next_items_check = s.live_items_ + footprint_interval;
      check_footprint();
    }
  }
  // Stored into a container: a container so stored more than once is shared.
  std::uint64_t stored(std::uint64_t v) {
    if (tag_of(v) == t_container)
      ++s.containers_[payload_of(v)].refs;
    return v;
  }

  // A block record the pickle goes on to change (SETITEM on it): the dict it was, for good.
  snap_stream::container& promote(std::uint64_t block);
  [[noreturn, gnu::cold, gnu::noinline]] void wrong_target(std::uint64_t v, kind expected);
  // An item appended to a list: a trace entry dict becomes a row.
  std::uint64_t list_item(std::uint64_t v);
  static void append_to(snap_stream::container& list, std::uint64_t item);
  void append_items(std::size_t mark, kind k);
  void set_items(std::size_t mark);
  void entry_now();
  void build_from_mark(kind k, std::size_t mark);
  void build_tuple(std::size_t n);

  // The shape of nearly every trace entry, read in one go: EMPTY_DICT, a memo put, MARK, then keys
  // fetched from the memo with small ints, None or memo fetches as values, then SETITEMS. A
  // trace entry about to be appended becomes its row at once, with no dict made; anything else
  // becomes the dict the opcodes would build. False (nothing consumed) for other shapes, which
  // the opcodes then read one by one.
  bool flat_dict();
  void flat_containers(std::uint64_t ints);
  bool flat_block(std::uint64_t ints, std::size_t n);
  /// Less input left in the window than a flat dict's read wants, with more in the file.
  [[nodiscard]] bool window_short() const noexcept {
    const auto have = s.end_ - s.pos_;
    return have < flat_window && left() > have;
  }
  /// The EMPTY_DICT of the next dict taken, as run() takes it, where one is next and the window
  /// holds it as flat_dict() wants; false, having taken nothing, otherwise.
  bool next_dict() noexcept {
    if (s.pos_ == s.end_ || s.data_[s.pos_] != '}' || window_short())
      return false;
    op_offset = s.position();
    ++s.pos_;
    return true;
  }
  /// Trace entries of a batch read by slots, the first at hand (see snapshot_machine.cpp).
  bool rows_by_slots();
  /// Blocks of a batch read by scanned_block, the first at hand (see snapshot_machine.cpp).
  bool blocks_by_scan();
  /// A dict about to go into a list (block_next) read by snap_stream::scan_block: its block
  /// record, as flat_dict would make it after scan_flat_dict. False (nothing consumed) otherwise.
  bool scanned_block();
  /// A block record on the stack and in the memo where the dict went (and a t_empty where its
  /// own empty frames list went, at `list_memo`), its `n` bytes consumed.
  void put_block(std::uint64_t block, std::uint64_t ints, std::uint64_t memo,
                 std::optional<std::uint64_t> list_memo, std::size_t n);
  block_items block_scratch;
  [[nodiscard]] bool block_next() const noexcept;
  // A value pushed now is appended to a list next, in order: the open MARK sits on a list and
  // nothing but rows is above it (so rows keep the order the list gives them; a dict above
  // the MARK becomes its row only when the list takes it).
  [[nodiscard]] bool next_in_batch() const noexcept;

  // A string or int of `bytes` about to be copied: one of a MiB or more is held to the budget
  // at once (one value, so count() would not look).
  void big_value(std::uint64_t bytes) {
    if (bytes >= (std::uint64_t{1} << 20))
      s.check_footprint(op_offset, bytes + stack.capacity() * sizeof(std::uint64_t));
  }
  void push_string(kind k, std::uint64_t len);
  void push_long(std::uint64_t n);
  [[gnu::always_inline]] void memo_put(std::uint64_t index) {
    // Python numbers the memo densely; refuse far-off indices rather than allocating for them.
    auto& memo = s.memo_;
    if (index > memo.size() + 4096 || index >= limits.max_values)
      memo_out_of_range(index);
    const auto v = top();
    if (index < memo.size())
      ++s.memo_overwrites_; // a key fetched from this slot may fetch something else now
    if (!memo.set(index, v))
      fail(codes::pickle_limit, "pickle over limit", "more than 2^28 memoized values of 64 bits");
    if (tag_of(v) == t_container) {
      auto& c = s.containers_[payload_of(v)];
      // Put twice: the slot named first would outlive the container were it freed as held
      // by nothing else, so it counts as shared.
      if (c.memo != none32 && c.memo != index)
        c.refs += 2;
      c.memo = static_cast<std::uint32_t>(index);
    }
  }
  void memo_get(std::uint64_t index) {
    std::uint64_t v = 0;
    if (!s.memo_.find(index, v))
      fail(codes::bad_memo, "malformed pickle",
           fmt::format("memo index {} was never stored", index));
    // Fetched again: whatever holds it now, it is shared.
    if (tag_of(v) == t_container)
      s.containers_[payload_of(v)].refs += 2;
    else if (tag_of(v) == t_block)
      s.block_fetched_ = true;
    push(v);
  }
  std::uint64_t parse_decimal(std::string_view text);
  void open_mark() {
    if (marks.size() >= limits.max_mark_depth)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("MARKs nested deeper than {}", limits.max_mark_depth));
    marks.push_back(stack.size());
  }
  void append_one();
  void set_one();
  [[noreturn]] void refuse() const;

  // Scalars and strings; false when `op` is not one of them.
  bool scalar_op();

  // Containers, the stack, the memo; false when `op` is not one of them.
  bool structure_op();

  bool memo_op();

  void run();
};

} // namespace tdiag::trace::detail
