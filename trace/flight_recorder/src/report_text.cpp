// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The verdict for people (culprits first, then each group's divergence, then the culprits'
// stacks, then, joined with the job's traces, their last kernels and the stragglers, then what
// cannot be known) and as a tdiag::report with TDIAG-FR codes, so that the
// CI formats (GitHub, JUnit, SARIF) follow.
#include <tensordiag/core/printable.hpp>
#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/trace/fr_codes.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "job_index.hpp"

namespace tdiag::trace::fr {
namespace {

std::string_view code_of(cause c) {
  switch (c) {
  case cause::not_reached:
    return codes::not_reached;
  case cause::not_completed:
    return codes::not_completed;
  case cause::desync:
    return codes::desync;
  case cause::no_dump:
    return codes::no_dump;
  }
  return codes::not_reached;
}

std::string_view hint_of(cause c) {
  switch (c) {
  case cause::not_reached:
    return "look at where this rank's host is (its last entry's stack, py-spy dump of the "
           "process): it never called the collective the others wait in";
  case cause::not_completed:
    return "the call was issued but its work never finished on this rank: check its GPU "
           "(Xid, ECC, a hung kernel before it) and its network links";
  case cause::desync:
    return "make every rank of the group issue the same collectives in the same order with the "
           "same sizes and dtypes (a rank-dependent branch is the usual cause)";
  case cause::no_dump:
    return "find out why this rank wrote nothing (crashed, killed, held its GIL): its logs and "
           "exit status hold what the dumps cannot";
  }
  return {};
}

std::string where(const std::vector<frame>& frames) {
  // The first frame outside torch/distributed is the user's call site.
  for (const auto& f : frames)
    if (f.file.find("torch/distributed") == std::string::npos)
      return fmt::format(" at {}:{} in {}", printable(f.file), f.line, printable(f.name));
  if (!frames.empty())
    return fmt::format(" at {}:{} in {}", printable(frames.front().file), frames.front().line,
                       printable(frames.front().name));
  return {};
}

void culprits_text(const job_report& r, std::string& out) {
  if (r.culprits.empty()) {
    out += r.stuck ? "culprits: none the dumps can name (see below)\n"
                   : "culprits: none (no collective is stuck)\n";
    return;
  }
  out += fmt::format("culprits ({}):\n", r.culprits.size());
  for (const auto& c : r.culprits)
    out +=
        fmt::format("  rank {}: {} in group {} #{} ({}): {}{}\n", c.rank, to_string(c.cause),
                    printable(c.pg), c.seq, printable(c.op), printable(c.detail), where(c.frames));
}

void groups_text(const job_report& r, std::string& out) {
  out += "groups:\n";
  for (const auto& g : r.groups) {
    out +=
        fmt::format("  {}{} (ranks {}): {}{}\n", printable(g.name),
                    g.desc.empty() ? std::string() : fmt::format(" [{}]", printable(g.desc)),
                    detail::rank_list(g.ranks), printable(g.verdict),
                    g.waiting.empty() ? std::string()
                                      : fmt::format("; waiting: {}", detail::rank_list(g.waiting)));
    if (g.first_divergence) {
      const auto& m = r.mismatches[*g.first_divergence];
      out += fmt::format("    first divergence {}#{}: {}: {}\n", m.p2p ? "p2p " : "", m.seq,
                         to_string(m.state), printable(m.detail));
    }
  }
}

void stacks_text(const job_report& r, std::string& out) {
  bool any = false;
  for (const auto& c : r.culprits) {
    if (c.frames.empty())
      continue;
    if (!any)
      out += "stacks:\n";
    any = true;
    out += fmt::format("  rank {}, #{} {} ({}):\n", c.rank, c.own_seq, printable(c.own_op),
                       c.own_state);
    for (std::size_t i = 0; i < c.frames.size(); ++i)
      out += fmt::format("    #{} {} at {}:{}\n", i, printable(c.frames[i].name),
                         printable(c.frames[i].file), c.frames[i].line);
  }
}

// Beside the verdict: each culprit's last kernels in the job's traces, and the stragglers the
// trace analysis found.
void traces_text(const trace_context& t, std::string& out) {
  out += fmt::format("the job's traces ({}): {} rank(s), {} collective(s) matched\n",
                     printable(t.run), t.ranks, t.collectives);
  for (const auto& c : t.culprits) {
    if (c.source.empty()) {
      out += fmt::format("  rank {}: no trace of this rank\n", c.rank);
      continue;
    }
    out += fmt::format("  rank {} ({}): {} last kernel(s) before the end of its trace at +{}:\n",
                       c.rank, printable(c.source), c.last_kernels.size(),
                       format_duration(c.trace_end_ns - c.trace_begin_ns));
    for (const auto& k : c.last_kernels)
      out += fmt::format("    +{}  {} on stream {}  {}\n",
                         format_duration(k.start_ns - c.trace_begin_ns),
                         format_duration(k.duration_ns), k.stream, printable(k.name));
  }
  if (t.stragglers.empty()) {
    out += "  stragglers: none (no rank arrived last at a matched collective)\n";
    return;
  }
  out += "  stragglers (trace analyze):\n";
  for (const auto& s : t.stragglers)
    out += fmt::format(
        "    rank {}{}: arrived last {} time(s), {} late{}; waited {}\n", s.rank,
        s.culprit ? " (a culprit)" : "", s.times_last,
        format_duration(static_cast<std::int64_t>(s.late_us * 1e3)),
        s.cause.empty() ? std::string()
                        : fmt::format(", mostly {} ({})", s.cause,
                                      format_duration(static_cast<std::int64_t>(s.cause_us * 1e3))),
        format_duration(static_cast<std::int64_t>(s.wait_us * 1e3)));
}

} // namespace

std::string to_text(const job_report& r) {
  std::size_t dumped = 0;
  for (const auto& rk : r.ranks)
    dumped += rk.present && rk.status == dump_status::ok ? 1 : 0;
  std::string out = fmt::format("Flight Recorder: {} rank(s), {} with a ring, {} group(s): {}\n",
                                r.ranks.size(), dumped, r.groups.size(),
                                r.stuck        ? "the job is stuck"
                                : r.findings() ? "collectives diverge"
                                : r.mismatches.empty()
                                    ? "every collective matched"
                                    : "nothing is stuck (collectives in flight differ in state)");
  for (const auto& rk : r.ranks)
    if (rk.present && rk.status == dump_status::unreadable)
      out += fmt::format("warning: rank {}'s dump cannot be read, its entries are lost: {}\n",
                         rk.rank, printable(rk.problem));
  culprits_text(r, out);
  groups_text(r, out);
  stacks_text(r, out);
  if (r.traces)
    traces_text(*r.traces, out);
  if (!r.unknowns.empty()) {
    out += "what the dumps cannot tell:\n";
    for (const auto& u : r.unknowns)
      out += fmt::format("  {}\n", printable(u));
  }
  return out;
}

tdiag::report to_report(const job_report& r) {
  tdiag::report out;
  out.metadata = make_report_metadata("tdiag fr analyze");
  for (const auto& c : r.culprits) {
    diagnostic d;
    d.code = std::string(code_of(c.cause));
    d.title = fmt::format("rank {}: {}", c.rank, to_string(c.cause));
    d.message =
        fmt::format("rank {} holds group {} at #{} ({}): {}", c.rank, c.pg, c.seq, c.op, c.detail);
    d.add_field("rank", c.rank).add_field("cause", to_string(c.cause)).add_field("pg", c.pg);
    d.add_field("seq", c.seq).add_field("op", c.op);
    d.hint = std::string(hint_of(c.cause));
    for (const auto& f : c.frames)
      d.stack.push_back({f.name,
                         f.file,
                         static_cast<std::uint32_t>(
                             std::max<std::int64_t>(0, std::min<std::int64_t>(f.line, 1 << 30))),
                         {},
                         0});
    out.diagnostics.push_back(std::move(d));
  }
  for (const auto& m : r.mismatches) {
    diagnostic d;
    d.level =
        m.state == match_state::collective_state_mismatch ? severity::warning : severity::error;
    d.code = std::string(codes::mismatch);
    d.title = fmt::format("group {}: {}", m.pg, to_string(m.state));
    d.message =
        fmt::format("group {} diverges at #{} ({}): {}", m.pg, m.seq, to_string(m.state), m.detail);
    d.add_field("pg", m.pg).add_field("seq", m.seq).add_field("state", to_string(m.state));
    field_value::list ranks;
    for (int x : m.ranks)
      ranks.emplace_back(x);
    d.add_field("ranks", std::move(ranks));
    out.diagnostics.push_back(std::move(d));
  }
  for (const auto& u : r.unknowns) {
    diagnostic d;
    d.level = r.culprits.empty() && r.stuck ? severity::error : severity::note;
    d.code =
        std::string(r.stuck && r.culprits.empty() ? codes::undetermined : codes::unknown_ranks);
    d.title = "what the dumps cannot tell";
    d.message = u;
    out.diagnostics.push_back(std::move(d));
  }
  for (const auto& rk : r.ranks) {
    if (!rk.present || rk.status == dump_status::ok)
      continue;
    diagnostic d;
    if (rk.status == dump_status::unreadable) {
      // What the rank held is lost to the user: a warning, with the reader's own line.
      d.level = severity::warning;
      d.code = std::string(codes::unreadable_dump);
      d.title = "a dump that cannot be read";
      d.message = fmt::format("rank {}'s dump cannot be read, its entries are lost: {}", rk.rank,
                              rk.problem);
      d.add_field("rank", rk.rank);
      out.diagnostics.push_back(std::move(d));
      continue;
    }
    d.level = severity::note;
    d.code = std::string(codes::empty_dump);
    d.title = "an empty dump";
    d.message = fmt::format("{}: rank {} wrote {}", rk.source, rk.rank,
                            rk.status == dump_status::empty_file ? "an empty file"
                                                                 : "a dump without entries");
    d.add_field("rank", rk.rank);
    out.diagnostics.push_back(std::move(d));
  }
  if (r.culprits.empty() && r.mismatches.empty() && !r.stuck) {
    diagnostic d;
    d.level = severity::note;
    d.code = std::string(codes::all_matched);
    d.title = "every collective matched";
    d.message = fmt::format("{} rank(s), {} group(s): every collective matched and completed "
                            "where completion is visible",
                            r.ranks.size(), r.groups.size());
    out.diagnostics.push_back(std::move(d));
  }
  return out;
}

} // namespace tdiag::trace::fr
