// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace analyze PATH... [--json] [--hta-compat] [--rank-from SOURCE] [--align HOW]
// [--critical-path-annotation TEXT] [--critical-path-instance N]
// [--critical-path-data-load TEXT...] [-o OUT]`: the whole-job
// analyses of the trace library (temporal and idle breakdown, kernel types, overlap, launch
// statistics, queue length, memory bandwidth, critical path) over one trace per rank. PATH may
// be files, a folder or a glob. Text by default; --json writes schema tensordiag.analysis/v1
// (docs/analysis.md). Exit status 2 for unreadable input.
#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/trace/job_analysis.hpp>
#  include <tensordiag/trace/job_load.hpp>

#  include <fmt/format.h>

#  include <algorithm>
#  include <cstdio>
#  include <map>
#  include <memory>
#  include <string>
#  include <vector>

#  include "command.hpp"
#  include "trace_job.hpp"

namespace tdiag::cli {
namespace {

struct analyze_options {
  std::vector<std::string> inputs;
  bool json = false;
  bool hta_compat = false;
  bool job_only = false;
  std::string rank_from = "auto";
  std::string align = "auto";
  std::string output;
  std::size_t top = 5;
  std::optional<std::string> cp_annotation;
  int cp_instance = -1;
  std::vector<std::string> cp_data_load;
  std::shared_ptr<trace::trace_selection> select; ///< --device, --window
};

std::string fmt_opt(const std::optional<double>& v, const char* suffix) {
  return v ? fmt::format("{:.2f}{}", *v, suffix) : std::string("n/a");
}

std::string render_critical_path(const trace::critical_path_result& c) {
  const auto window = c.annotation.empty()
                          ? std::string("whole trace")
                          : fmt::format("'{}' instance {}", c.annotation, c.instance);
  if (!c.computed)
    return fmt::format("  critical path ({}): not computed: {}\n", window, c.reason);
  std::string out = fmt::format("  critical path ({}): {:.0f} us over {} edges, bound by", window,
                                c.total_us, c.path_edges);
  const char* sep = " ";
  for (std::size_t b = 0; b + 1 < trace::path_bound_count; ++b)
    if (const auto us = c.bound_by_us[b]; us != 0) {
      out +=
          fmt::format("{}{} {:.0f} us ({:.1f}%)", sep, to_string(static_cast<trace::path_bound>(b)),
                      us, c.total_us > 0 ? 100.0 * us / c.total_us : 0.0);
      sep = ", ";
    }
  return out + "\n";
}

std::string render_clocks(const trace::job_clocks& c) {
  if (c.ranks.size() < 2)
    return {};
  auto us = [](std::int64_t ns) {
    return fmt::format("{:+.3f} us", static_cast<double>(ns) / 1e3);
  };
  std::string out = fmt::format(
      "\nclocks: {}{} (reference rank {}); per rank the offset used, then the base time's and "
      "the collectives' against the reference, with the collectives' |residual| median / max:\n",
      c.used == trace::clock_alignment::collectives ? "the collectives' ends"
                                                    : "Kineto's base time",
      c.requested == trace::clock_alignment::automatic ? " (--align auto)" : "", c.reference_rank);
  for (const auto& k : c.ranks) {
    out += fmt::format("  rank {}: {}; base time {}", k.rank, us(k.offset_ns),
                       us(k.base_time_offset_ns));
    if (k.collective_offset_ns)
      out +=
          fmt::format(", collectives {} over {}, {:.1f} / {:.1f} us", us(*k.collective_offset_ns),
                      k.collectives, k.median_abs_residual_us, k.max_abs_residual_us);
    out += "\n";
  }
  return out;
}

std::string render_cause(const trace::straggler_cause& c) {
  using trace::late_cause;
  const auto excess = c.excess_us[static_cast<std::size_t>(c.cause)];
  switch (c.cause) {
  case late_cause::compute: {
    std::string out = fmt::format("compute +{:.0f} us", excess);
    for (const auto& k : c.kernels)
      out += fmt::format("; {} +{:.0f} us ({:.0f} vs median {:.0f})", k.name.substr(0, 60),
                         k.excess_us(), k.us, k.median_us);
    return out;
  }
  case late_cause::host_gap:
    return fmt::format("host gap +{:.0f} us (no launches; longest {:.0f} us{})", excess,
                       static_cast<double>(c.gap_end_ns - c.gap_start_ns) / 1e3,
                       c.gap_host.empty() ? "" : fmt::format(" in {}", c.gap_host.substr(0, 60)));
  case late_cause::collective:
  case late_cause::copy:
    return fmt::format("waited on {} +{:.0f} us{}",
                       c.cause == late_cause::copy ? "a copy" : "an earlier collective", excess,
                       c.waited_on.empty() ? "" : fmt::format(" ({})", c.waited_on.substr(0, 60)));
  case late_cause::none:
    break;
  }
  return "no cause on its timeline";
}

std::string render_stragglers(const trace::job_analysis_result& r, std::size_t top) {
  std::string out =
      fmt::format("\nstragglers over {} collectives matched on every rank of their group:\n",
                  r.collectives.size());
  for (const auto& w : r.waits) {
    out += fmt::format("  rank {}: waited {:.0f} us in total, arrived last {} time(s)", w.rank,
                       w.wait_us, w.times_last);
    if (w.late_us > 0) {
      out += fmt::format(", {:.0f} us late:", w.late_us);
      for (std::size_t k = 1; k < trace::late_cause_count; ++k)
        if (w.late_by_cause_us[k] > 0)
          out += fmt::format(" {} {:.0f} us", to_string(static_cast<trace::late_cause>(k)),
                             w.late_by_cause_us[k]);
    }
    out += "\n";
  }
  std::vector<const trace::collective_wait*> latest;
  for (const auto& c : r.collectives)
    if (c.cause.late_us > 0)
      latest.push_back(&c);
  std::stable_sort(latest.begin(), latest.end(), [](const auto* a, const auto* b) {
    return a->cause.late_us > b->cause.late_us;
  });
  if (!latest.empty())
    out += "  latest arrivals and why (vs the other ranks' median):\n";
  for (std::size_t i = 0; i < std::min(top, latest.size()); ++i) {
    const auto& c = *latest[i];
    out += fmt::format("    step {} {}: rank {} {:.0f} us late: {}\n", c.step,
                       c.operation.empty() ? c.name.substr(0, 40) : c.operation, c.last_rank,
                       c.cause.late_us, render_cause(c.cause));
  }
  return out;
}

std::string render_text(const trace::job_analysis_result& r, std::size_t top) {
  std::string out = fmt::format("job analysis: {} rank(s){}\n", r.ranks.size(),
                                r.options.hta_compat ? " (HTA-compatible)" : "");
  for (const auto& k : r.ranks) {
    if (!r.options.rank_analyses)
      break;
    const auto& t = k.temporal;
    out += fmt::format("\nrank {} ({})\n", k.rank, k.source);
    out += fmt::format("  GPU span {:.0f} us: idle {:.0f} us ({:.2f}%), compute {:.0f} us "
                       "({:.2f}%), non-compute {:.0f} us ({:.2f}%)\n",
                       t.kernel_us, t.idle_us, t.pct(t.idle_us), t.compute_us, t.pct(t.compute_us),
                       t.non_compute_us, t.pct(t.non_compute_us));
    out += fmt::format("  communication overlapped by computation: {}\n",
                       fmt_opt(k.comp_comm_overlap_pct, "%"));
    const auto& l = k.launches;
    out += fmt::format("  launches {}: short kernels {}, runtime outliers {}, launch-delay "
                       "outliers {}; mean launch delay {}\n",
                       l.num_launches, l.short_kernels, l.runtime_outliers, l.launch_delay_outliers,
                       fmt_opt(l.launch_delay.mean, " us"));
    if (l.shared_correlation_launches > 0)
      out += fmt::format("  note: {} launches share their correlation id with others: each is "
                         "paired with the kernel of its own place among them\n",
                         l.shared_correlation_launches);
    out += render_critical_path(k.critical_path);
    if (!k.memory_bw.empty()) {
      out += "  memory bandwidth (GB/s, mean / max over the summed series):";
      for (const auto& m : k.memory_bw)
        out +=
            fmt::format(" {} {} / {};", m.name, fmt_opt(m.gbps.mean, ""), fmt_opt(m.gbps.max, ""));
      out += "\n";
    }
    out += "  kernel types:";
    for (const auto& kt : k.kernel_types)
      out += fmt::format(" {} {:.0f} us ({:.1f}%);", kt.type, kt.sum_us, kt.pct);
    out += "\n  idle per stream (host wait / kernel wait / other, us):\n";
    for (const auto& s : k.idle)
      out +=
          fmt::format("    stream {}: {:.0f} / {:.0f} / {:.0f}\n", s.stream,
                      s.by_category[0].time_us, s.by_category[1].time_us, s.by_category[2].time_us);
    std::vector<const trace::kernel_summary*> longest;
    for (const auto& ks : k.kernels)
      longest.push_back(&ks);
    std::stable_sort(longest.begin(), longest.end(),
                     [](const auto* a, const auto* b) { return a->sum_us > b->sum_us; });
    out += "  top kernels:\n";
    for (std::size_t i = 0; i < std::min(top, longest.size()); ++i)
      out +=
          fmt::format("    {:>12.0f} us  {:>6}x  {}  {}\n", longest[i]->sum_us, longest[i]->count,
                      to_string(longest[i]->type), longest[i]->name.substr(0, 80));
  }
  out += render_clocks(r.clocks);
  if (!r.collectives.empty())
    out += render_stragglers(r, top);
  if (!r.unmatched_collectives.empty()) {
    out += fmt::format("\n{} communication kernels with no partner on some other rank of their "
                       "group (a sampled trace, or a collective a rank never joined; --json lists "
                       "them):\n",
                       r.unmatched_collectives.size());
    for (std::size_t i = 0; i < std::min(top, r.unmatched_collectives.size()); ++i) {
      const auto& u = r.unmatched_collectives[i];
      out += fmt::format("  rank {} step {}{}: {}  {}\n", u.rank, u.step,
                         u.group.empty() ? "" : fmt::format(" group {}", u.group),
                         u.operation.empty() ? "?" : u.operation, u.name.substr(0, 80));
    }
  }
  if (!r.steps.empty()) {
    out += "\nsteps (rank, step: wall / GPU busy / compute / communication, us):\n";
    for (const auto& s : r.steps)
      out += fmt::format("  rank {} step {}: {:.0f} / {:.0f} / {:.0f} / {:.0f}\n", s.rank, s.step,
                         s.step_us, s.gpu_busy_us, s.compute_us, s.communication_us);
  }
  if (!r.deviations.empty()) {
    out += "\nkernels where one rank deviates from the median of the ranks:\n";
    for (std::size_t i = 0; i < std::min<std::size_t>(top, r.deviations.size()); ++i) {
      const auto& d = r.deviations[i];
      out += fmt::format("  rank {}: {:+.0f} us ({:.0f} vs median {:.0f})  {}\n", d.rank,
                         d.delta_us(), d.sum_us, d.median_us, d.name.substr(0, 80));
    }
  }
  return out;
}

void run(const analyze_options& o, command_context& context) {
  trace::job_load_options load;
  load.ranks = trace::rank_source_from_name(o.rank_from).value_or(trace::rank_source::automatic);
  load.load.select = *o.select;
  const named_output outputs[] = {{o.output, "-o"}};
  refuse_output_over_an_input(outputs, o.inputs);
  const auto members = load_trace_job(o.inputs, load);
  const auto ranks = trace::rank_traces(members);
  trace::analysis_options options;
  options.hta_compat = o.hta_compat;
  options.align =
      trace::clock_alignment_from_name(o.align).value_or(trace::clock_alignment::automatic);
  options.rank_analyses = !o.job_only;
  options.critical_path_annotation = o.cp_annotation;
  options.critical_path_instance = o.cp_instance;
  options.critical_path_data_load = o.cp_data_load;
  const auto result = trace::analyze_job(ranks, options);
  for (const auto& w : result.clocks.warnings)
    fmt::print(stderr, "tdiag: {}: {} [{}]\n", to_string(w.level), printable(w.message), w.code);
  // Kernel, op and group names come from the traces: their control characters are escaped as in
  // every other report (docs/report-format.md), so a name cannot drive the terminal.
  const auto text =
      o.json ? trace::analysis_json(result) : escape_controls(render_text(result, o.top), true);
  write_output(o.output, text);
  context.status = exit_clean;
}

const command_registration registration(32, [](CLI::App& app, command_context& context) {
  auto* trace_app = family(app, "trace", "Inspect, analyse and convert GPU traces");
  auto o = std::make_shared<analyze_options>();
  auto* cmd = trace_app->add_subcommand(
      "analyze", "Whole-job analyses, one trace per rank: temporal and idle breakdown, kernel "
                 "types, overlap, launch statistics, queue length, memory bandwidth, critical "
                 "path (HTA's figures), stragglers, steps, rank deviations");
  cmd->add_option("paths", o->inputs, "Trace files, folders or globs (one file per rank)")
      ->required();
  cmd->add_flag("--json", o->json, "Write JSON (schema tensordiag.analysis/v1)");
  o->select = add_selection_options(cmd);
  cmd->add_flag("--hta-compat", o->hta_compat,
                "HTA's semantics: whole-us rounding of ns traces, last ProfilerStep dropped");
  cmd->add_option("--rank-from", o->rank_from,
                  "Where a file's rank comes from: auto, distributed, file-name, position")
      ->check(CLI::IsMember({"auto", "distributed", "file-name", "position"}))
      ->capture_default_str();
  cmd->add_option("--align", o->align,
                  "Rank clocks: auto (the collectives where ranks share some, else base time), "
                  "base-time (Kineto's) or collectives (ends of matching NCCL kernels)")
      ->check(CLI::IsMember({"auto", "base-time", "collectives"}))
      ->capture_default_str();
  cmd->add_flag("--job-only", o->job_only,
                "Only the whole-job analyses (clocks, stragglers and their causes, steps), not "
                "the per-rank HTA figures");
  cmd->add_option("--critical-path-annotation", o->cp_annotation,
                  "Critical path of the range whose name contains this (\"\" = whole trace; "
                  "default: ProfilerStep when the trace has steps, else the whole trace)");
  cmd->add_option("--critical-path-instance", o->cp_instance,
                  "Which instance of that annotation, by start (default: 1 with two or more "
                  "steps, else 0)")
      ->check(at_least_zero());
  cmd->add_option("--critical-path-data-load", o->cp_data_load,
                  "HTA's data_load_events: host rows whose name contains TEXT count as "
                  "data_loading on the critical path (repeatable)");
  cmd->add_option("--top", o->top, "Kernels to list per rank in text")->capture_default_str();
  cmd->add_option("-o,--output", o->output, "Output file (default: standard output)");
  cmd->callback([o, &context] { run(*o, context); });
});

} // namespace
} // namespace tdiag::cli

#endif
