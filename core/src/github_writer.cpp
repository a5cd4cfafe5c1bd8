// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// GitHub Actions workflow commands, one line per diagnostic:
//   ::error file=kernels/gather.cu,line=42,col=7,title=[TDIAG-DSA-001] ...::message%0A...
// Escaping follows the runner (actions/toolkit command.ts): in the message % \r \n become
// %25 %0D %0A; property values additionally escape : and , as %3A and %2C.
#include <tensordiag/core/printable.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <iterator>

namespace tdiag {
namespace {

// Data escapes % \r \n and other control characters (\x1b); a property value (property = true) also
// escapes : and ,.
std::string escape(std::string_view text, bool property) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '%':
      out += "%25";
      break;
    case '\r':
      out += "%0D";
      break;
    case '\n':
      out += "%0A";
      break;
    case ':':
      out += property ? "%3A" : ":";
      break;
    case ',':
      out += property ? "%2C" : ",";
      break;
    default:
      // ESC, BEL, NUL... would reach the log viewer raw: the same escape as every message.
      out += escape_controls(std::string_view(&c, 1), true);
    }
  }
  return out;
}

std::string_view command_for(severity level) noexcept {
  switch (level) {
  case severity::error:
    return "error";
  case severity::warning:
    return "warning";
  case severity::note:
    return "notice";
  }
  return "error";
}

// A huge value (a 10 MB op name) with its middle cut, as the text format shows it; escape()
// then handles its control characters.
std::string cut(std::string_view text) {
  return text.size() > report_text_max_bytes ? printable_lines(text) : std::string(text);
}

// The annotation body: the message, then what the text format shows below it.
std::string body(const diagnostic& d) {
  std::string out = cut(d.message.empty() ? d.title : d.message);
  auto it = std::back_inserter(out);
  if (!d.location.function.empty())
    fmt::format_to(it, "\nin {}", cut(d.location.function));
  for (const auto& f : d.fields)
    fmt::format_to(it, "\n{} = {}", cut(f.name), cut(to_text(f.value)));
  for (const auto& note : d.notes)
    fmt::format_to(it, "\nnote: {}", cut(note));
  if (!d.hint.empty())
    fmt::format_to(it, "\nhint: {}", cut(d.hint));
  for (const auto& rel : d.related) {
    fmt::format_to(it, "\nrelated: {}", cut(rel.location.file));
    if (rel.location.line != 0)
      fmt::format_to(it, ":{}", rel.location.line);
    fmt::format_to(it, ": {}", cut(rel.message));
  }
  for (std::size_t i = 0; i < d.stack.size(); ++i) {
    const auto& frame = d.stack[i];
    fmt::format_to(it, "\n#{} {}", i, frame.function.empty() ? "??" : cut(frame.function));
    if (!frame.file.empty())
      fmt::format_to(it, " at {}:{}", cut(frame.file), frame.line);
  }
  return out;
}

} // namespace

std::string to_github(const report& r) {
  std::string out;
  auto it = std::back_inserter(out);
  for (const auto& d : r.diagnostics) {
    std::string properties;
    const auto add = [&](std::string_view name, std::string_view value) {
      fmt::format_to(std::back_inserter(properties), "{}{}={}", properties.empty() ? " " : ",",
                     name, escape(cut(value), true));
    };
    if (!d.location.file.empty()) {
      add("file", d.location.file);
      if (d.location.line != 0) {
        add("line", fmt::format("{}", d.location.line));
        if (d.location.column != 0)
          add("col", fmt::format("{}", d.location.column));
      }
    }
    const std::string title = d.code.empty() ? d.title : fmt::format("[{}] {}", d.code, d.title);
    if (!title.empty())
      add("title", title);
    fmt::format_to(it, "::{}{}::{}\n", command_for(d.level), properties, escape(body(d), false));
  }
  return out;
}

} // namespace tdiag
