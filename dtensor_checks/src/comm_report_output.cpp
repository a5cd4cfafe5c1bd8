// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The renderings of a comm_report: the text a user reads first, the JSON (schema
// tensordiag.shard_report/v1) and the core report for --to sarif|junit|github.
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/dtensor_checks/comm_report.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace tdiag::dtensor {
namespace {

// The report's byte format; a comm_report built by hand may have none.
bytes_formatter formatter(const comm_report& r) {
  if (r.format_bytes)
    return r.format_bytes;
  return [](std::int64_t n) { return fmt::format("{} bytes", n); };
}

std::size_t shown(const comm_report& r, std::size_t top) {
  return top == 0 ? r.lines.size() : std::min(top, r.lines.size());
}

std::string where(const source_frame& s) {
  if (s.file.empty())
    return "(no source recorded)";
  return s.line > 0 ? fmt::format("{}:{}", s.file, s.line) : s.file;
}

// `all_gather×40, all_reduce×40`.
std::string comms_text(const comm_counts& c) {
  std::vector<std::string> parts;
  for (auto k : {collective::all_gather, collective::all_reduce, collective::reduce_scatter,
                 collective::all_to_all}) {
    if (c[k] != 0)
      parts.push_back(fmt::format("{}×{}", to_string(k), c[k]));
  }
  return parts.empty() ? std::string("local") : fmt::format("{}", fmt::join(parts, ", "));
}

std::string ops_text(const comm_line& line) {
  std::vector<std::string> ops;
  for (const auto& c : line.causes) {
    if (std::find(ops.begin(), ops.end(), c.op) == ops.end())
      ops.push_back(c.op);
  }
  return fmt::format("{}", fmt::join(ops, ", "));
}

std::string arg_text(const comm_cause& c) {
  auto text = c.arg_name.empty() ? fmt::format("arg {}", c.arg)
                                 : fmt::format("arg {} ({})", c.arg, c.arg_name);
  return c.item ? fmt::format("{} item {}", text, *c.item) : text;
}

// `S(1)→R on mesh dim 1 (tp), all_gather, 16.00 KiB per rank`.
std::string step_text(const recorded_redistribution& s, const device_mesh& mesh,
                      const bytes_formatter& format_bytes) {
  return fmt::format("{}→{} on {}, {}, {} per rank", to_string(s.from), to_string(s.to),
                     mesh.dim_label(s.mesh_dim),
                     s.comm == collective::none ? "local" : to_string(s.comm),
                     format_bytes(s.bytes_per_rank));
}

void write_cause(std::string& out, const comm_cause& c, const bytes_formatter& format_bytes) {
  out += fmt::format("   {} {} {}: {} per call × {} calls = {}\n", c.op, arg_text(c),
                     to_string(c.arrived), format_bytes(c.bytes_per_call), c.calls,
                     format_bytes(c.bytes));
  for (const auto& s : c.steps)
    out += fmt::format("     {}\n", step_text(s, c.mesh, format_bytes));
  // The suggestion says itself when no fix is known.
  out +=
      c.fix ? fmt::format("     fix: {}\n", c.suggestion) : fmt::format("     {}\n", c.suggestion);
}

void write_propagation(std::string& out, const comm_report& r) {
  std::vector<std::string> missing;
  std::size_t uncovered = 0;
  for (const auto& [op, n] : r.not_covered) {
    missing.push_back(fmt::format("{} ×{}", op, n));
    uncovered += n;
  }
  out += fmt::format("propagation: {} recorded ops checked, {} agree with PyTorch, {} findings",
                     r.checked, r.agree, r.findings.size());
  out += uncovered == 0
             ? std::string("\n")
             : fmt::format("; {} not covered ({})\n", uncovered, fmt::join(missing, ", "));
  for (const auto& d : r.findings)
    out += fmt::format("  {} {}:{}: {}\n", d.code, d.location.file, d.location.line, d.message);
}

void write_fix(detail::json_out& out, const std::optional<placement_fix>& fix) {
  out.key("fix");
  if (!fix) {
    out.null();
    return;
  }
  out.begin_object();
  out.key("placements");
  out.begin_array();
  for (const auto& p : fix->placements)
    out.string(to_string(p));
  out.end_array();
  out.key("output");
  out.begin_array();
  for (const auto& p : fix->output)
    out.string(to_string(p));
  out.end_array();
  out.key("same_output");
  out.boolean(fix->same_output);
  out.end_object();
}

void write_strings(detail::json_out& out, const placement_list& ps) {
  out.begin_array();
  for (const auto& p : ps)
    out.string(to_string(p));
  out.end_array();
}

void write_cause_json(detail::json_out& out, const comm_cause& c) {
  out.begin_object();
  out.member("op", c.op);
  out.member("arg", static_cast<std::int64_t>(c.arg));
  out.key("item");
  c.item ? out.integer(static_cast<std::int64_t>(*c.item)) : out.null();
  out.member("arg_name", c.arg_name);
  out.key("arrived");
  write_strings(out, c.arrived);
  out.key("redistributions");
  out.begin_array();
  for (const auto& s : c.steps) {
    out.begin_object();
    out.member("mesh_dim", static_cast<std::int64_t>(s.mesh_dim));
    const auto& names = c.mesh.names();
    out.member("mesh_dim_name", s.mesh_dim < names.size() ? names[s.mesh_dim] : "");
    out.member("from", to_string(s.from));
    out.member("to", to_string(s.to));
    out.member("collective", s.comm == collective::none ? "none" : to_string(s.comm));
    out.member("bytes_per_rank", s.bytes_per_rank);
    out.end_object();
  }
  out.end_array();
  out.member("bytes_per_call", c.bytes_per_call);
  out.member("calls", c.calls);
  out.member("bytes", c.bytes);
  out.key("ids");
  out.begin_array();
  for (const auto& id : c.ids)
    out.string(id);
  out.end_array();
  write_fix(out, c.fix);
  out.member("suggestion", c.suggestion);
  out.end_object();
}

void write_line_json(detail::json_out& out, const comm_line& line, std::size_t rank) {
  out.begin_object();
  out.member("rank", static_cast<std::int64_t>(rank));
  out.member("file", line.source.file);
  out.member("line", line.source.line);
  out.member("function", line.source.function);
  out.member("code", line.source.code);
  out.member("bytes", line.bytes);
  out.member("count", line.count);
  out.key("comms");
  out.raw(comms_to_json(line.comms));
  out.key("causes");
  out.begin_array();
  for (const auto& c : line.causes)
    write_cause_json(out, c);
  out.end_array();
  out.end_object();
}

void write_counts(detail::json_out& out, const std::map<std::string, std::int64_t>& counts) {
  out.begin_object();
  for (const auto& [name, n] : counts)
    out.member(name, n);
  out.end_object();
}

void write_module_json(detail::json_out& out, const comm_module& m, std::size_t rank) {
  out.begin_object();
  out.member("rank", static_cast<std::int64_t>(rank));
  out.member("module", m.module);
  out.member("phase", m.phase);
  out.member("bytes", m.bytes);
  out.member("count", m.count);
  out.key("collectives");
  write_counts(out, m.collectives);
  out.key("ops");
  write_counts(out, m.ops);
  out.key("lines");
  write_counts(out, m.lines);
  out.end_object();
}

} // namespace

std::string to_text(const comm_report& r, std::size_t top) {
  const auto fb = formatter(r);
  const auto n = shown(r, top);
  std::string out = fmt::format(
      "{} records ({} op calls); {} source lines redistributed {} per rank in {} collectives "
      "({})\n",
      r.records, r.calls, r.lines.size(), fb(r.bytes), r.count, r.source);
  if (!r.lines.empty()) {
    out += fmt::format("\n{:>3}  {:>12}  {:>6}  {:<28}  {:<40}  {}\n", "#", "bytes/rank", "count",
                       "collectives", "source line", "ops");
    for (std::size_t i = 0; i < n; ++i) {
      const auto& l = r.lines[i];
      out += fmt::format("{:>3}  {:>12}  {:>6}  {:<28}  {:<40}  {}\n", i + 1, fb(l.bytes), l.count,
                         comms_text(l.comms), where(l.source), ops_text(l));
    }
    if (n < r.lines.size())
      out += fmt::format("  ... {} more lines (--top 0 lists all)\n", r.lines.size() - n);
  }
  if (!r.modules.empty())
    out += "\nmodules: " + modules_text(r, top);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& l = r.lines[i];
    out += fmt::format("\n{}. {}{}{}\n", i + 1, where(l.source),
                       l.source.function.empty() ? "" : " in " + l.source.function,
                       l.source.code.empty() ? "" : ": " + l.source.code);
    for (const auto& c : l.causes)
      write_cause(out, c, fb);
  }
  out += '\n';
  write_propagation(out, r);
  return out;
}

