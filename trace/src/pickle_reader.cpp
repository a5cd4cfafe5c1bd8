// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <fmt/format.h>

#include <bit>
#include <cstring>

#include "pickle_opcodes.hpp"

namespace tdiag::trace {
namespace {
using kind = pickle_kind;
} // namespace
using detail::is_code_opcode;
using detail::opcode_name;

// The pickle machine. A struct (not a function) so that it can reach pickle_document's
// internals through the friend declaration.
struct pickle_parser {
  pickle_parser(pickle_document& d, const pickle_limits& l) : doc(d), limits(l) {}
  pickle_document& doc;
  const pickle_limits& limits;
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  std::size_t pos = 0;
  std::size_t op_offset = 0;
  std::uint8_t op = 0;
  std::vector<std::uint32_t> stack;
  std::vector<std::size_t> marks;
  std::vector<std::uint32_t> memo;
  static constexpr std::uint32_t no_entry = 0xffffffffu;

  [[noreturn]] void fail(std::string_view code, std::string_view title, std::string message,
                         std::string hint = {}) const {
    diagnostic d;
    d.code = code;
    d.title = std::string(title);
    d.message = fmt::format("{}: byte offset {}: {}", doc.source_, op_offset, message);
    d.add_field("file", doc.source_);
    d.add_field("offset", static_cast<std::int64_t>(op_offset));
    const auto name = opcode_name(op);
    d.add_field("opcode", name.empty() ? fmt::format("0x{:02x}", op) : std::string(name));
    d.hint = std::move(hint);
    throw input_error(std::move(d));
  }

  [[noreturn]] void truncated(std::size_t needed) const {
    fail(codes::truncated_pickle, "truncated pickle",
         fmt::format("{} needs {} more byte(s) but the input ends at byte {}", opname(), needed,
                     size),
         "the file was cut short (an interrupted copy or dump?); re-create it");
  }

  [[nodiscard]] std::string opname() const {
    const auto name = opcode_name(op);
    return name.empty() ? fmt::format("opcode 0x{:02x}", op) : std::string(name);
  }

  const std::uint8_t* take(std::size_t n) {
    if (n > size - pos)
      truncated(n - (size - pos));
    const auto* p = data + pos;
    pos += n;
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
    const auto* begin = data + pos;
    const void* nl = std::memchr(begin, '\n', size - pos);
    if (nl == nullptr)
      truncated(1);
    const auto n = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - begin);
    pos += n + 1;
    return {reinterpret_cast<const char*>(begin), n};
  }

