// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/pickle_reader.hpp>

#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <fstream>

namespace tdiag::trace {
namespace {

using kind = pickle_kind;

// Opcode names for messages; the ones we accept and the ones we refuse alike.
std::string_view opcode_name(std::uint8_t op) noexcept {
  switch (op) {
  case 0x80:
    return "PROTO";
  case 0x95:
    return "FRAME";
  case '.':
    return "STOP";
  case 'N':
    return "NONE";
  case 0x88:
    return "NEWTRUE";
  case 0x89:
    return "NEWFALSE";
  case 'J':
    return "BININT";
  case 'K':
    return "BININT1";
  case 'M':
    return "BININT2";
  case 0x8a:
    return "LONG1";
  case 0x8b:
    return "LONG4";
  case 'G':
    return "BINFLOAT";
  case 0x8c:
    return "SHORT_BINUNICODE";
  case 'X':
    return "BINUNICODE";
  case 0x8d:
    return "BINUNICODE8";
  case 'U':
    return "SHORT_BINSTRING";
  case 'T':
    return "BINSTRING";
  case 'C':
    return "SHORT_BINBYTES";
  case 'B':
    return "BINBYTES";
  case 0x8e:
    return "BINBYTES8";
  case 0x96:
    return "BYTEARRAY8";
  case '}':
    return "EMPTY_DICT";
  case ']':
    return "EMPTY_LIST";
  case ')':
    return "EMPTY_TUPLE";
  case 0x8f:
    return "EMPTY_SET";
  case 0x90:
    return "ADDITEMS";
  case 0x91:
    return "FROZENSET";
  case '(':
    return "MARK";
  case '0':
    return "POP";
  case '1':
    return "POP_MARK";
  case '2':
    return "DUP";
  case 'a':
    return "APPEND";
  case 'e':
    return "APPENDS";
  case 'l':
    return "LIST";
  case 'd':
    return "DICT";
  case 's':
    return "SETITEM";
  case 'u':
    return "SETITEMS";
  case 't':
    return "TUPLE";
  case 0x85:
    return "TUPLE1";
  case 0x86:
    return "TUPLE2";
  case 0x87:
    return "TUPLE3";
  case 'p':
    return "PUT";
  case 'q':
    return "BINPUT";
  case 'r':
    return "LONG_BINPUT";
  case 'g':
    return "GET";
  case 'h':
    return "BINGET";
  case 'j':
    return "LONG_BINGET";
  case 0x94:
    return "MEMOIZE";
  case 'c':
    return "GLOBAL";
  case 0x93:
    return "STACK_GLOBAL";
  case 'R':
    return "REDUCE";
  case 'b':
    return "BUILD";
  case 'i':
    return "INST";
  case 'o':
    return "OBJ";
  case 0x81:
    return "NEWOBJ";
  case 0x92:
    return "NEWOBJ_EX";
  case 0x82:
    return "EXT1";
  case 0x83:
    return "EXT2";
  case 0x84:
    return "EXT4";
  case 'P':
    return "PERSID";
  case 'Q':
    return "BINPERSID";
  case 0x97:
    return "NEXT_BUFFER";
  case 0x98:
    return "READONLY_BUFFER";
  case 'I':
    return "INT";
  case 'L':
    return "LONG";
  case 'F':
    return "FLOAT";
  case 'S':
    return "STRING";
  case 'V':
    return "UNICODE";
  default:
    return "";
  }
}

bool is_code_opcode(std::uint8_t op) noexcept {
  switch (op) {
  case 'c':
  case 0x93:
  case 'R':
  case 'b':
  case 'i':
  case 'o':
  case 0x81:
  case 0x92:
  case 0x82:
  case 0x83:
  case 0x84:
  case 'P':
  case 'Q':
  case 0x97:
  case 0x98:
    return true;
  default:
    return false;
  }
}

} // namespace

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

std::string_view to_string(pickle_kind k) noexcept {
  switch (k) {
  case kind::none:
    return "None";
  case kind::boolean:
    return "bool";
  case kind::integer:
    return "int";
  case kind::big_integer:
    return "int";
  case kind::floating:
    return "float";
  case kind::string:
    return "str";
  case kind::bytes:
    return "bytes";
  case kind::list:
    return "list";
  case kind::tuple:
    return "tuple";
  case kind::dict:
    return "dict";
  case kind::set:
    return "set";
  }
  return "?";
}

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

std::string read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    diagnostic d;
    d.code = codes::cannot_open;
    d.title = "cannot read file";
    d.message = fmt::format("{}: cannot open for reading", path.string());
    d.add_field("file", path.string());
    throw input_error(std::move(d));
  }
  // One read of the known size (istreambuf_iterator goes byte by byte).
  in.seekg(0, std::ios::end);
  std::string bytes(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

pickle_document pickle_document::read_file(const std::filesystem::path& path,
                                           const pickle_limits& limits) {
  return parse(read_file_bytes(path), path.string(), limits);
}

// --- pickle_value ---------------------------------------------------------------------------

pickle_kind pickle_value::kind() const noexcept {
  return doc_ ? doc_->nodes_[index_].kind : pickle_kind::none;
}
std::uint64_t pickle_value::offset() const noexcept {
  return doc_ ? doc_->nodes_[index_].offset : 0;
}
bool pickle_value::is_sequence() const noexcept {
  const auto k = kind();
  return k == pickle_kind::list || k == pickle_kind::tuple || k == pickle_kind::set;
}

std::optional<bool> pickle_value::as_bool() const noexcept {
  if (kind() != pickle_kind::boolean || !doc_)
    return std::nullopt;
  return doc_->nodes_[index_].payload != 0;
}
std::optional<std::int64_t> pickle_value::as_int() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::integer || n.kind == pickle_kind::boolean)
    return static_cast<std::int64_t>(n.payload);
  return std::nullopt;
}
std::optional<std::uint64_t> pickle_value::as_uint() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::integer || n.kind == pickle_kind::boolean) {
    if (static_cast<std::int64_t>(n.payload) < 0)
      return std::nullopt;
    return n.payload;
  }
  if (n.kind == pickle_kind::big_integer) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(doc_->bytes_.data()) + n.payload;
    if ((p[n.aux - 1] & 0x80) != 0)
      return std::nullopt; // negative
    for (std::size_t i = 8; i < n.aux; ++i)
      if (p[i] != 0)
        return std::nullopt; // wider than 64 bits
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < 8; ++i)
      v |= std::uint64_t{p[i]} << (8 * i);
    return v;
  }
  return std::nullopt;
}
std::optional<double> pickle_value::as_double() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind == pickle_kind::floating)
    return std::bit_cast<double>(n.payload);
  if (n.kind == pickle_kind::integer)
    return static_cast<double>(static_cast<std::int64_t>(n.payload));
  if (auto u = as_uint())
    return static_cast<double>(*u);
  return std::nullopt;
}
std::optional<std::string_view> pickle_value::as_string() const noexcept {
  if (!doc_)
    return std::nullopt;
  const auto& n = doc_->nodes_[index_];
  if (n.kind != pickle_kind::string && n.kind != pickle_kind::bytes)
    return std::nullopt;
  return std::string_view(doc_->bytes_.data() + n.payload, n.aux);
}

