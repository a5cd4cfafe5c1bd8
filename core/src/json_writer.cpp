// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The `tensordiag.report/v1` JSON writer (docs/report-format.md). Members come in a fixed order
// and members holding their default value are left out, so a report has exactly one encoding:
// parse_report_json() restores the defaults and to_json() gives the same bytes again.
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>

#include "diagnostic_json.hpp"

namespace tdiag {
namespace {

bool is_default(const source_location& loc) noexcept {
  return loc.file.empty() && loc.line == 0 && loc.column == 0 && loc.function.empty();
}

void write_location(detail::json_out& out, const source_location& loc) {
  out.begin_object();
  if (!loc.file.empty())
    out.member("file", loc.file);
  if (loc.line != 0)
    out.member("line", std::int64_t{loc.line});
  if (loc.column != 0)
    out.member("column", std::int64_t{loc.column});
  if (!loc.function.empty())
    out.member("function", loc.function);
  out.end_object();
}

void write_frame(detail::json_out& out, const stack_frame& frame) {
  out.begin_object();
  if (!frame.function.empty())
    out.member("function", frame.function);
  if (!frame.file.empty())
    out.member("file", frame.file);
  if (frame.line != 0)
    out.member("line", std::int64_t{frame.line});
  if (!frame.module.empty())
    out.member("module", frame.module);
  // A string: JSON numbers past 2^53 lose precision in most readers.
  if (frame.address != 0)
    out.member("address", fmt::format("{:#x}", frame.address));
  out.end_object();
}

void write_diagnostic(detail::json_out& out, const diagnostic& d) {
  out.begin_object();
  out.member("severity", to_string(d.level));
  out.member("code", d.code);
  out.member("title", d.title);
  out.member("message", d.message);
  if (!is_default(d.location)) {
    out.key("location");
    write_location(out, d.location);
  }
  if (!d.fields.empty()) {
    out.key("fields");
    out.begin_array();
    for (const auto& f : d.fields) {
      out.begin_object();
      out.member("name", f.name);
      out.key("value");
      out.field(f.value);
      out.end_object();
    }
    out.end_array();
  }
  detail::write_notes_and_hint(out, d);
  if (!d.related.empty()) {
    out.key("related");
    out.begin_array();
    for (const auto& rel : d.related) {
      out.begin_object();
      out.key("location");
      write_location(out, rel.location);
      out.member("message", rel.message);
      out.end_object();
    }
    out.end_array();
  }
  if (!d.stack.empty()) {
    out.key("stack");
    out.begin_array();
    for (const auto& frame : d.stack)
      write_frame(out, frame);
    out.end_array();
  }
  out.end_object();
}

} // namespace

std::string to_json(const report& r) {
  detail::json_out out;
  out.begin_object();
  out.member("schema", "tensordiag.report/v1");
  out.key("metadata");
  out.begin_object();
  out.member("tool", r.metadata.tool);
  out.member("version", r.metadata.version);
  out.member("time", r.metadata.time);
  out.member("host", r.metadata.host);
  out.member("pid", r.metadata.pid);
  if (r.metadata.rank)
    out.member("rank", *r.metadata.rank);
  if (r.metadata.device)
    out.member("device", *r.metadata.device);
  out.end_object();
  out.key("diagnostics");
  out.begin_array();
  for (const auto& d : r.diagnostics)
    write_diagnostic(out, d);
  out.end_array();
  out.end_object();
  return out.take();
}

} // namespace tdiag
