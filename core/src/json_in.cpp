// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/core/detail/utf8.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <type_traits>

namespace tdiag::detail {
namespace {

namespace od = simdjson::ondemand;

// A value echoed into a message is cut: the message stays one readable line.
constexpr std::size_t max_echo = 40;

std::size_t first_invalid_utf8(std::string_view text) noexcept {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    if (decode_utf8(text, pos) == replacement_character && pos - start == 1 &&
        static_cast<unsigned char>(text[start]) >= 0x80)
      return start;
  }
  return text.size();
}

// simdjson finds an unclosed string before it iterates, without a position: the opening quote
// is the last quote that no odd run of backslashes escapes.
std::size_t unclosed_string_start(std::string_view text) noexcept {
  for (std::size_t i = text.size(); i-- > 0;) {
    if (text[i] != '"')
      continue;
    std::size_t slashes = 0;
    while (slashes < i && text[i - 1 - slashes] == '\\')
      ++slashes;
    if (slashes % 2 == 0)
      return i;
  }
  return 0;
}

// Outside strings only JSON's four white-space characters may be below 0x20.
std::size_t first_control_character(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && c != ' ' && c != '\t' && c != '\n' && c != '\r')
      return i;
  }
  return 0;
}

std::string_view reason(simdjson::error_code e) noexcept {
  switch (e) {
  case simdjson::TAPE_ERROR:
  case simdjson::INCORRECT_TYPE:
    return "bad structure: a missing or extra comma, colon, bracket, brace or quote";
  case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
    return "the input ends inside an array or object";
  case simdjson::STRING_ERROR:
    return "invalid escape in a string";
  case simdjson::UNESCAPED_CHARS:
    return "unescaped control character in a string";
  case simdjson::UNCLOSED_STRING:
    return "a string is not closed";
  case simdjson::NUMBER_ERROR:
  case simdjson::NUMBER_OUT_OF_RANGE:
    return "invalid number, or a number out of the range of a double or a 64-bit integer";
  case simdjson::T_ATOM_ERROR:
  case simdjson::F_ATOM_ERROR:
  case simdjson::N_ATOM_ERROR:
    return "invalid literal, expected true, false or null";
  case simdjson::UTF8_ERROR:
    return "invalid UTF-8";
  default:
    return simdjson::error_message(e);
  }
}

class builder {
public:
  builder(const json_source& source, std::string_view text, const char* base, od::document& doc,
          std::size_t max_depth)
      : source_(source), text_(text), base_(base), doc_(doc), max_depth_(max_depth) {}

  json_value root() {
    json_value v = build(doc_, 0);
    const char* rest = nullptr;
    if (doc_.current_location().get(rest) == simdjson::SUCCESS)
      fail(offset(rest), "trailing content after the JSON document");
    return v;
  }

private:
  std::size_t offset(const char* p) const noexcept {
    if (p == nullptr || p < base_)
      return text_.size();
    const auto off = static_cast<std::size_t>(p - base_);
    return off < text_.size() ? off : text_.size();
  }

  [[noreturn]] void fail(std::size_t at, std::string_view what) const {
    throw_json_error(source_, text_, at, what);
  }

  // Where simdjson stopped: the best position for an error found while iterating.
  [[noreturn]] void fail_here(simdjson::error_code e) {
    const char* at = nullptr;
    const std::size_t off = e != simdjson::INCOMPLETE_ARRAY_OR_OBJECT &&
                                    doc_.current_location().get(at) == simdjson::SUCCESS
                                ? offset(at)
                                : text_.size();
    fail(off, reason(e));
  }

  template <typename V> std::size_t start_of(V& v) {
    std::string_view token;
    if (simdjson::simdjson_result<std::string_view>(v.raw_json_token()).get(token) !=
        simdjson::SUCCESS)
      return text_.size();
    return offset(token.data());
  }

  // A scalar that failed to read, with its token.
  template <typename V> [[noreturn]] void fail_token(V& v, std::size_t at, simdjson::error_code e) {
    std::string_view token = text_.substr(at);
    const auto end = token.find_first_of(",]} \t\r\n");
    token = token.substr(0, std::min(end, max_echo));
    (void)v;
    fail(at, fmt::format("{} '{}'", reason(e), printable(token)));
  }

  template <typename V> json_value build(V& v, std::size_t depth) {
    json_value out;
    od::json_type type{};
    if (const auto e = v.type().get(type); e != simdjson::SUCCESS)
      fail_here(e);
    out.offset = start_of(v);
    switch (type) {
    case od::json_type::array:
    case od::json_type::object:
      if (depth >= max_depth_)
        fail(out.offset, fmt::format("arrays and objects nest deeper than {} levels", max_depth_));
      if (type == od::json_type::array)
        read_array(v, depth, out);
      else
        read_object(v, depth, out);
      break;
    case od::json_type::string: {
      std::string_view s;
      if (const auto e = v.get_string().get(s); e != simdjson::SUCCESS)
        fail_token(v, out.offset, e);
      out.type = json_value::kind::string;
      out.string = std::string(s);
      break;
    }
    case od::json_type::number:
      read_number(v, out);
      break;
    case od::json_type::boolean:
      if (const auto e = v.get_bool().get(out.boolean); e != simdjson::SUCCESS)
        fail_token(v, out.offset, e == simdjson::INCORRECT_TYPE ? simdjson::T_ATOM_ERROR : e);
      out.type = json_value::kind::boolean;
      break;
    case od::json_type::null: {
      bool null = false;
      if (const auto e = v.is_null().get(null); e != simdjson::SUCCESS || !null)
        fail_token(v, out.offset, e == simdjson::SUCCESS ? simdjson::N_ATOM_ERROR : e);
      break;
    }
    }
    return out;
  }