  std::uint32_t add(kind k, std::uint64_t payload, std::uint32_t aux = 0) {
    if (doc.nodes_.size() >= limits.max_values)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("more than {} values", limits.max_values));
    doc.nodes_.push_back({payload, op_offset, aux, k});
    return static_cast<std::uint32_t>(doc.nodes_.size() - 1);
  }
  std::uint32_t add_container(kind k) {
    doc.containers_.emplace_back();
    return add(k, 0, static_cast<std::uint32_t>(doc.containers_.size() - 1));
  }
  void push(std::uint32_t v) {
    if (stack.size() >= limits.max_stack)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("stack deeper than {}", limits.max_stack));
    stack.push_back(v);
  }
  std::size_t floor() const { return marks.empty() ? 0 : marks.back(); }
  std::uint32_t pop() {
    if (stack.size() <= floor())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} on an empty stack", opname()));
    const auto v = stack.back();
    stack.pop_back();
    return v;
  }
  std::uint32_t top() const {
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

  std::vector<std::uint32_t>& container_of(std::uint32_t v, kind expected, kind alt = kind::none) {
    const auto& n = doc.nodes_[v];
    if (n.kind != expected && (alt == kind::none || n.kind != alt))
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} applied to a {} (expected {})", opname(), to_string(n.kind),
                       to_string(expected)));
    return doc.containers_[n.aux];
  }
  void grow(std::vector<std::uint32_t>& items, std::size_t extra) {
    if (items.size() + extra > limits.max_container)
      fail(codes::pickle_limit, "pickle over limit",
           fmt::format("a container with more than {} items", limits.max_container));
  }

  void push_string(kind k, std::size_t len) {
    if (len > size - pos)
      truncated(len - (size - pos));
    if (len > 0xffffffffu)
      fail(codes::pickle_limit, "pickle over limit", "a string over 4 GiB");
    push(add(k, pos, static_cast<std::uint32_t>(len)));
    pos += len;
  }

  void push_long(std::size_t n) {
    const auto* p = take(n);
    if (n == 0)
      return push(add(kind::integer, 0));
    if (n <= 8) {
      std::uint64_t v = 0;
      for (std::size_t i = 0; i < n; ++i)
        v |= std::uint64_t{p[i]} << (8 * i);
      if (n < 8 && (p[n - 1] & 0x80) != 0)
        v |= ~std::uint64_t{0} << (8 * n); // sign-extend
      return push(add(kind::integer, v));
    }
    // Wider: keep the bytes; as_uint() accepts a 9-byte value with a zero top byte etc.
    if (n > 0xffffffffu)
      fail(codes::pickle_limit, "pickle over limit", "an integer over 4 GiB");
    push(add(kind::big_integer, static_cast<std::uint64_t>(p - data),
             static_cast<std::uint32_t>(n)));
  }

  void memo_put(std::uint64_t index) {
    // Python numbers the memo densely; refuse far-off indices rather than allocating for them.
    if (index > memo.size() + 4096 || index >= limits.max_values)
      fail(codes::bad_memo, "malformed pickle", fmt::format("memo index {} out of range", index));
    if (index >= memo.size())
      memo.resize(index + 1, no_entry);
    memo[index] = top();
  }
  void memo_get(std::uint64_t index) {
    if (index >= memo.size() || memo[index] == no_entry)
      fail(codes::bad_memo, "malformed pickle",
           fmt::format("memo index {} was never stored", index));
    push(memo[index]);
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

  void set_items(std::size_t mark) {
    const auto n = stack.size() - mark;
    if (n % 2 != 0)
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} with an odd item count", opname()));
    if (mark == 0 || stack.size() < mark)
      fail(codes::malformed_pickle, "malformed pickle", fmt::format("{} without a dict", opname()));
    auto& items = container_of(stack[mark - 1], kind::dict);
    grow(items, n);
    items.insert(items.end(), stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
    stack.resize(mark);
  }
  void append_items(std::size_t mark, kind k) {
    const auto n = stack.size() - mark;
    if (mark == 0 || mark <= floor())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} without a target", opname()));
    auto& items = container_of(stack[mark - 1], k);
    grow(items, n);
    items.insert(items.end(), stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
    stack.resize(mark);
  }
  void build_from_mark(kind k, std::size_t mark) {
    const auto v = add_container(k);
    auto& items = doc.containers_.back();
    grow(items, stack.size() - mark);
    items.assign(stack.begin() + static_cast<std::ptrdiff_t>(mark), stack.end());
    stack.resize(mark);
    push(v);
  }
  void build_tuple(std::size_t n) {
    if (stack.size() < floor() + n)
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("{} on a short stack", opname()));
    build_from_mark(kind::tuple, stack.size() - n);
  }

  void run() {
    bool stopped = false;
    while (!stopped) {
      op_offset = pos;
      op = *take(1);
      switch (op) {
      case 0x80: {
        const auto version = *take(1);
        if (version > 5)
          fail(codes::unsupported_pickle, "unsupported pickle",
               fmt::format("protocol {} (this reader knows 2 to 5)", version));
        doc.protocol_ = version;
        break;
      }
      case 0x95: {
        const auto frame = read_le(8);
        if (frame > size - pos)
          truncated(frame - (size - pos));
        break;
      }
      case '.':
        stopped = true;
        break;
      case 'N':
        push(add(kind::none, 0));
        break;
      case 0x88:
        push(add(kind::boolean, 1));
        break;
      case 0x89:
        push(add(kind::boolean, 0));
        break;
      case 'J':
        push(add(kind::integer, static_cast<std::uint64_t>(static_cast<std::int64_t>(
                                    static_cast<std::int32_t>(read_le(4))))));
        break;
      case 'K':
        push(add(kind::integer, read_le(1)));
        break;
      case 'M':
        push(add(kind::integer, read_le(2)));
        break;
      case 0x8a:
        push_long(read_le(1));
        break;
      case 0x8b: {
        const auto n = read_le(4);
        if (n > size - pos)
          truncated(n - (size - pos));
        push_long(n);
        break;
      }
      case 'G': {
        const auto* p = take(8);
        std::uint64_t bits = 0;
        for (int i = 0; i < 8; ++i)
          bits = (bits << 8) | p[i]; // big-endian
        push(add(kind::floating, bits));
        break;
      }
      case 0x8c:
        push_string(kind::string, read_le(1));
        break;
      case 'X':
        push_string(kind::string, read_le(4));
        break;
      case 0x8d:
        push_string(kind::string, read_le(8));
        break;
      case 'U':
        push_string(kind::string, read_le(1));
        break;
      case 'T':
        push_string(kind::string, read_le(4));
        break;
      case 'C':
        push_string(kind::bytes, read_le(1));
        break;
      case 'B':
        push_string(kind::bytes, read_le(4));
        break;
      case 0x8e:
        push_string(kind::bytes, read_le(8));
        break;
      case 0x96:
        push_string(kind::bytes, read_le(8));
        break;
      case '}':
        push(add_container(kind::dict));
        break;
      case ']':
        push(add_container(kind::list));
        break;
      case ')':
        push(add_container(kind::tuple));
        break;
      case 0x8f:
        push(add_container(kind::set));
        break;
      case '(':
        if (marks.size() >= limits.max_mark_depth)
          fail(codes::pickle_limit, "pickle over limit",
               fmt::format("MARKs nested deeper than {}", limits.max_mark_depth));
        marks.push_back(stack.size());
        break;
      case '0':
        if (stack.size() == floor() && !marks.empty())
          marks.pop_back();
        else
          pop();
        break;
      case '1':
        stack.resize(pop_mark());
        break;
      case '2':
        push(top());
        break;
      case 'a': {
        const auto item = pop();
        auto& items = container_of(top(), kind::list);
        grow(items, 1);
        items.push_back(item);
        break;
      }
      case 'e':
        append_items(pop_mark(), kind::list);
        break;
      case 0x90:
        append_items(pop_mark(), kind::set);
        break;
      case 'l':
        build_from_mark(kind::list, pop_mark());
        break;
      case 0x91:
        build_from_mark(kind::set, pop_mark());
        break;
      case 't':
        build_from_mark(kind::tuple, pop_mark());
        break;
      case 'd': {
        const auto mark = pop_mark();
        if ((stack.size() - mark) % 2 != 0)
          fail(codes::malformed_pickle, "malformed pickle", "DICT with an odd item count");
        build_from_mark(kind::dict, mark);
        break;
      }
      case 's': {
        const auto value = pop();
        const auto key = pop();
        auto& items = container_of(top(), kind::dict);
        grow(items, 2);
        items.push_back(key);
        items.push_back(value);
        break;
      }
      case 'u':
        set_items(pop_mark());
        break;
      case 0x85:
        build_tuple(1);
        break;
      case 0x86:
        build_tuple(2);
        break;
      case 0x87:
        build_tuple(3);
        break;
      case 'p':
        memo_put(parse_decimal(read_line()));
        break;
      case 'q':
        memo_put(read_le(1));
        break;
      case 'r':
        memo_put(read_le(4));
        break;
      case 0x94:
        memo_put(memo.size());
        break;
      case 'g':
        memo_get(parse_decimal(read_line()));
        break;
      case 'h':
        memo_get(read_le(1));
        break;
      case 'j':
        memo_get(read_le(4));
        break;
      default:
        if (is_code_opcode(op))
          fail(codes::unsafe_pickle, "unsafe pickle",
               fmt::format("{} would import or call code; only plain data (dicts, lists, tuples, "
                           "str, bytes, numbers, bools, None) is read",
                           opname()),
               "tensordiag never executes pickled code; convert the object to plain data first");
        fail(codes::unsupported_pickle, "unsupported pickle",
             fmt::format("{} is not part of the supported subset (binary protocols 2 to 5)",
                         opname()));
      }
    }
    if (stack.size() != 1 || !marks.empty())
      fail(codes::malformed_pickle, "malformed pickle",
           fmt::format("STOP leaves {} value(s) and {} open MARK(s); expected one value",
                       stack.size(), marks.size()));
    doc.root_ = stack.back();
  }

  // Rejects cycles and nesting beyond limits.max_depth, so recursive consumers are safe.
  void check_depth() {
    constexpr std::uint32_t unknown = 0, visiting = 0xffffffffu;
    std::vector<std::uint32_t> depth(doc.containers_.size(), unknown);
    struct frame {
      std::uint32_t container;
      std::size_t next;
      std::uint32_t best;
    };
    std::vector<frame> work;
    for (std::uint32_t start = 0; start < doc.containers_.size(); ++start) {
      if (depth[start] != unknown)
        continue;
      depth[start] = visiting;
      work.push_back({start, 0, 1});
      while (!work.empty()) {
        auto& f = work.back();
        const auto& items = doc.containers_[f.container];
        if (f.next == items.size()) {
          depth[f.container] = f.best;
          const auto done = f.best;
          work.pop_back();
          if (!work.empty())
            work.back().best = std::max(work.back().best, done + 1);
          continue;
        }
        const auto& child = doc.nodes_[items[f.next++]];
        if (child.kind < kind::list)
          continue;
        const auto c = child.aux;
        if (depth[c] == visiting) {
          op_offset = child.offset;
          op = 0x94;
          fail(codes::pickle_cycle, "unsafe pickle",
               "a container holds itself (a reference cycle through the memo)");
        }
        if (depth[c] != unknown) {
          f.best = std::max(f.best, depth[c] + 1);
          continue;
        }
        if (work.size() >= limits.max_depth) {
          op_offset = child.offset;
          fail(codes::pickle_limit, "pickle over limit",
               fmt::format("containers nested deeper than {}", limits.max_depth));
        }
        depth[c] = visiting;
        work.push_back({c, 0, 1});
      }
    }
  }
};