std::size_t pickle_value::size() const noexcept {
  if (!doc_)
    return 0;
  const auto& n = doc_->nodes_[index_];
  if (n.kind < pickle_kind::list)
    return 0;
  const auto count = doc_->containers_[n.aux].size();
  return n.kind == pickle_kind::dict ? count / 2 : count;
}
pickle_value pickle_value::at(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][i]};
}
pickle_value pickle_value::key(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][2 * i]};
}
pickle_value pickle_value::value(std::size_t i) const noexcept {
  return {doc_, doc_->containers_[doc_->nodes_[index_].aux][2 * i + 1]};
}
pickle_value pickle_value::find(std::string_view name) const noexcept {
  if (!doc_ || kind() != pickle_kind::dict)
    return {};
  const auto& items = doc_->containers_[doc_->nodes_[index_].aux];
  // Backwards: with a repeated key, Python keeps the last value.
  for (std::size_t i = items.size() & ~std::size_t{1}; i >= 2;) {
    i -= 2;
    const auto& k = doc_->nodes_[items[i]];
    if (k.kind == pickle_kind::string && k.aux == name.size() &&
        std::memcmp(doc_->bytes_.data() + k.payload, name.data(), name.size()) == 0)
      return {doc_, items[i + 1]};
  }
  return {};
}

} // namespace tdiag::trace