std::string to_json(const comm_report& r, std::size_t top) {
  detail::json_out out;
  out.begin_object();
  out.member("schema", "tensordiag.shard_report/v1");
  out.member("source", r.source);
  out.member("records", static_cast<std::int64_t>(r.records));
  out.member("calls", r.calls);
  out.member("bytes", r.bytes);
  out.member("count", r.count);
  out.key("lines");
  out.begin_array();
  for (std::size_t i = 0; i < shown(r, top); ++i)
    write_line_json(out, r.lines[i], i + 1);
  out.end_array();
  out.key("modules");
  out.begin_array();
  const auto modules = top == 0 ? r.modules.size() : std::min(top, r.modules.size());
  for (std::size_t i = 0; i < modules; ++i)
    write_module_json(out, r.modules[i], i + 1);
  out.end_array();
  out.key("propagation");
  out.begin_object();
  out.member("checked", static_cast<std::int64_t>(r.checked));
  out.member("agree", static_cast<std::int64_t>(r.agree));
  out.key("not_covered");
  out.begin_object();
  for (const auto& [op, count] : r.not_covered)
    out.member(op, static_cast<std::int64_t>(count));
  out.end_object();
  out.end_object();
  out.key("findings");
  out.begin_array();
  for (const auto& d : r.findings) {
    out.begin_object();
    out.member("code", d.code);
    out.member("file", d.location.file);
    out.member("line", static_cast<std::int64_t>(d.location.line));
    out.member("message", d.message);
    for (const auto& f : d.fields) {
      if (f.name == "id" || f.name == "record")
        out.key(f.name), out.field(f.value);
    }
    out.end_object();
  }
  out.end_array();
  out.end_object();
  return out.take() + "\n";
}