  template <typename V> void read_number(V& v, json_value& out) {
    od::number n;
    if (const auto e = v.get_number().get(n); e != simdjson::SUCCESS)
      fail_token(v, out.offset, e);
    switch (n.get_number_type()) {
    case od::number_type::signed_integer:
      out.type = json_value::kind::integer;
      out.integer = n.get_int64();
      break;
    case od::number_type::unsigned_integer:
      out.type = json_value::kind::unsigned_integer;
      out.unsigned_integer = n.get_uint64();
      break;
    case od::number_type::floating_point_number:
      out.type = json_value::kind::floating;
      out.floating = n.get_double();
      break;
    }
  }

  template <typename V> void read_array(V& v, std::size_t depth, json_value& out) {
    out.type = json_value::kind::array;
    od::array arr;
    if (const auto e = v.get_array().get(arr); e != simdjson::SUCCESS)
      fail_here(e);
    for (auto item : arr) {
      od::value child;
      if (const auto e = item.get(child); e != simdjson::SUCCESS)
        fail_here(e);
      out.items.push_back(build(child, depth + 1));
    }
  }

  template <typename V> void read_object(V& v, std::size_t depth, json_value& out) {
    out.type = json_value::kind::object;
    od::object obj;
    if (const auto e = v.get_object().get(obj); e != simdjson::SUCCESS)
      fail_here(e);
    for (auto field : obj) {
      std::string_view key;
      if (const auto e = field.unescaped_key().get(key); e != simdjson::SUCCESS)
        fail_here(e);
      std::string name(key);
      od::value child;
      if (const auto e = field.value().get(child); e != simdjson::SUCCESS)
        fail_here(e);
      json_value value = build(child, depth + 1);
      if (out.find(name) != nullptr)
        fail(value.offset, fmt::format("duplicate member \"{}\"", printable(name)));
      out.names.push_back(std::move(name));
      out.items.push_back(std::move(value));
    }
  }

  const json_source& source_;
  std::string_view text_;
  const char* base_;
  od::document& doc_;
  std::size_t max_depth_;
};

} // namespace

text_position position_of(std::string_view text, std::size_t offset) noexcept {
  text_position p;
  p.offset = offset < text.size() ? offset : text.size();
  for (std::size_t i = 0; i < p.offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string printable(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    const char32_t cp = decode_utf8(text, pos);
    if (cp < 0x20 || cp == 0x7F ||
        (cp == replacement_character && pos - start == 1 &&
         static_cast<unsigned char>(text[start]) >= 0x80)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[start]));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

void throw_json_error(const json_source& source, std::string_view text, std::size_t offset,
                      std::string_view what) {
  const auto p = position_of(text, offset);
  diagnostic d;
  d.code = std::string(source.code);
  d.title = std::string(source.title);
  d.message =
      fmt::format("{}:{}:{}: {}", printable(source.name), p.line, p.column, printable(what));
  d.location.file = std::string(source.name);
  d.location.line = static_cast<std::uint32_t>(p.line);
  d.location.column = static_cast<std::uint32_t>(p.column);
  d.add_field("byte", p.offset);
  d.hint = std::string(source.hint);
  throw input_error(std::move(d));
}

const json_value* json_value::find(std::string_view name) const noexcept {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name)
      return &items[i];
  return nullptr;
}

const json_value& json_value::operator[](std::string_view name) const noexcept {
  static const json_value none;
  const json_value* v = find(name);
  return v != nullptr ? *v : none;
}

const json_value& json_value::operator[](std::size_t index) const noexcept {
  static const json_value none;
  return index < items.size() ? items[index] : none;
}

std::int64_t json_value::as_int() const noexcept {
  switch (type) {
  case kind::integer:
    return integer;
  case kind::unsigned_integer:
    return static_cast<std::int64_t>(unsigned_integer);
  case kind::floating:
    return floating > -9.2e18 && floating < 9.2e18 ? static_cast<std::int64_t>(floating) : 0;
  default:
    return 0;
  }
}

double json_value::as_double() const noexcept {
  switch (type) {
  case kind::integer:
    return static_cast<double>(integer);
  case kind::unsigned_integer:
    return static_cast<double>(unsigned_integer);
  case kind::floating:
    return floating;
  default:
    return 0;
  }
}

std::string_view json_value::kind_name() const noexcept {
  switch (type) {
  case kind::null:
    return "null";
  case kind::boolean:
    return "a boolean";
  case kind::integer:
  case kind::unsigned_integer:
    return "an integer";
  case kind::floating:
    return "a float";
  case kind::string:
    return "a string";
  case kind::array:
    return "an array";
  case kind::object:
    return "an object";
  }
  return "a value";
}

json_value parse_json(std::string_view text, const json_source& source, std::size_t max_depth) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw_json_error(source, text, text.size(),
                     text.empty() ? "empty input, expected a JSON document"
                                  : "only white space, expected a JSON document");
  if (const auto bad = first_invalid_utf8(text); bad != text.size())
    throw_json_error(source, text, bad, "invalid UTF-8");
  const simdjson::padded_string padded(text);
  od::parser parser;
  od::document doc;
  if (const auto e = parser.iterate(padded).get(doc); e != simdjson::SUCCESS)
    throw_json_error(source, text,
                     e == simdjson::UNCLOSED_STRING              ? unclosed_string_start(text)
                     : e == simdjson::INCOMPLETE_ARRAY_OR_OBJECT ? text.size()
                     : e == simdjson::UNESCAPED_CHARS            ? first_control_character(text)
                                                                 : 0,
                     reason(e));
  return builder(source, text, padded.data(), doc, max_depth).root();
}

} // namespace tdiag::detail
