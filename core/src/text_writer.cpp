// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Human text, compiler style: `file:line:col: error: message [CODE]`, so editors and terminals
// that understand gcc output make the location clickable.
#include <tensordiag/core/printable.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <type_traits>
#include <unistd.h>
#include <variant>

namespace tdiag {
namespace {

struct palette {
  std::string_view bold, dim, red, yellow, cyan, green, reset;
};
constexpr palette colours{"\x1b[1m",  "\x1b[2m",  "\x1b[31m", "\x1b[33m",
                          "\x1b[36m", "\x1b[32m", "\x1b[0m"};
constexpr palette plain{};

// Control characters (ESC above all) escaped, except newline and tab; a huge value cut.
std::string clean(std::string_view text) {
  return printable_lines(text);
}

// Continuation lines of a multi-line text line up under its first line.
std::string indent_lines(std::string_view text, std::size_t indent) {
  std::string out;
  for (const char c : text) {
    out += c;
    if (c == '\n')
      out.append(indent, ' ');
  }
  return out;
}

std::string location_text(const source_location& loc) {
  if (loc.file.empty())
    return {};
  if (loc.line == 0)
    return clean(loc.file);
  if (loc.column == 0)
    return fmt::format("{}:{}", clean(loc.file), loc.line);
  return fmt::format("{}:{}:{}", clean(loc.file), loc.line, loc.column);
}

void append_field_text(std::string& out, const field_value& value, bool nested) {
  std::visit(
      [&](const auto& v) {
        using type = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<type, bool>) {
          out += v ? "true" : "false";
        } else if constexpr (std::is_same_v<type, std::int64_t>) {
          fmt::format_to(std::back_inserter(out), "{}", v);
        } else if constexpr (std::is_same_v<type, double>) {
          fmt::format_to(std::back_inserter(out), "{}", v);
        } else if constexpr (std::is_same_v<type, std::string>) {
          if (nested) {
            fmt::format_to(std::back_inserter(out), "\"{}\"", v);
          } else {
            out += v;
          }
        } else {
          out += '[';
          for (std::size_t i = 0; i < v.size(); ++i) {
            if (i != 0)
              out += ", ";
            append_field_text(out, v[i], true);
          }
          out += ']';
        }
      },
      value.value);
}

void append_diagnostic(std::string& out, const diagnostic& d, const palette& p) {
  auto it = std::back_inserter(out);
  const std::string_view colour = d.level == severity::error     ? p.red
                                  : d.level == severity::warning ? p.yellow
                                                                 : p.cyan;
  const std::string where = location_text(d.location);
  if (!where.empty())
    fmt::format_to(it, "{}{}:{} ", p.bold, where, p.reset);
  const std::string_view message = d.message.empty() ? d.title : d.message;
  fmt::format_to(it, "{}{}{}:{} {}{}{}", p.bold, colour, to_string(d.level), p.reset, p.bold,
                 indent_lines(clean(message), 2), p.reset);
  if (!d.code.empty())
    fmt::format_to(it, " {}[{}]{}", p.dim, clean(d.code), p.reset);
  out += '\n';
  if (!d.location.function.empty()) {
    fmt::format_to(it, "  {}in{} {}\n", p.dim, p.reset, clean(d.location.function));
  }
  std::size_t width = 0;
  for (const auto& f : d.fields)
    width = std::max(width, f.name.size());
  for (const auto& f : d.fields) {
    fmt::format_to(it, "    {}{:<{}}{} = {}\n", p.bold, clean(f.name), width, p.reset,
                   indent_lines(clean(to_text(f.value)), width + 7));
  }
  for (const auto& note : d.notes) {
    fmt::format_to(it, "  {}note:{} {}\n", p.cyan, p.reset, indent_lines(clean(note), 8));
  }
  if (!d.hint.empty()) {
    fmt::format_to(it, "  {}hint:{} {}\n", p.green, p.reset, indent_lines(clean(d.hint), 8));
  }
  for (const auto& rel : d.related) {
    const std::string rel_where = location_text(rel.location);
    fmt::format_to(it, "  {}related:{} {}{}{}\n", p.cyan, p.reset, rel_where,
                   rel_where.empty() ? "" : ": ", indent_lines(clean(rel.message), 11));
  }
  if (!d.stack.empty())
    fmt::format_to(it, "  {}stack:{}\n", p.bold, p.reset);
  for (std::size_t i = 0; i < d.stack.size(); ++i) {
    const auto& frame = d.stack[i];
    fmt::format_to(it, "    #{:<2} {}{:#018x}{} {}", i, p.dim, frame.address, p.reset,
                   frame.function.empty() ? "??" : clean(frame.function));
    if (!frame.file.empty()) {
      fmt::format_to(it, " at {}", clean(frame.file));
      if (frame.line != 0)
        fmt::format_to(it, ":{}", frame.line);
    }
    if (!frame.module.empty())
      fmt::format_to(it, " {}({}){}", p.dim, clean(frame.module), p.reset);
    out += '\n';
  }
}

std::string plural(std::size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

} // namespace

bool colour_wanted(int fd) noexcept {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0')
    return false;
  return isatty(fd) == 1;
}

std::string to_text(const field_value& value) {
  std::string out;
  append_field_text(out, value, false);
  return out;
}

std::string to_text(const diagnostic& d, const text_options& options) {
  std::string out;
  append_diagnostic(out, d, options.color ? colours : plain);
  return out;
}

std::string to_text(const report& r, const text_options& options) {
  const palette& p = options.color ? colours : plain;
  std::string out;
  for (std::size_t i = 0; i < r.diagnostics.size(); ++i) {
    if (i != 0)
      out += '\n';
    append_diagnostic(out, r.diagnostics[i], p);
  }
  if (!r.diagnostics.empty())
    out += '\n';
  const auto& m = r.metadata;
  std::string origin = clean(m.tool);
  if (!m.version.empty())
    origin += " " + clean(m.version);
  if (!m.host.empty())
    origin += " on " + clean(m.host);
  if (m.rank)
    origin += fmt::format(", rank {}", *m.rank);
  if (m.device)
    origin += fmt::format(", device {}", *m.device);
  if (!m.time.empty())
    origin += fmt::format(" at {}", clean(m.time));
  fmt::format_to(std::back_inserter(out), "{}{}:{} {}, {}, {}\n", p.bold, origin, p.reset,
                 plural(r.count(severity::error), "error"),
                 plural(r.count(severity::warning), "warning"),
                 plural(r.count(severity::note), "note"));
  return out;
}

} // namespace tdiag
