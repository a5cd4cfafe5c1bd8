// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// JUnit XML as CI systems read it (Jenkins, GitLab, Buildkite): one <testsuite>, one <testcase>
// per diagnostic; an error is a <failure>, a warning or note a passing case whose text is in
// <system-out>. The failure body is the diagnostic in the text format.
#include <tensordiag/core/detail/utf8.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <iterator>

namespace tdiag {
namespace {

// XML 1.0 allows tab, newline, carriage return and U+0020 upwards, minus surrogates and
// U+FFFE/U+FFFF; anything else (ESC, NUL) is shown as \xNN, invalid UTF-8 as U+FFFD.
std::string escape_xml(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    const char32_t cp = detail::decode_utf8(text, pos);
    switch (cp) {
    case U'&':
      out += "&amp;";
      break;
    case U'<':
      out += "&lt;";
      break;
    case U'>':
      out += "&gt;";
      break;
    case U'"':
      out += attribute ? "&quot;" : "\"";
      break;
    case U'\'':
      out += attribute ? "&apos;" : "'";
      break;
    // Attribute values normalize raw white space to spaces; character references survive.
    case U'\n':
      out += attribute ? "&#10;" : "\n";
      break;
    case U'\r':
      out += "&#13;";
      break;
    case U'\t':
      out += attribute ? "&#9;" : "\t";
      break;
    default:
      if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) {
        fmt::format_to(std::back_inserter(out), "\\x{:02x}",
                       static_cast<unsigned>(text[start]) & 0xFF);
      } else {
        detail::append_utf8(out, cp);
      }
    }
  }
  return out;
}

std::string attr(std::string_view text) {
  return escape_xml(text, true);
}
std::string body(std::string_view text) {
  return escape_xml(text, false);
}

std::string case_name(const diagnostic& d) {
  std::string name = d.title.empty() ? d.message : d.title;
  if (!d.location.file.empty()) {
    name += fmt::format(" ({}", d.location.file);
    if (d.location.line != 0)
      name += fmt::format(":{}", d.location.line);
    name += ')';
  }
  return name;
}

} // namespace

std::string to_junit(const report& r) {
  std::string out;
  auto it = std::back_inserter(out);
  const auto& m = r.metadata;
  const std::size_t tests = r.diagnostics.size();
  const std::size_t failures = r.count(severity::error);
  const std::string suite = m.tool.empty() ? "tensordiag" : m.tool;
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  fmt::format_to(it, "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                 attr(suite), tests, failures);
  fmt::format_to(it,
                 "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\"",
                 attr(suite), tests, failures);
  if (!m.time.empty())
    fmt::format_to(it, " timestamp=\"{}\"", attr(m.time));
  if (!m.host.empty())
    fmt::format_to(it, " hostname=\"{}\"", attr(m.host));
  out += ">\n    <properties>\n";
  const auto property = [&](std::string_view name, std::string_view value) {
    fmt::format_to(it, "      <property name=\"{}\" value=\"{}\"/>\n", name, attr(value));
  };
  property("tool", m.tool);
  property("version", m.version);
  property("pid", fmt::format("{}", m.pid));
  if (m.rank)
    property("rank", fmt::format("{}", *m.rank));
  if (m.device)
    property("device", fmt::format("{}", *m.device));
  out += "    </properties>\n";
  for (const auto& d : r.diagnostics) {
    const std::string classname = d.code.empty() ? suite : fmt::format("{}.{}", suite, d.code);
    fmt::format_to(it, "    <testcase classname=\"{}\" name=\"{}\"", attr(classname),
                   attr(case_name(d)));
    if (!d.location.file.empty())
      fmt::format_to(it, " file=\"{}\"", attr(d.location.file));
    if (d.location.line != 0)
      fmt::format_to(it, " line=\"{}\"", d.location.line);
    out += ">\n";
    const std::string text = to_text(d);
    if (d.level == severity::error) {
      fmt::format_to(it, "      <failure type=\"{}\" message=\"{}\">{}</failure>\n", attr(d.code),
                     attr(d.message.empty() ? d.title : d.message), body(text));
    } else {
      fmt::format_to(it, "      <system-out>{}</system-out>\n", body(text));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

} // namespace tdiag
