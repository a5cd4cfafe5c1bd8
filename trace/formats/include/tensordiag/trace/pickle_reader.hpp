// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A safe, bounded reader for the plain-data subset of Python pickles (protocols 2-5) that
// PyTorch memory snapshots use: dicts, lists, tuples, sets, str, bytes, ints (including LONG1 /
// LONG4), floats, bools and None, with the memo honoured so shared objects stay shared. Every
// opcode that could name or call code (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
// NEWOBJ_EX, EXT1/2/4, PERSID, BINPERSID, out-of-band buffers) is refused with an error naming
// the opcode and its byte offset. Files are read in chunks, not whole.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tdiag::trace {

namespace detail {
class snap_stream;
class snap_value;
} // namespace detail

/// Bounds on what one pickle may make the reader allocate. Exceeding one throws
/// tdiag::input_error (TDIAG-TR-104) naming the limit and the byte offset.
struct pickle_limits {
  std::size_t max_bytes = std::size_t{1} << 36;     ///< input size (64 GiB)
  std::size_t max_values = std::size_t{1} << 31;    ///< objects created (memo gets are free)
  std::size_t max_stack = std::size_t{1} << 24;     ///< pickle machine stack entries
  std::size_t max_mark_depth = 1024;                ///< nested MARKs (open tuples, batches)
  std::size_t max_container = std::size_t{1} << 30; ///< items in one list/dict/set
  /// Nesting of containers in the result. 0 checks neither nesting nor cycles, for a consumer
  /// that walks a fixed shape and never recurses (that pass costs a tenth of a small parse).
  std::size_t max_depth = 256;
};

enum class pickle_kind : std::uint8_t {
  none,
  boolean,
  integer,     ///< fits in std::int64_t
  big_integer, ///< LONG1/LONG4 wider than 64 bits (two's complement, little-endian bytes)
  floating,
  string,
  bytes,
  list,
  tuple,
  dict,
  set,
};

/// "None", "bool", "int", ... as Python names them.
[[nodiscard]] std::string_view to_string(pickle_kind kind) noexcept;

class pickle_document;

/// A handle to one value of a pickle_document; cheap to copy, valid while the document lives.
/// Values reached through the memo share one id(), so a consumer can cache work per object
/// (e.g. intern a shared traceback once).
class pickle_value {
public:
  pickle_value() = default;
  [[nodiscard]] pickle_kind kind() const noexcept;
  [[nodiscard]] std::uint32_t id() const noexcept;
  /// The object itself, unhashed: equal exactly for values reached through one object (a memo
  /// fetch) and for equal inline scalars; 0 for an invalid value.
  [[nodiscard]] std::uint64_t identity() const noexcept { return doc_ ? handle_ : 0; }
  /// Byte offset of the opcode that created the value (for error messages).
  [[nodiscard]] std::uint64_t offset() const noexcept;
  [[nodiscard]] bool valid() const noexcept { return doc_ != nullptr; }

  [[nodiscard]] bool is_none() const noexcept { return kind() == pickle_kind::none; }
  [[nodiscard]] bool is_int() const noexcept { return kind() == pickle_kind::integer; }
  [[nodiscard]] bool is_string() const noexcept { return kind() == pickle_kind::string; }
  [[nodiscard]] bool is_dict() const noexcept { return kind() == pickle_kind::dict; }
  /// list, tuple or set
  [[nodiscard]] bool is_sequence() const noexcept;

  // Typed accessors: return nullopt when the kind does not match (no conversions except
  // bool -> int, int -> double, and big_integer -> uint64 when it fits).
  [[nodiscard]] std::optional<bool> as_bool() const noexcept;
  [[nodiscard]] std::optional<std::int64_t> as_int() const noexcept;
  [[nodiscard]] std::optional<std::uint64_t> as_uint() const noexcept;
  [[nodiscard]] std::optional<double> as_double() const noexcept;
  /// str (and bytes) contents; nullopt for other kinds.
  [[nodiscard]] std::optional<std::string_view> as_string() const noexcept;

  /// Items of a list/tuple/set, or key-value pairs of a dict; 0 for scalars.
  [[nodiscard]] std::size_t size() const noexcept;
  /// Item `i` of a list/tuple/set (precondition: i < size()).
  [[nodiscard]] pickle_value at(std::size_t i) const noexcept;
  /// Key / value of the i-th pair of a dict (precondition: is_dict() and i < size()).
  [[nodiscard]] pickle_value key(std::size_t i) const noexcept;
  [[nodiscard]] pickle_value value(std::size_t i) const noexcept;
  /// The value for string key `name` in a dict; an invalid value when absent or not a dict.
  [[nodiscard]] pickle_value find(std::string_view name) const noexcept;
  /// fn(value) for each item of a list/tuple/set, in order; nothing for other kinds. Cheaper
  /// than at() over size() where a reader walks every item.
  template <typename Fn> void for_each_element(Fn&& fn) const {
    visit(false, &forward_item<Fn>, &fn);
  }
  /// fn(key, value) for each pair of a dict, in order: a str or bytes key as its contents (as
  /// find() matches them), any other key as ""; nothing for other kinds.
  template <typename Fn> void for_each_item(Fn&& fn) const { visit(true, &forward_item<Fn>, &fn); }

private:
  using item_fn = void (*)(void* fn, std::string_view key, const pickle_value& value);
  template <typename Fn>
  static void forward_item(void* fn, std::string_view key, const pickle_value& value) {
    auto& f = *static_cast<std::remove_reference_t<Fn>*>(fn);
    if constexpr (std::is_invocable_v<Fn&, std::string_view, const pickle_value&>)
      f(key, value);
    else
      f(value);
  }
  void visit(bool pairs, item_fn fn, void* context) const;
  friend class pickle_document;
  pickle_value(const pickle_document* doc, std::uint64_t handle, std::uint64_t where) noexcept
      : doc_(doc), handle_(handle), where_(where) {}
  pickle_value(const pickle_document* doc, const detail::snap_value& v) noexcept;
  [[nodiscard]] detail::snap_value view() const noexcept;
  const pickle_document* doc_ = nullptr;
  std::uint64_t handle_ = 0; ///< the reader's value handle (snapshot_stream.hpp)
  std::uint64_t where_ = 0;  ///< byte offset of the container holding an inline value
};

/// The result of reading one pickle: its values (strings copied out of the input).
class pickle_document {
public:
  /// Parses `bytes` (strings are copied out; the bytes may go after). Throws tdiag::input_error
  /// with code TDIAG-TR-1NN and fields `offset` and `opcode` on anything malformed, truncated,
  /// unsafe or over a limit. `source_name` names the input in messages.
  static pickle_document parse(std::string_view bytes, std::string_view source_name = "<pickle>",
                               const pickle_limits& limits = {});
  /// Reads a file and parses it; an unreadable file is an input_error too.
  static pickle_document read_file(const std::filesystem::path& path,
                                   const pickle_limits& limits = {});

  [[nodiscard]] pickle_value root() const noexcept;
  [[nodiscard]] std::size_t value_count() const noexcept;
  [[nodiscard]] std::size_t byte_size() const noexcept;
  [[nodiscard]] int protocol() const noexcept;
  [[nodiscard]] const std::string& source_name() const noexcept;

  pickle_document(pickle_document&&) noexcept;
  pickle_document& operator=(pickle_document&&) noexcept;
  ~pickle_document();

private:
  friend class pickle_value;
  pickle_document();
  // The same streaming machine the snapshot importer runs, with no entry turned into a row.
  std::unique_ptr<detail::snap_stream> stream_;
};

} // namespace tdiag::trace
