// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reads `tensordiag.report/v1` JSON (docs/report-format.md) through the one JSON reader
// (json_in.hpp, simdjson). Every problem becomes a tdiag::input_error whose one-line message is
// "SOURCE:LINE:COL: what", with the JSON pointer of the value for a well-formed document of the
// wrong shape.
#include <tensordiag/core/codes.hpp>
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>

namespace tdiag {
namespace {

using detail::json_value;
using kind = json_value::kind;
constexpr std::string_view schema_id = "tensordiag.report/v1";
constexpr std::string_view hint =
    "tdiag reads JSON reports of schema tensordiag.report/v1 (docs/report-format.md)";
// Field values nest (lists of lists); the limit keeps hostile input from exhausting the stack.
constexpr int max_field_depth = 32;

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

  report read(const json_value& root) {
    if (!root.is_object())
      fail(root, "expected a JSON object holding a tensordiag.report/v1 report");
    const json_value* schema = root.find("schema");
    if (schema == nullptr)
      fail(root, fmt::format("missing member \"schema\" (expected \"{}\")", schema_id));
    {
      const scope s(*this, "schema");
      if (!schema->is_string() || schema->string != schema_id) {
        // A container is named, never echoed: it may nest 70,000 deep or weigh megabytes.
        const std::string got = schema->is_string()
                                    ? fmt::format("\"{}\"", detail::printable(schema->string))
                                : schema->type == kind::array  ? std::string("(an array)")
                                : schema->type == kind::object ? std::string("(an object)")
                                                               : token(*schema);
        fail(*schema, fmt::format("unsupported schema {}, expected \"{}\"", got, schema_id),
             codes::unsupported_schema, "unsupported report schema");
      }
    }
    check_members(root, {"schema", "metadata", "diagnostics"});
    report r;
    r.metadata = read_metadata(member(root, "metadata"));
    const scope s(*this, "diagnostics");
    const json_value& list = member(root, "diagnostics");
    expect(list, list.is_array(), "expected an array of diagnostics");
    r.diagnostics.reserve(list.items.size());
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const scope item(*this, std::to_string(i));
      r.diagnostics.push_back(read_diagnostic(list.items[i]));
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

  // The scalar's text as written, cut to one short line.
  std::string token(const json_value& v) const {
    std::string_view t = text_.substr(std::min(v.offset, text_.size()));
    t = t.substr(0, std::min<std::size_t>(t.find_first_of(",]} \t\r\n"), 40));
    return detail::printable(t);
  }

  [[noreturn]] void fail(const json_value& at, std::string_view what,
                         std::string_view code = codes::malformed_report,
                         std::string_view title = "malformed report") const {
    std::string pointer;
    for (const auto& t : path_)
      pointer += "/" + pointer_token(t);
    detail::throw_json_error({source_, code, title, hint}, text_, at.offset,
                             pointer.empty() ? std::string(what)
                                             : fmt::format("{}: {}", pointer, what));
  }

  void expect(const json_value& at, bool condition, std::string_view what) const {
    if (!condition)
      fail(at, what);
  }

  void check_members(const json_value& object, std::initializer_list<std::string_view> known) {
    for (std::size_t i = 0; i < object.names.size(); ++i) {
      bool found = false;
      for (const auto k : known)
        found = found || k == object.names[i];
      if (!found) {
        const scope s(*this, object.names[i]);
        fail(object.items[i], fmt::format("unknown member \"{}\"", object.names[i]));
      }
    }
  }

  const json_value& member(const json_value& object, const char* name) const {
    const json_value* v = object.find(name);
    if (v == nullptr)
      fail(object, fmt::format("missing member \"{}\"", name));
    return *v;
  }

  std::string read_string(const json_value& object, const char* name, bool required) {
    const json_value* v = object.find(name);
    if (v == nullptr) {
      if (required)
        fail(object, fmt::format("missing member \"{}\"", name));
      return {};
    }
    const scope s(*this, name);
    expect(*v, v->is_string(), "expected a string");
    return v->string;
  }

  std::int64_t to_int64(const json_value& v) const {
    if (v.type == kind::unsigned_integer)
      fail(v, "integer out of the 64-bit signed range");
    expect(v, v.type == kind::integer, "expected an integer");
    return v.integer;
  }

  std::uint32_t read_u32(const json_value& object, const char* name) {
    const json_value* v = object.find(name);
    if (v == nullptr)
      return 0;
    const scope s(*this, name);
    const std::int64_t n = to_int64(*v);
    expect(*v, n >= 0 && n <= std::numeric_limits<std::uint32_t>::max(),
           "expected an integer from 0 to 4294967295");
    return static_cast<std::uint32_t>(n);
  }

  std::optional<std::int64_t> read_optional_int(const json_value& object, const char* name) {
    const json_value* v = object.find(name);
    if (v == nullptr)
      return std::nullopt;
    const scope s(*this, name);
    return to_int64(*v);
  }

  report_metadata read_metadata(const json_value& m) {
    const scope s(*this, "metadata");
    expect(m, m.is_object(), "expected an object");
    check_members(m, {"tool", "version", "time", "host", "pid", "rank", "device"});
    report_metadata meta;
    meta.tool = read_string(m, "tool", true);
    meta.version = read_string(m, "version", true);
    meta.time = read_string(m, "time", true);
    meta.host = read_string(m, "host", true);
    {
      const json_value& pid = member(m, "pid");
      const scope p(*this, "pid");
      meta.pid = to_int64(pid);
    }
    meta.rank = read_optional_int(m, "rank");
    meta.device = read_optional_int(m, "device");
    return meta;
  }

  source_location read_location(const json_value& object) {
    expect(object, object.is_object(), "expected an object");
    check_members(object, {"file", "line", "column", "function"});
    source_location loc;
    loc.file = read_string(object, "file", false);
    loc.line = read_u32(object, "line");
    loc.column = read_u32(object, "column");
    loc.function = read_string(object, "function", false);
    return loc;
  }

  field_value read_field_value(const json_value& value, int depth) {
    if (depth > max_field_depth)
      fail(value, fmt::format("field values nest deeper than {} levels", max_field_depth));
    switch (value.type) {
    case kind::boolean:
      return value.boolean;
    case kind::integer:
    case kind::unsigned_integer:
      return to_int64(value);
    case kind::floating:
      return value.floating;
    case kind::string:
      return value.string;
    case kind::array: {
      field_value::list items;
      items.reserve(value.items.size());
      for (std::size_t i = 0; i < value.items.size(); ++i) {
        const scope s(*this, std::to_string(i));
        items.push_back(read_field_value(value.items[i], depth + 1));
      }
      return items;
    }
    case kind::object: {
      // The one object form: a non-finite float, {"float": "nan" | "inf" | "-inf"}.
      const json_value* f = value.find("float");
      if (value.items.size() == 1 && f != nullptr && f->is_string()) {
        if (f->string == "nan")
          return std::numeric_limits<double>::quiet_NaN();
        if (f->string == "inf")
          return std::numeric_limits<double>::infinity();
        if (f->string == "-inf")
          return -std::numeric_limits<double>::infinity();
      }
      fail(value,
           R"(expected a number, string, boolean, list or {"float": "nan" | "inf" | "-inf"})");
    }
    case kind::null:
      break;
    }
    fail(value, "expected a number, string, boolean or list");
  }

  std::vector<std::string> read_notes(const json_value& notes) {
    expect(notes, notes.is_array(), "expected an array of strings");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < notes.items.size(); ++i) {
      const scope s(*this, std::to_string(i));
      expect(notes.items[i], notes.items[i].is_string(), "expected a string");
      out.push_back(notes.items[i].string);
    }
    return out;
  }

