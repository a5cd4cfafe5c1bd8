// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The opcodes of snap_stream (snapshot_stream.hpp): the same subset and refusals as
// pickle_reader.cpp, over chunked input and 8-byte handles.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "pickle_opcodes.hpp"
#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {
namespace {
using kind = pickle_kind;
using namespace snap;
constexpr std::size_t chunk_bytes = std::size_t{1} << 20;
} // namespace

void snap_stream::release(std::uint64_t index) {
  auto& c = containers_[index];
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
      memo_[c.memo] = make(is_stack ? t_stack : t_frame, id);
    release(index);
  } else {
    c.cached = id;
  }
}

// The pickle machine over a snap_stream. A struct so that it reaches the stream's internals.
struct snap_machine {
  snap_stream& s;
  const pickle_limits& limits;
  std::size_t op_offset = 0;
  std::uint8_t op = 0;
  std::uint64_t created = 0;
  std::vector<std::uint64_t> stack;
  std::vector<std::size_t> marks;
  snap_stream::flat_items scratch;

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

  void count() {
    if (++created > limits.max_values)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("more than {} values", limits.max_values));
  }
  std::uint64_t boxed(kind k, std::uint64_t payload, std::uint32_t aux = 0) {
    s.boxes_.push_back({payload, op_offset, aux, k});
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
  void push(std::uint64_t v) {
    if (stack.size() >= limits.max_stack)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("stack deeper than {}", limits.max_stack));
    stack.push_back(v);
  }
  [[nodiscard]] std::size_t floor() const { return marks.empty() ? 0 : marks.back(); }
  std::uint64_t pop() {
    if (stack.size() <= floor())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} on an empty stack", opname()));
    const auto v = stack.back();
    stack.pop_back();
    return v;
  }
  [[nodiscard]] std::uint64_t top() const {
    if (stack.size() <= floor())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} on an empty stack", opname()));
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
    if (tag_of(v) != t_container || s.containers_[payload_of(v)].converted ||
        s.containers_[payload_of(v)].kind != expected)
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} applied to a {} (expected {})", opname(), to_string(kind_of(v)),
                       to_string(expected)));
    return s.containers_[payload_of(v)];
  }
  void grow(const snap_stream::container& c, std::size_t extra) {
    if (c.run_count + c.items.size() + extra > limits.max_container)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("a container with more than {} items", limits.max_container));
  }
  // Stored into a container: a container so stored more than once is shared.
  std::uint64_t stored(std::uint64_t v) {
    if (tag_of(v) == t_container)
      ++s.containers_[payload_of(v)].refs;
    return v;
  }

  // An item appended to a list: a trace entry dict becomes a row.
  std::uint64_t list_item(std::uint64_t v) {
    if (tag_of(v) != t_container)
      return v;
    const auto index = payload_of(v);
    auto& c = s.containers_[index];
    if (c.converted)
      return make(t_row, c.cached);
    if (s.sink_ == nullptr || c.kind != kind::dict || !s.has_action(c.items))
      return stored(v);
    const bool exclusive = c.refs == 0;
    const auto row = s.sink_->entry(snap_value(&s, v, c.offset), exclusive);
    auto& after = s.containers_[index];
    if (exclusive) {
      if (after.memo != none32)
        s.memo_[after.memo] = make(t_row, row);
      s.release(index);
    } else {
      after.converted = true;
      after.cached = row;
    }
    return make(t_row, row);
  }
  static void append_to(snap_stream::container& list, std::uint64_t item) {
    if (tag_of(item) == t_row && list.items.empty() && list.run_count < none32 &&
        (list.run_count == 0 || payload_of(item) == list.run_first + list.run_count)) {
      if (list.run_count == 0)
        list.run_first = payload_of(item);
      ++list.run_count;
      return;
    }
    list.items.push_back(item);
  }
  void append_items(std::size_t mark, kind k) {
    const auto n = stack.size() - mark;
    if (mark == 0 || mark <= floor())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} without a target", opname()));
    const auto target = stack[mark - 1];
    grow(container_of(target, k), n);
    for (std::size_t i = mark; i < stack.size(); ++i) {
      const auto item = k == kind::list ? list_item(stack[i]) : stored(stack[i]);
      append_to(s.containers_[payload_of(target)], item);
    }
    stack.resize(mark);
  }
  void set_items(std::size_t mark) {
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
  }
  void build_from_mark(kind k, std::size_t mark) {
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
  void build_tuple(std::size_t n) {
    if (stack.size() < floor() + n)
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} on a short stack", opname()));
    build_from_mark(kind::tuple, stack.size() - n);
  }

  // The shape of nearly every trace entry, read in one go: EMPTY_DICT MEMOIZE MARK, then keys
  // fetched from the memo with small ints, None or memo fetches as values, then SETITEMS. A
  // trace entry about to be appended becomes its row at once, with no dict made; anything else
  // becomes the dict the opcodes would build. False (nothing consumed) for other shapes, which
  // the opcodes then read one by one.
  bool flat_dict() {
    std::uint64_t ints = 0;
    const auto n = s.scan_flat_dict(scratch, ints);
    if (n == 0)
      return false;
    created += ints;
    const auto kv = scratch.span();
    for (const auto item : kv)
      if (tag_of(item) == t_container)
        s.containers_[payload_of(item)].refs += 3; // fetched from the memo, then stored
    std::uint32_t row = 0;
    if (next_in_batch() && s.has_action(kv) && s.sink_->flat_entry(kv, op_offset, row)) {
      count();
      push(make(t_row, row));
    } else {
      const auto v = new_container(kind::dict);
      s.containers_[payload_of(v)].items.assign(kv.begin(), kv.end());
      push(v);
    }
    memo_put(s.memo_.size());
    s.pos_ += n;
    return true;
  }
  // A value pushed now is appended to a list next, in order: the open MARK sits on a list and
  // nothing but rows is above it (so rows keep the order the list gives them; a dict above
  // the MARK becomes its row only when the list takes it).
  [[nodiscard]] bool next_in_batch() const noexcept {
    if (s.sink_ == nullptr || marks.empty() || marks.back() == 0)
      return false;
    const auto target = stack[marks.back() - 1];
    if (tag_of(target) != t_container)
      return false;
    const auto& list = s.containers_[payload_of(target)];
    return list.kind == kind::list && !list.converted &&
           (stack.size() == marks.back() || tag_of(stack.back()) == t_row);
  }

  void push_string(kind k, std::uint64_t len) {
    if (len > left())
      truncated(len - left());
    if (len > 0xffffffffu)
      fail(codes::pickle_limit, "pickle over limit", "a string over 4 GiB");
    count();
    const auto* p = take(static_cast<std::size_t>(len));
    const auto at = s.arena_.size();
    s.arena_.append(reinterpret_cast<const char*>(p), static_cast<std::size_t>(len));
    push(boxed(k, at, static_cast<std::uint32_t>(len)));
  }
  void push_long(std::uint64_t n) {
    if (n > left())
      truncated(n - left());
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
  void memo_put(std::uint64_t index) {
    // Python numbers the memo densely; refuse far-off indices rather than allocating for them.
    auto& memo = s.memo_;
    if (index > memo.size() + 4096 || index >= limits.max_values)
      fail(codes::bad_memo, "malformed pickle", fmt::format("memo index {} out of range", index));
    if (index == memo.size())
      memo.push_back(0);
    else if (index > memo.size())
      memo.resize(index + 1, make(t_none, none32));
    const auto v = top();
    memo[index] = v;
    if (tag_of(v) == t_container)
      s.containers_[payload_of(v)].memo = static_cast<std::uint32_t>(index);
  }
  void memo_get(std::uint64_t index) {
    if (index >= s.memo_.size() || s.memo_[index] == make(t_none, none32))
      fail(codes::bad_memo, "malformed pickle",
           fmt::format("memo index {} was never stored", index));
    const auto v = s.memo_[index];
    // Fetched again: whatever holds it now, it is shared.
    if (tag_of(v) == t_container)
      s.containers_[payload_of(v)].refs += 2;
    push(v);
  }
  std::uint64_t parse_decimal(std::string_view text) {
    std::uint64_t v = 0;
    if (text.empty() || text.size() > 18)
      fail(codes::malformed_pickle, "malformed pickle", "bad decimal memo index");
    for (char c : text) {
      if (c < '0' || c > '9')
        fail(codes::malformed_pickle, "malformed pickle", "bad decimal memo index");
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
  }
  void open_mark() {
    if (marks.size() >= limits.max_mark_depth)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("MARKs nested deeper than {}", limits.max_mark_depth));
    marks.push_back(stack.size());
  }
  void append_one() {
    const auto item = pop();
    const auto target = top();
    grow(container_of(target, kind::list), 1);
    const auto v = list_item(item);
    append_to(s.containers_[payload_of(target)], v);
  }
  void set_one() {
    const auto value = pop();
    const auto key = pop();
    auto& c = container_of(top(), kind::dict);
    grow(c, 2);
    c.items.push_back(stored(key));
    c.items.push_back(stored(value));
  }
  [[noreturn]] void refuse() const {
    if (is_code_opcode(op))
      fail(codes::unsafe_pickle, "unsafe pickle",
           fmt::format("{} would import or call code; only plain data (dicts, lists, tuples, "
                       "str, bytes, numbers, bools, None) is read",
                       opname()),
           "tensordiag never executes pickled code; convert the object to plain data first");
    fail(codes::unsupported_pickle, "unsupported pickle",
         fmt::format("{} is not part of the supported subset (binary protocols 2 to 5)", opname()));
  }

  // Scalars and strings; false when `op` is not one of them.
  bool scalar_op() {
    switch (op) {
    case 'N':
      count();
      push(make(t_none, 0));
      return true;
    case 0x88:
    case 0x89:
      count();
      push(make(op == 0x88 ? t_true : t_false, 0));
      return true;
    case 'J':
      push(integer(static_cast<std::int32_t>(read_le(4))));
      return true;
    case 'K':
      push(integer(static_cast<std::int64_t>(read_le(1))));
      return true;
    case 'M':
      push(integer(static_cast<std::int64_t>(read_le(2))));
      return true;
    case 0x8a:
      push_long(read_le(1));
      return true;
    case 0x8b:
      push_long(read_le(4));
      return true;
    case 'G': {
      const auto* p = take(8);
      std::uint64_t bits = 0;
      for (int i = 0; i < 8; ++i)
        bits = (bits << 8) | p[i]; // big-endian
      count();
      push(boxed(kind::floating, bits));
      return true;
    }
    case 0x8c:
    case 'U':
      push_string(kind::string, read_le(1));
      return true;
    case 'X':
    case 'T':
      push_string(kind::string, read_le(4));
      return true;
    case 0x8d:
      push_string(kind::string, read_le(8));
      return true;
    case 'C':
      push_string(kind::bytes, read_le(1));
      return true;
    case 'B':
      push_string(kind::bytes, read_le(4));
      return true;
    case 0x8e:
    case 0x96:
      push_string(kind::bytes, read_le(8));
      return true;
    default:
      return false;
    }
  }

  // Containers, the stack, the memo; false when `op` is not one of them.
  bool structure_op() {
    switch (op) {
    case '}':
      push(new_container(kind::dict));
      return true;
    case ']':
      push(new_container(kind::list));
      return true;
    case ')':
      push(new_container(kind::tuple));
      return true;
    case 0x8f:
      push(new_container(kind::set));
      return true;
    case '(':
      open_mark();
      return true;
    case '0':
      if (stack.size() == floor() && !marks.empty())
        marks.pop_back();
      else
        pop();
      return true;
    case '1':
      stack.resize(pop_mark());
      return true;
    case '2':
      push(stored(top()));
      return true;
    case 'a':
      append_one();
      return true;
    case 'e':
      append_items(pop_mark(), kind::list);
      return true;
    case 0x90:
      append_items(pop_mark(), kind::set);
      return true;
    case 'l':
    case 0x91:
    case 't':
      build_from_mark(op == 'l' ? kind::list : op == 't' ? kind::tuple : kind::set, pop_mark());
      return true;
    case 'd': {
      const auto mark = pop_mark();
      if ((stack.size() - mark) % 2 != 0)
        fail(codes::malformed_pickle, "malformed pickle", "DICT with an odd item count");
      build_from_mark(kind::dict, mark);
      return true;
    }
    case 's':
      set_one();
      return true;
    case 'u':
      set_items(pop_mark());
      return true;
    case 0x85:
    case 0x86:
    case 0x87:
      build_tuple(op - 0x84u);
      return true;
    default:
      return false;
    }
  }

  bool memo_op() {
    switch (op) {
    case 'p':
      memo_put(parse_decimal(read_line()));
      return true;
    case 'q':
      memo_put(read_le(1));
      return true;
    case 'r':
      memo_put(read_le(4));
      return true;
    case 0x94:
      memo_put(s.memo_.size());
      return true;
    case 'g':
      memo_get(parse_decimal(read_line()));
      return true;
    case 'h':
      memo_get(read_le(1));
      return true;
    case 'j':
      memo_get(read_le(4));
      return true;
    default:
      return false;
    }
  }

  void run() {
    for (;;) {
      op_offset = s.position();
      op = *take(1);
      // The opcodes of nearly every trace entry first (memo fetches of its keys, its ints).
      if (op == 'h') {
        memo_get(read_le(1));
        continue;
      }
      if (op == '}' && flat_dict())
        continue;
      if (op == 'J' || op == 'K' || op == 0x8a || op == 'j' || op == 0x94) {
        if (!scalar_op())
          memo_op();
        continue;
      }
      if (op == '.')
        break;
      if (op == 0x80) {
        const auto version = *take(1);
        if (version > 5)
          fail(codes::unsupported_pickle, "unsupported pickle",
               fmt::format("protocol {} (this reader knows 2 to 5)", version));
        s.protocol_ = version;
      } else if (op == 0x95) {
        const auto frame = read_le(8);
        if (frame > left())
          truncated(frame - left());
      } else if (!scalar_op() && !structure_op() && !memo_op()) {
        refuse();
      }
    }
    if (stack.size() != 1 || !marks.empty())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("STOP leaves {} value(s) and {} open MARK(s); expected one value",
                       stack.size(), marks.size()));
    s.root_ = stack.back();
  }
};

void snap_stream::run() {
  snap_machine m{*this, limits_, 0, 0, 0, {}, {}, {}};
  if (total_ > limits_.max_bytes)
    m.fail(codes::pickle_limit, "pickle over limit",
           fmt::format("{} bytes is over the {}-byte limit", total_, limits_.max_bytes));
  if (total_ == 0)
    m.fail(codes::truncated_pickle, "truncated pickle", "the input is empty");
  // Reserved, not touched: pages never written are never resident, and the memo is not copied
  // as it grows (a snapshot memoizes one object per ~50 bytes).
  memo_.reserve(static_cast<std::size_t>(total_ / 16 + 16));
  m.run();
  created_ = m.created;
}

} // namespace tdiag::trace::detail
