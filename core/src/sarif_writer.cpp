// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// SARIF 2.1.0 (OASIS), as GitHub code scanning and IDE viewers read it: one run whose driver
// lists one rule per diagnostic code; one result per diagnostic with its location, related
// locations, the host stack as a SARIF `stacks` entry, and the typed fields in the property bag.
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <map>

#include "diagnostic_json.hpp"

namespace tdiag {
namespace {

constexpr std::string_view sarif_schema =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

// artifactLocation.uri is a URI reference: keep path characters, percent-encode the rest.
std::string to_uri(std::string_view path) {
  std::string out;
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    const bool keep = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') ||
                      (byte >= '0' && byte <= '9') ||
                      std::string_view("-._~/!$&'()*+,;=:@").find(c) != std::string_view::npos;
    if (keep) {
      out += c;
    } else if (c == '\\') {
      out += '/';
    } else {
      out += fmt::format("%{:02X}", byte);
    }
  }
  return out;
}

void write_message(detail::json_out& out, std::string_view text) {
  out.key("message");
  out.begin_object();
  out.member("text", text);
  out.end_object();
}

void write_physical(detail::json_out& out, std::string_view file, std::uint32_t line,
                    std::uint32_t column, std::uint64_t address) {
  out.key("physicalLocation");
  out.begin_object();
  if (address != 0) {
    out.key("address");
    out.begin_object();
    out.key("absoluteAddress");
    out.unsigned_integer(address);
    out.end_object();
  }
  if (!file.empty()) {
    out.key("artifactLocation");
    out.begin_object();
    out.member("uri", to_uri(file));
    out.end_object();
    if (line != 0) {
      out.key("region");
      out.begin_object();
      out.member("startLine", std::int64_t{line});
      if (column != 0)
        out.member("startColumn", std::int64_t{column});
      out.end_object();
    }
  }
  out.end_object();
}

void write_function(detail::json_out& out, std::string_view function) {
  out.key("logicalLocations");
  out.begin_array();
  out.begin_object();
  out.member("fullyQualifiedName", function);
  out.member("kind", "function");
  out.end_object();
  out.end_array();
}

// A SARIF location object (possibly empty: every member is optional).
void write_location(detail::json_out& out, const source_location& loc) {
  out.begin_object();
  if (!loc.file.empty())
    write_physical(out, loc.file, loc.line, loc.column, 0);
  if (!loc.function.empty())
    write_function(out, loc.function);
  out.end_object();
}

void write_properties(detail::json_out& out, const diagnostic& d) {
  out.key("properties");
  out.begin_object();
  out.member("title", d.title);
  if (!d.fields.empty()) {
    out.key("fields");
    out.begin_object();
    // A property bag is a JSON object: a repeated field name gets a #2, #3 suffix.
    std::map<std::string, int> seen;
    for (const auto& f : d.fields) {
      const int n = ++seen[f.name];
      out.key(n == 1 ? f.name : fmt::format("{}#{}", f.name, n));
      out.field(f.value);
    }
    out.end_object();
  }
  detail::write_notes_and_hint(out, d);
  out.end_object();
}

void write_result(detail::json_out& out, const diagnostic& d,
                  const std::map<std::string, std::int64_t>& rule_index) {
  out.begin_object();
  if (!d.code.empty()) {
    out.member("ruleId", d.code);
    out.member("ruleIndex", rule_index.at(d.code));
  }
  out.member("level", to_string(d.level)); // SARIF's levels share our names
  std::string text = d.message.empty() ? d.title : d.message;
  if (!d.hint.empty())
    text += fmt::format("\nHint: {}", d.hint);
  write_message(out, text);
  if (d.location.known() || !d.location.function.empty()) {
    out.key("locations");
    out.begin_array();
    write_location(out, d.location);
    out.end_array();
  }
  if (!d.related.empty()) {
    out.key("relatedLocations");
    out.begin_array();
    for (std::size_t i = 0; i < d.related.size(); ++i) {
      const auto& rel = d.related[i];
      out.begin_object();
      out.member("id", static_cast<std::int64_t>(i + 1));
      if (!rel.location.file.empty())
        write_physical(out, rel.location.file, rel.location.line, rel.location.column, 0);
      if (!rel.location.function.empty())
        write_function(out, rel.location.function);
      write_message(out, rel.message);
      out.end_object();
    }
    out.end_array();
  }
  if (!d.stack.empty()) {
    out.key("stacks");
    out.begin_array();
    out.begin_object();
    write_message(out, "host call stack");
    out.key("frames");
    out.begin_array();
    for (const auto& frame : d.stack) {
      out.begin_object();
      out.key("location");
      out.begin_object();
      if (!frame.file.empty() || frame.address != 0)
        write_physical(out, frame.file, frame.line, 0, frame.address);
      if (!frame.function.empty())
        write_function(out, frame.function);
      out.end_object();
      if (!frame.module.empty())
        out.member("module", frame.module);
      out.end_object();
    }
    out.end_array();
    out.end_object();
    out.end_array();
  }
  write_properties(out, d);
  out.end_object();
}

} // namespace

std::string to_sarif(const report& r) {
  // Rules in order of first use; a code's first title describes it.
  std::map<std::string, std::int64_t> rule_index;
  std::vector<const diagnostic*> rules;
  for (const auto& d : r.diagnostics) {
    if (!d.code.empty() &&
        rule_index.emplace(d.code, static_cast<std::int64_t>(rules.size())).second)
      rules.push_back(&d);
  }
  const auto& m = r.metadata;
  detail::json_out out;
  out.begin_object();
  out.member("$schema", sarif_schema);
  out.member("version", "2.1.0");
  out.key("runs");
  out.begin_array();
  out.begin_object();
  out.key("tool");
  out.begin_object();
  out.key("driver");
  out.begin_object();
  out.member("name", m.tool.empty() ? std::string("tensordiag") : m.tool);
  if (!m.version.empty())
    out.member("version", m.version);
  out.key("rules");
  out.begin_array();
  for (const auto* d : rules) {
    out.begin_object();
    out.member("id", d->code);
    out.key("shortDescription");
    out.begin_object();
    out.member("text", d->title.empty() ? d->code : d->title);
    out.end_object();
    out.end_object();
  }
  out.end_array();
  out.end_object();
  out.end_object();
  out.key("results");
  out.begin_array();
  for (const auto& d : r.diagnostics)
    write_result(out, d, rule_index);
  out.end_array();
  out.key("properties");
  out.begin_object();
  if (!m.time.empty())
    out.member("time", m.time);
  if (!m.host.empty())
    out.member("host", m.host);
  out.member("pid", m.pid);
  if (m.rank)
    out.member("rank", *m.rank);
  if (m.device)
    out.member("device", *m.device);
  out.end_object();
  out.end_object();
  out.end_array();
  out.end_object();
  return out.take();
}

} // namespace tdiag