pickle_document pickle_document::parse(std::string bytes, std::string_view source_name,
                                       const pickle_limits& limits) {
  pickle_document doc;
  doc.bytes_ = std::move(bytes);
  doc.source_ = std::string(source_name);
  pickle_parser p(doc, limits);
  p.data = reinterpret_cast<const std::uint8_t*>(doc.bytes_.data());
  p.size = doc.bytes_.size();
  if (p.size > limits.max_bytes)
    p.fail(codes::pickle_limit, "pickle over limit",
           fmt::format("{} bytes is over the {}-byte limit", p.size, limits.max_bytes));
  if (p.size == 0)
    p.fail(codes::truncated_pickle, "truncated pickle", "the input is empty");
  // Every value costs at least one opcode byte, most two to nine: reserving up front saves the
  // copies (and page faults) of repeated growth on large snapshots.
  doc.nodes_.reserve(std::min(limits.max_values, p.size / 4 + 16));
  p.memo.reserve(std::min<std::size_t>(p.size / 16 + 16, std::size_t{1} << 26));
  p.run();
  p.check_depth();
  return doc;
}

pickle_document pickle_document::read_file(const std::filesystem::path& path,
                                           const pickle_limits& limits) {
  input_file in(path);
  return parse(in.read_all(), in.name(), limits);
}

} // namespace tdiag::trace