  stack_frame read_frame(const json_value& f) {
    expect(f, f.is_object(), "expected an object");
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
      expect(*f.find("address"), ec == std::errc{} && end == address.data() + address.size(),
             "expected a hexadecimal address such as \"0x7f3a12c4\"");
    }
    return frame;
  }

  void read_fields(const json_value& list, diagnostic& out) {
    expect(list, list.is_array(), "expected an array of {\"name\": ..., \"value\": ...} objects");
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const scope item(*this, std::to_string(i));
      const json_value& f = list.items[i];
      expect(f, f.is_object(), "expected an object {\"name\": ..., \"value\": ...}");
      check_members(f, {"name", "value"});
      std::string name = read_string(f, "name", true);
      const json_value& value = member(f, "value");
      const scope v(*this, "value");
      out.fields.push_back({std::move(name), read_field_value(value, 0)});
    }
  }

  void read_related(const json_value& list, diagnostic& out) {
    expect(list, list.is_array(), "expected an array");
    for (std::size_t i = 0; i < list.items.size(); ++i) {
      const scope item(*this, std::to_string(i));
      const json_value& rel = list.items[i];
      expect(rel, rel.is_object(), "expected an object {\"location\": ..., \"message\": ...}");
      check_members(rel, {"location", "message"});
      related_location r;
      {
        const json_value& loc = member(rel, "location");
        const scope l(*this, "location");
        r.location = read_location(loc);
      }
      r.message = read_string(rel, "message", true);
      out.related.push_back(std::move(r));
    }
  }

  diagnostic read_diagnostic(const json_value& d) {
    expect(d, d.is_object(), "expected an object");
    check_members(d, {"severity", "code", "title", "message", "location", "fields", "notes", "hint",
                      "related", "stack"});
    diagnostic out;
    {
      const std::string level = read_string(d, "severity", true);
      const auto parsed = parse_severity(level);
      const scope s(*this, "severity");
      if (!parsed)
        fail(*d.find("severity"),
             fmt::format("expected \"error\", \"warning\" or \"note\", got \"{}\"", level));
      out.level = *parsed;
    }
    out.code = read_string(d, "code", true);
    out.title = read_string(d, "title", true);
    out.message = read_string(d, "message", true);
    if (const json_value* v = d.find("location")) {
      const scope s(*this, "location");
      out.location = read_location(*v);
    }
    if (const json_value* v = d.find("fields")) {
      const scope s(*this, "fields");
      read_fields(*v, out);
    }
    if (const json_value* v = d.find("notes")) {
      const scope s(*this, "notes");
      out.notes = read_notes(*v);
    }
    out.hint = read_string(d, "hint", false);
    if (const json_value* v = d.find("related")) {
      const scope s(*this, "related");
      read_related(*v, out);
    }
    if (const json_value* v = d.find("stack")) {
      const scope s(*this, "stack");
      expect(*v, v->is_array(), "expected an array of frames");
      for (std::size_t i = 0; i < v->items.size(); ++i) {
        const scope item(*this, std::to_string(i));
        out.stack.push_back(read_frame(v->items[i]));
      }
    }
    return out;
  }

  std::string_view text_;
  std::string_view source_;
  std::vector<std::string> path_;
};

} // namespace

report parse_report_json(std::string_view text, std::string_view source_name) {
  const json_value root =
      detail::parse_json(text, {source_name, codes::invalid_json, "invalid report JSON", hint});
  return reader(text, source_name).read(root);
}

} // namespace tdiag
