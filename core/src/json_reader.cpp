// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reads `tensordiag.report/v1` JSON (docs/report-format.md) with nlohmann-json. Every problem
// becomes a tdiag::input_error whose one-line message names the source, the line, column and
// byte offset, and (for a well-formed document of the wrong shape) the JSON pointer of the value.
#include <tensordiag/core/detail/json_locate.hpp>
#include <tensordiag/core/detail/utf8.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace tdiag {
namespace {

using json = nlohmann::json;
constexpr std::string_view schema_id = "tensordiag.report/v1";
// Field values nest (lists of lists); the limit keeps hostile input from exhausting the stack.
constexpr int max_field_depth = 32;

// One line, printable: outside text (a file name, nlohmann's "last read: '...'") may hold
// control characters or invalid UTF-8, and the CLI promises exactly one line.
std::string printable(std::string_view text) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    const char32_t cp = detail::decode_utf8(text, pos);
    if (cp < 0x20 || cp == 0x7F ||
        (cp == detail::replacement_character && pos - start == 1 &&
         static_cast<unsigned char>(text[start]) >= 0x80)) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[start]));
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

[[noreturn]] void throw_input_error(std::string_view code, std::string_view title,
                                    std::string_view source, std::string_view text,
                                    std::size_t offset, std::string_view what) {
  const auto p = detail::position_of(text, offset);
  diagnostic d;
  d.code = std::string(code);
  d.title = std::string(title);
  d.message = fmt::format("{}: line {}, column {} (byte {}): {}", printable(source), p.line,
                          p.column, p.offset, printable(what));
  d.location.file = std::string(source);
  d.location.line = static_cast<std::uint32_t>(p.line);
  d.location.column = static_cast<std::uint32_t>(p.column);
  d.add_field("byte", p.offset);
  d.hint = "tdiag reads JSON reports of schema tensordiag.report/v1 (docs/report-format.md)";
  throw input_error(std::move(d));
}

