// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one JSON reader of tensordiag: simdjson On Demand turned into a small tree whose every
// value knows its byte offset, so that any error (bad syntax, a wrong type, a wrong schema
// version) names "FILE:LINE:COL: what is wrong". Nesting is bounded before anything recurses.
// json_out.hpp is the matching writer. Internal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::detail {

struct text_position {
  std::size_t offset = 0; ///< 0-based byte offset
  std::size_t line = 1;   ///< 1-based
  std::size_t column = 1; ///< 1-based, in bytes
};

/// The line and column of byte `offset` (clamped to the text's size).
[[nodiscard]] text_position position_of(std::string_view text, std::size_t offset) noexcept;

/// How errors about one JSON text are reported: the input_error's code, title and hint, and the
/// source name that starts the message.
struct json_source {
  std::string_view name;
  std::string_view code;
  std::string_view title;
  std::string_view hint;
};

/// One JSON value. Object members keep the document's order; duplicate names are refused.
struct json_value {
  enum class kind : std::uint8_t {
    null,
    boolean,
    integer,
    unsigned_integer,
    floating,
    string,
    array,
    object
  };

  kind type = kind::null;
  std::size_t offset = 0;             ///< where the value starts in the text
  bool boolean = false;               ///< kind::boolean
  std::int64_t integer = 0;           ///< kind::integer
  std::uint64_t unsigned_integer = 0; ///< kind::unsigned_integer: above INT64_MAX
  double floating = 0;                ///< kind::floating
  std::string string;                 ///< kind::string, decoded
  std::vector<json_value> items;      ///< array elements, or object member values
  std::vector<std::string> names;     ///< object member names, parallel to `items`

  [[nodiscard]] bool is_object() const noexcept { return type == kind::object; }
  [[nodiscard]] bool is_array() const noexcept { return type == kind::array; }
  [[nodiscard]] bool is_string() const noexcept { return type == kind::string; }
  /// The member `name` of an object, or nullptr.
  [[nodiscard]] const json_value* find(std::string_view name) const noexcept;
  /// The member `name` or element `index`; a null value where there is none.
  [[nodiscard]] const json_value& operator[](std::string_view name) const noexcept;
  [[nodiscard]] const json_value& operator[](std::size_t index) const noexcept;
  [[nodiscard]] std::size_t size() const noexcept { return items.size(); }
  [[nodiscard]] auto begin() const noexcept { return items.begin(); }
  [[nodiscard]] auto end() const noexcept { return items.end(); }
  /// Numbers of any kind as int64 (unsigned ones wrap), uint64 or double; 0 for non-numbers.
  [[nodiscard]] std::int64_t as_int() const noexcept;
  [[nodiscard]] std::uint64_t as_uint() const noexcept {
    return static_cast<std::uint64_t>(as_int());
  }
  [[nodiscard]] double as_double() const noexcept;
  /// A string equal to `text`; an integer equal to `n`.
  [[nodiscard]] bool operator==(std::string_view text) const noexcept {
    return type == kind::string && string == text;
  }
  [[nodiscard]] bool operator==(const char* text) const noexcept {
    return *this == std::string_view(text);
  }
  [[nodiscard]] bool operator==(std::int64_t n) const noexcept {
    return (type == kind::integer || type == kind::unsigned_integer) && as_int() == n;
  }
  [[nodiscard]] bool operator==(int n) const noexcept { return *this == std::int64_t{n}; }
  /// "an object", "a string", "an integer", ... for messages.
  [[nodiscard]] std::string_view kind_name() const noexcept;
};

/// Nesting deeper than this many arrays and objects is refused by default.
inline constexpr std::size_t json_max_depth = 64;

/// Parses `text` as exactly one JSON document (white space around it allowed).
/// Throws tdiag::input_error with `source`'s code, title and hint and the message
/// "NAME:LINE:COL: what" for empty input, bad syntax, invalid UTF-8, a number out of range,
/// nesting deeper than `max_depth`, duplicate member names and trailing content.
[[nodiscard]] json_value parse_json(std::string_view text, const json_source& source,
                                    std::size_t max_depth = json_max_depth);

/// Throws tdiag::input_error with `source`'s code, title and hint and the one-line message
/// "NAME:LINE:COL: what" for byte `offset` of `text`; the diagnostic's location names the file,
/// line and column and its field "byte" the offset. Control characters are escaped.
[[noreturn]] void throw_json_error(const json_source& source, std::string_view text,
                                   std::size_t offset, std::string_view what);

/// `text` on one printable line: control characters and invalid UTF-8 bytes as \xNN.
[[nodiscard]] std::string printable(std::string_view text);

} // namespace tdiag::detail
