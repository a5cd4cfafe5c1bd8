// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one JSON writer of tensordiag, deterministic: members in the order written; pretty
// (two-space indentation, one trailing newline) for reports and SARIF, so that the same report
// always gives the same bytes (which is what makes JSON round-trips byte-for-byte), or compact
// (no white space, no newline) for JSON Lines and machine output. json_in.hpp is the matching
// reader. Internal.
#pragma once

#include <tensordiag/core/report.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::detail {

/// Appends `text` as a JSON string literal. Control characters are escaped; invalid UTF-8 bytes
/// become U+FFFD, so the output is always valid JSON.
void append_json_string(std::string& out, std::string_view text);

/// Shortest text that reads back as the same double and as a float, never an integer: 1 gives
/// "1.0", 2.5e-7 gives "2.5e-07". Precondition: `value` is finite.
[[nodiscard]] std::string format_json_double(double value);

enum class json_style : bool {
  pretty,  ///< `{\n  "a": [1, 2]\n}\n`
  compact, ///< `{"a":[1,2]}`
};

/// Streams one JSON document. Calls must nest properly (TDIAG_DETAIL_ASSERT checks it in debug).
class json_out {
public:
  explicit json_out(json_style style = json_style::pretty) noexcept : style_(style) {}

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The next member's name; the next call writes its value.
  void key(std::string_view name);

  void string(std::string_view text);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  void number(double value); ///< precondition: finite
  void boolean(bool value);
  void null();
  /// A field value, inline: `17`, `2.5`, `"x"`, `[3, 0, 0]`; a non-finite float is written as
  /// `{"float": "nan"}` (or "inf", "-inf"), the encoding report.hpp documents.
  void field(const field_value& value);
  /// A value already rendered as compact JSON (e.g. `[3, 0, 0]`), written inline.
  void raw(std::string_view json);

  /// Shorthands for `key(name); string(text)` and friends.
  void member(std::string_view name, std::string_view text) { key(name), string(text); }
  void member(std::string_view name, std::int64_t value) { key(name), integer(value); }

  /// A newline before the next value, closing bracket or the end of the document: compact
  /// output that stays readable line by line (one Chrome trace event per line).
  void line_break() noexcept { line_break_ = true; }

  /// For documents streamed in pieces: the bytes written so far, and dropping them once they
  /// have been stored elsewhere (the document goes on where it was).
  [[nodiscard]] std::string_view written() const noexcept { return out_; }
  void discard_written() noexcept { out_.clear(); }

  /// The document; pretty documents end with a newline. The writer is empty afterwards.
  [[nodiscard]] std::string take();

private:
  struct level {
    bool object;
    bool empty;
  };
  void before_value();
  void close(char bracket);
  void newline_indent();
  void pending_line_break();

  json_style style_;
  std::string out_;
  std::vector<level> levels_;
  bool after_key_ = false;
  bool line_break_ = false;
};

} // namespace tdiag::detail