std::string pointer_token(std::string_view token) {
  std::string out;
  for (const char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

class reader {
public:
  reader(std::string_view text, std::string_view source) : text_(text), source_(source) {}

  report read(const json& root) {
    if (!root.is_object())
      fail("expected a JSON object holding a tensordiag.report/v1 report");
    const auto schema = root.find("schema");
    if (schema == root.end())
      fail(fmt::format("missing member \"schema\" (expected \"{}\")", schema_id));
    {
      const scope s(*this, "schema");
      if (!schema->is_string() || schema->get_ref<const std::string&>() != schema_id) {
        fail(fmt::format("unsupported schema {}, expected \"{}\"", schema->dump(), schema_id),
             "TDIAG-CORE-002", "unsupported report schema");
      }
    }
    check_members(root, {"schema", "metadata", "diagnostics"});
    report r;
    r.metadata = read_metadata(member(root, "metadata"));
    const scope s(*this, "diagnostics");
    const json& list = member(root, "diagnostics");
    expect(list.is_array(), "expected an array of diagnostics");
    r.diagnostics.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      const scope item(*this, std::to_string(i));
      r.diagnostics.push_back(read_diagnostic(list[i]));
    }
    return r;
  }

private:
  // Pushes a path token for the lifetime of the scope, so errors name where they are.
  struct scope {
    scope(reader& r, std::string token) : r_(r) { r_.path_.push_back(std::move(token)); }
    ~scope() { r_.path_.pop_back(); }
    scope(const scope&) = delete;
    scope& operator=(const scope&) = delete;
    reader& r_;
  };

  [[noreturn]] void fail(std::string_view what, std::string_view code = "TDIAG-CORE-003",
                         std::string_view title = "malformed report") const {
    std::string pointer;
    for (const auto& token : path_)
      pointer += "/" + pointer_token(token);
    const std::size_t offset = detail::locate_json_value(text_, path_);
    throw_input_error(code, title, source_, text_, offset,
                      pointer.empty() ? std::string(what) : fmt::format("{}: {}", pointer, what));
  }

  void expect(bool condition, std::string_view what) const {
    if (!condition)
      fail(what);
  }

  void check_members(const json& object, std::initializer_list<std::string_view> known) const {
    for (const auto& [name, value] : object.items()) {
      bool found = false;
      for (const auto k : known)
        found = found || k == name;
      if (!found) {
        const scope s(const_cast<reader&>(*this), name);
        fail(fmt::format("unknown member \"{}\"", printable(name)));
      }
    }
  }

  const json& member(const json& object, const char* name) const {
    const auto it = object.find(name);
    if (it == object.end())
      fail(fmt::format("missing member \"{}\"", name));
    return *it;
  }

  std::string read_string(const json& object, const char* name, bool required) {
    const auto it = object.find(name);
    if (it == object.end()) {
      if (required)
        fail(fmt::format("missing member \"{}\"", name));
      return {};
    }
    const scope s(*this, name);
    expect(it->is_string(), "expected a string");
    return it->get<std::string>();
  }

  std::int64_t to_int64(const json& value) const {
    expect(value.is_number_integer(), "expected an integer");
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      fail("integer out of the 64-bit signed range");
    return value.get<std::int64_t>();
  }

  std::uint32_t read_u32(const json& object, const char* name) {
    const auto it = object.find(name);
    if (it == object.end())
      return 0;
    const scope s(*this, name);
    const std::int64_t v = to_int64(*it);
    expect(v >= 0 && v <= std::numeric_limits<std::uint32_t>::max(),
           "expected an integer from 0 to 4294967295");
    return static_cast<std::uint32_t>(v);
  }

  std::optional<std::int64_t> read_optional_int(const json& object, const char* name) {
    const auto it = object.find(name);
    if (it == object.end())
      return std::nullopt;
    const scope s(*this, name);
    return to_int64(*it);
  }

  report_metadata read_metadata(const json& m) {
    const scope s(*this, "metadata");
    expect(m.is_object(), "expected an object");
    check_members(m, {"tool", "version", "time", "host", "pid", "rank", "device"});
    report_metadata meta;
    meta.tool = read_string(m, "tool", true);
    meta.version = read_string(m, "version", true);
    meta.time = read_string(m, "time", true);
    meta.host = read_string(m, "host", true);
    {
      const scope p(*this, "pid");
      meta.pid = to_int64(member(m, "pid"));
    }
    meta.rank = read_optional_int(m, "rank");
    meta.device = read_optional_int(m, "device");
    return meta;
  }

  source_location read_location(const json& object) {
    expect(object.is_object(), "expected an object");
    check_members(object, {"file", "line", "column", "function"});
    source_location loc;
    loc.file = read_string(object, "file", false);
    loc.line = read_u32(object, "line");
    loc.column = read_u32(object, "column");
    loc.function = read_string(object, "function", false);
    return loc;
  }

  field_value read_field_value(const json& value, int depth) {
    if (depth > max_field_depth)
      fail(fmt::format("field values nest deeper than {} levels", max_field_depth));
    switch (value.type()) {
    case json::value_t::boolean:
      return value.get<bool>();
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return to_int64(value);
    case json::value_t::number_float:
      return value.get<double>();
    case json::value_t::string:
      return value.get<std::string>();
    case json::value_t::array: {
      field_value::list items;
      items.reserve(value.size());
      for (std::size_t i = 0; i < value.size(); ++i) {
        const scope s(*this, std::to_string(i));
        items.push_back(read_field_value(value[i], depth + 1));
      }
      return items;
    }
    case json::value_t::object: {
      // The one object form: a non-finite float, {"float": "nan" | "inf" | "-inf"}.
      const auto it = value.find("float");
      if (value.size() == 1 && it != value.end() && it->is_string()) {
        const auto& text = it->get_ref<const std::string&>();
        if (text == "nan")
          return std::numeric_limits<double>::quiet_NaN();
        if (text == "inf")
          return std::numeric_limits<double>::infinity();
        if (text == "-inf")
          return -std::numeric_limits<double>::infinity();
      }
      fail(R"(expected a number, string, boolean, list or {"float": "nan" | "inf" | "-inf"})");
    }
    default:
      fail("expected a number, string, boolean or list");
    }
  }

  std::vector<std::string> read_notes(const json& notes) {
    expect(notes.is_array(), "expected an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < notes.size(); ++i) {
      const scope s(*this, std::to_string(i));
      expect(notes[i].is_string(), "expected a string");
      out.push_back(notes[i].get<std::string>());
    }
    return out;
  }

  stack_frame read_frame(const json& f) {
    expect(f.is_object(), "expected an object");
    check_members(f, {"function", "file", "line", "module", "address"});
    stack_frame frame;
    frame.function = read_string(f, "function", false);
    frame.file = read_string(f, "file", false);
    frame.line = read_u32(f, "line");
    frame.module = read_string(f, "module", false);
    const std::string address = read_string(f, "address", false);
    if (!address.empty()) {
      const scope s(*this, "address");
      const bool hex = address.size() > 2 && address.size() <= 18 && address.starts_with("0x");
      const auto [end, ec] =
          hex ? std::from_chars(address.data() + 2, address.data() + address.size(), frame.address,
                                16)
              : std::from_chars_result{nullptr, std::errc::invalid_argument};
      expect(ec == std::errc{} && end == address.data() + address.size(),
             "expected a hexadecimal address such as \"0x7f3a12c4\"");
    }
    return frame;
  }

  diagnostic read_diagnostic(const json& d) {
    expect(d.is_object(), "expected an object");
    check_members(d, {"severity", "code", "title", "message", "location", "fields", "notes", "hint",
                      "related", "stack"});
    diagnostic out;
    {
      const std::string level = read_string(d, "severity", true);
      const auto parsed = parse_severity(level);
      const scope s(*this, "severity");
      if (!parsed)
        fail(fmt::format("expected \"error\", \"warning\" or \"note\", got \"{}\"", level));
      out.level = *parsed;
    }
    out.code = read_string(d, "code", true);
    out.title = read_string(d, "title", true);
    out.message = read_string(d, "message", true);
    if (const auto it = d.find("location"); it != d.end()) {
      const scope s(*this, "location");
      out.location = read_location(*it);
    }
    if (const auto it = d.find("fields"); it != d.end()) {
      const scope s(*this, "fields");
      expect(it->is_array(), "expected an array of {\"name\": ..., \"value\": ...} objects");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const scope item(*this, std::to_string(i));
        const json& f = (*it)[i];
        expect(f.is_object(), "expected an object {\"name\": ..., \"value\": ...}");
        check_members(f, {"name", "value"});
        std::string name = read_string(f, "name", true);
        const scope v(*this, "value");
        out.fields.push_back({std::move(name), read_field_value(member(f, "value"), 0)});
      }
    }
    if (const auto it = d.find("notes"); it != d.end()) {
      const scope s(*this, "notes");
      out.notes = read_notes(*it);
    }
    out.hint = read_string(d, "hint", false);
    if (const auto it = d.find("related"); it != d.end()) {
      const scope s(*this, "related");
      expect(it->is_array(), "expected an array");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const scope item(*this, std::to_string(i));
        const json& rel = (*it)[i];
        expect(rel.is_object(), "expected an object {\"location\": ..., \"message\": ...}");
        check_members(rel, {"location", "message"});
        related_location r;
        {
          const scope loc(*this, "location");
          r.location = read_location(member(rel, "location"));
        }
        r.message = read_string(rel, "message", true);
        out.related.push_back(std::move(r));
      }
    }
    if (const auto it = d.find("stack"); it != d.end()) {
      const scope s(*this, "stack");
      expect(it->is_array(), "expected an array of frames");
      for (std::size_t i = 0; i < it->size(); ++i) {
        const scope item(*this, std::to_string(i));
        out.stack.push_back(read_frame((*it)[i]));
      }
    }
    return out;
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<std::string> path_;
};

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 1, column 5:
// syntax error while parsing value - ..."; the position is reported separately, so keep the rest.
std::string_view parse_error_reason(std::string_view what) {
  const auto at = what.find("parse error");
  const auto colon = what.find(": ", at == std::string_view::npos ? 0 : at);
  return colon == std::string_view::npos ? what : what.substr(colon + 2);
}

