// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/detail/utf8.hpp>

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <iterator>
#include <type_traits>
#include <variant>

namespace tdiag::detail {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  // Most text (keys, names, paths) is printable ASCII: copied as one piece. Only the rest is
  // decoded code point by code point.
  static constexpr auto plain = [] {
    std::array<bool, 256> table{};
    for (int c = 0x20; c < 0x7F; ++c)
      table[c] = c != '"' && c != '\\';
    return table;
  }();
  std::size_t pos = 0;
  while (pos < text.size() && plain[static_cast<unsigned char>(text[pos])])
    ++pos;
  out.append(text.data(), pos);
  while (pos < text.size()) {
    const char32_t cp = decode_utf8(text, pos);
    switch (cp) {
    case U'"':
      out += "\\\"";
      break;
    case U'\\':
      out += "\\\\";
      break;
    case U'\b':
      out += "\\b";
      break;
    case U'\f':
      out += "\\f";
      break;
    case U'\n':
      out += "\\n";
      break;
    case U'\r':
      out += "\\r";
      break;
    case U'\t':
      out += "\\t";
      break;
    default:
      if (cp < 0x20 || cp == 0x7F) {
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(cp));
      } else {
        append_utf8(out, cp);
      }
    }
  }
  out += '"';
}

std::string format_json_double(double value) {
  TDIAG_DETAIL_ASSERT(std::isfinite(value), "JSON numbers are finite");
  // fmt's "{}" is the shortest representation that reads back exactly (Ryu-like), but it drops
  // the decimal point of integral values, which would turn a float field into an integer one.
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".eE") == std::string::npos)
    text += ".0";
  return text;
}

void json_out::newline_indent() {
  if (style_ == json_style::compact)
    return;
  out_ += '\n';
  out_.append(levels_.size() * 2, ' ');
}

void json_out::pending_line_break() {
  if (line_break_) {
    out_ += '\n';
    line_break_ = false;
  }
}

void json_out::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty())
    return;
  TDIAG_DETAIL_ASSERT(!levels_.back().object, "a value inside an object needs a key first");
  if (!levels_.back().empty)
    out_ += ',';
  levels_.back().empty = false;
  pending_line_break();
  newline_indent();
}

void json_out::key(std::string_view name) {
  TDIAG_DETAIL_ASSERT(!levels_.empty() && levels_.back().object && !after_key_,
                      "key() belongs inside an object");
  if (!levels_.back().empty)
    out_ += ',';
  levels_.back().empty = false;
  pending_line_break();
  newline_indent();
  append_json_string(out_, name);
  out_ += style_ == json_style::compact ? ":" : ": ";
  after_key_ = true;
}

void json_out::begin_object() {
  before_value();
  out_ += '{';
  levels_.push_back({true, true});
}

void json_out::begin_array() {
  before_value();
  out_ += '[';
  levels_.push_back({false, true});
}

void json_out::close(char bracket) {
  TDIAG_DETAIL_ASSERT(!levels_.empty() && !after_key_, "unbalanced JSON writer calls");
  const bool empty = levels_.back().empty;
  levels_.pop_back();
  pending_line_break();
  if (!empty)
    newline_indent();
  out_ += bracket;
}

void json_out::end_object() {
  close('}');
}
void json_out::end_array() {
  close(']');
}

void json_out::string(std::string_view text) {
  before_value();
  append_json_string(out_, text);
}

void json_out::integer(std::int64_t value) {
  before_value();
  const fmt::format_int text(value);
  out_.append(text.data(), text.size());
}

void json_out::unsigned_integer(std::uint64_t value) {
  before_value();
  const fmt::format_int text(value);
  out_.append(text.data(), text.size());
}

void json_out::number(double value) {
  before_value();
  out_ += format_json_double(value);
}

void json_out::boolean(bool value) {
  before_value();
  out_ += value ? "true" : "false";
}

void json_out::null() {
  before_value();
  out_ += "null";
}

namespace {
void append_field(std::string& out, const field_value& value, std::string_view separator) {
  std::visit(
      [&](const auto& v) {
        using type = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<type, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<type, std::int64_t>) {
          fmt::format_to(std::back_inserter(out), "{}", v);
        } else if constexpr (std::is_same_v<type, double>) {
          if (std::isnan(v)) {
            out += R"({"float": "nan"})";
          } else if (std::isinf(v)) {
            out += v > 0 ? R"({"float": "inf"})" : R"({"float": "-inf"})";
          } else {
            out += format_json_double(v);
          }
        } else if constexpr (std::is_same_v<type, std::string>) {
          append_json_string(out, v);
        } else {
          out += '[';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i != 0)
              out += separator;
            append_field(out, v[i], separator);
          }
          out += ']';
        }
      },
      value.value);
}
} // namespace

void json_out::field(const field_value& value) {
  before_value();
  append_field(out_, value, style_ == json_style::compact ? "," : ", ");
}

void json_out::raw(std::string_view json) {
  before_value();
  out_ += json;
}

std::string json_out::take() {
  TDIAG_DETAIL_ASSERT(levels_.empty(), "take() before the document is closed");
  if (style_ == json_style::pretty || line_break_)
    out_ += '\n';
  line_break_ = false;
  std::string result = std::move(out_);
  out_.clear();
  return result;
}

} // namespace tdiag::detail