report to_report(const comm_report& r, std::size_t top) {
  const auto fb = formatter(r);
  report rep;
  rep.metadata = make_report_metadata("tdiag shard report");
  for (std::size_t i = 0; i < shown(r, top); ++i) {
    const auto& l = r.lines[i];
    diagnostic d;
    d.level = severity::warning;
    d.code = std::string(codes::recorded_redistribution);
    d.title = "this line makes PyTorch redistribute";
    // The location names the line; the message says what it costs.
    d.message = fmt::format("{} {} per rank in {} collectives ({}) before {}",
                            l.source.file.empty() ? "ops recorded without a source redistribute"
                                                  : "this line redistributes",
                            fb(l.bytes), l.count, comms_text(l.comms), ops_text(l));
    d.location.file = l.source.file.empty() ? r.source : l.source.file;
    d.location.line = static_cast<std::uint32_t>(l.source.line);
    d.location.function = l.source.function;
    d.add_field("rank", static_cast<std::int64_t>(i + 1));
    d.add_field("bytes", l.bytes);
    d.add_field("count", l.count);
    for (const auto& c : l.causes) {
      d.notes.push_back(fmt::format("{} {} {}: {} per call × {} calls", c.op, arg_text(c),
                                    to_string(c.arrived), fb(c.bytes_per_call), c.calls));
      if (c.fix && d.hint.empty())
        d.hint = c.suggestion;
      else
        d.notes.push_back(c.suggestion);
    }
    rep.diagnostics.push_back(std::move(d));
  }
  rep.diagnostics.insert(rep.diagnostics.end(), r.findings.begin(), r.findings.end());
  return rep;
}

} // namespace tdiag::dtensor
