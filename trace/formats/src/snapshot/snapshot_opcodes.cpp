// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The opcodes of snap_stream (snapshot_stream.hpp): the same subset and refusals as
// pickle_reader.hpp, over chunked input and 8-byte handles.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include "pickle_opcodes.hpp"
#include "snapshot_machine.hpp"

namespace tdiag::trace::detail {

std::uint64_t snap_machine::parse_decimal(std::string_view text) {
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

[[noreturn]] void snap_machine::refuse() const {
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
bool snap_machine::scalar_op() {
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
bool snap_machine::structure_op() {
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

bool snap_machine::memo_op() {
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

void snap_machine::run() {
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

void snap_stream::run() {
  snap_machine m{*this, limits_, 0, 0, 0, {}, {}};
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