// "[json.exception.out_of_range.406] number overflow ..." without the bracketed id.
std::string_view exception_reason(std::string_view what) {
  const auto close = what.find("] ");
  return close == std::string_view::npos ? what : what.substr(close + 2);
}

} // namespace

report parse_report_json(std::string_view text, std::string_view source_name) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    throw_input_error("TDIAG-CORE-001", "invalid report JSON", source_name, text, text.size(),
                      text.empty()
                          ? "empty input, expected a tensordiag.report/v1 JSON document"
                          : "only white space, expected a tensordiag.report/v1 JSON document");
  }
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    // e.byte is 1-based: the index of the last character read.
    const std::size_t offset = e.byte == 0 ? 0 : e.byte - 1;
    throw_input_error("TDIAG-CORE-001", "invalid report JSON", source_name, text, offset,
                      parse_error_reason(e.what()));
  } catch (const json::exception& e) {
    // A number too large for a double ("number overflow parsing '1e999'") is out_of_range and
    // carries no position: point at the first occurrence of the offending token.
    const std::string_view what = e.what();
    const auto open = what.find('\'');
    const auto close = what.rfind('\'');
    std::size_t offset = 0;
    if (open != std::string_view::npos && close > open + 1) {
      offset = std::min(text.find(what.substr(open + 1, close - open - 1)), text.size());
    }
    throw_input_error("TDIAG-CORE-001", "invalid report JSON", source_name, text, offset,
                      exception_reason(what));
  }
  return reader(text, source_name).read(root);
}

} // namespace tdiag
