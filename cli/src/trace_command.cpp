// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace summary|leaks|oom|timeline|diff`: the analyses of the trace library over any
// trace tensordiag reads (format detected by content: PyTorch memory snapshots, Kineto/Chrome
// JSON plain or gzip, .tdtrace), rendered as text, JSON, GitHub, JUnit or SARIF. PATH... is a
// job: files, folders or globs, one trace per rank; with several ranks each finding names its
// rank (and carries a `rank` field).
//
//   tdiag trace summary PATH... [--top N]
//   tdiag trace leaks PATH... [--top N]
//   tdiag trace oom PATH...
//   tdiag trace timeline PATH... (--at TIME | --event N) [--segments N]
//   tdiag trace diff A B [--top N] [--ops-json OUT]    (A, B: a trace, a folder or a glob)
//   common: [--format text|json|github|junit|sarif] [-o OUT] [--color auto|always|never]
//           [--rank-from auto|distributed|file-name|position] [--device N] [--window A:B]
// Exit status 1 when a finding has error severity (an oom event), 2 for unreadable input.
#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/trace/diff_analysis.hpp>
#  include <tensordiag/trace/job_diff.hpp>
#  include <tensordiag/trace/kineto_import.hpp>
#  include <tensordiag/trace/leak_analysis.hpp>
#  include <tensordiag/trace/load.hpp>
#  include <tensordiag/trace/oom_analysis.hpp>
#  include <tensordiag/trace/selection_options.hpp>
#  include <tensordiag/trace/summary_analysis.hpp>
#  include <tensordiag/trace/timeline_analysis.hpp>
#  include <tensordiag/trace/trace_select.hpp>
#  include <tensordiag/trace/units.hpp>

#  include <fmt/format.h>

#  include <algorithm>
#  include <cstdio>
#  include <memory>
#  include <span>
#  include <string>
#  include <unistd.h>

#  include "command.hpp"
#  include "trace_job.hpp"

namespace tdiag::cli {
namespace {

struct analysis_options {
  std::vector<std::string> inputs;
  std::string format = "text";
  std::string output;
  std::string color = "auto";
  std::size_t top = 10;
  std::string at;
  long long event = -1;
  std::size_t segments = 20;
  std::string ops_json; ///< diff: the whole op table as tensordiag.op-diff/v1
  std::string rank_from = "auto";
  std::shared_ptr<trace::trace_selection> select; ///< --device, --window
};

void add_common(CLI::App* cmd, analysis_options& o) {
  o.select = add_selection_options(cmd);
  cmd->add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "github", "junit", "sarif"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o.output, "Output file (default: standard output)");
  cmd->add_option("--color", o.color, "Colour in text output: auto, always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->add_option("--rank-from", o.rank_from,
                  "Where a file's rank comes from: auto, distributed, file-name, position")
      ->check(CLI::IsMember({"auto", "distributed", "file-name", "position"}))
      ->capture_default_str();
}

// One report per rank, joined: a one-trace job reads as before; with several ranks every
// finding says its rank first ("rank 3: ...") and carries a `rank` field.
template <typename Fn> report per_rank(const std::vector<trace::job_member>& job, Fn&& fn) {
  if (job.size() == 1)
    return fn(job.front().loaded.trace);
  report out;
  out.metadata = make_report_metadata();
  for (const auto& m : job) {
    auto part = fn(m.loaded.trace);
    for (auto& d : part.diagnostics) {
      d.message = fmt::format("rank {}: {}", m.rank, d.message);
      d.add_field("rank", std::int64_t{m.rank});
      out.diagnostics.push_back(std::move(d));
    }
  }
  return out;
}

std::vector<trace::job_member> load(const analysis_options& o,
                                    std::span<const std::string> inputs) {
  // Before anything is read: an output over one of the traces would replace it.
  const named_output outputs[] = {{o.output, "-o"}, {o.ops_json, "--ops-json"}};
  refuse_output_over_an_input(outputs, o.inputs);
  trace::job_load_options options;
  options.ranks = trace::rank_source_from_name(o.rank_from).value_or(trace::rank_source::automatic);
  options.load.select = *o.select;
  return load_trace_job({inputs.begin(), inputs.end()}, options);
}

void emit(const report& r, const analysis_options& o, command_context& context) {
  const auto format = parse_report_format(o.format).value_or(report_format::text);
  const bool to_stdout = o.output.empty() || o.output == "-";
  text_options text;
  text.color =
      o.color == "always" || (o.color == "auto" && to_stdout && colour_wanted(STDOUT_FILENO));
  const std::string rendered = render(r, format, text);
  write_output(o.output, rendered);
  context.status = r.has_errors() ? exit_findings : exit_clean;
}

report timeline_of(const trace::trace& t, const analysis_options& o) {
  if (o.event >= 0)
    return trace::timeline_report(
        t, trace::timeline_after_events(t, static_cast<std::size_t>(o.event)), o.segments);
  std::string why;
  const auto at = trace::timeline_at_text(t, o.at, &why);
  if (!at)
    throw CLI::ValidationError("--at", why);
  return trace::timeline_report(t, *at, o.segments);
}

// A and B are each a trace or a job (a folder or a glob): the memory and kernel diff of every
// rank both have, then the op-level diff over the whole jobs.
report run_diff(const analysis_options& o) {
  const auto a = load(o, std::span(o.inputs).first(1));
  const auto b = load(o, std::span(o.inputs).subspan(1, 1));
  const auto ranks_a = trace::rank_traces(a);
  const auto ranks_b = trace::rank_traces(b);
  const auto ops = trace::diff_ops(ranks_a, ranks_b);
  if (!o.ops_json.empty())
    write_output(o.ops_json, trace::op_diff_json(ops));
  return trace::run_diff_report(ranks_a, ranks_b, ops, o.inputs.at(0), o.inputs.at(1), o.top);
}

CLI::App* add_analysis(CLI::App* parent, const char* name, const char* help, std::size_t inputs,
                       std::shared_ptr<analysis_options>& o) {
  o = std::make_shared<analysis_options>();
  auto* cmd = parent->add_subcommand(name, help);
  cmd->add_option(inputs == 1 ? "paths" : "files", o->inputs,
                  inputs == 1 ? "Trace files, folders or globs: a job, one trace per rank "
                                "(format detected from the content)"
                              : "A then B: each a trace file, or a folder or glob of a job")
      ->required()
      ->expected(inputs == 1 ? -1 : static_cast<int>(inputs));
  add_common(cmd, *o);
  return cmd;
}

const command_registration registration(30, [](CLI::App& app, command_context& context) {
  auto* trace_app = family(app, "trace", "Inspect, analyse and convert GPU traces");

  std::shared_ptr<analysis_options> summary, leaks, oom, timeline, diff;
  add_analysis(trace_app, "summary",
               "Event counts, time span, peak allocated/reserved memory, kernels by total time, "
               "stream busy time",
               1, summary)
      ->add_option("--top", summary->top, "Kernels to list")
      ->capture_default_str();
  trace_app->get_subcommand("summary")->callback([summary, &context] {
    const auto job = load(*summary, summary->inputs);
    emit(per_rank(job,
                  [&](const trace::trace& t) {
                    return trace::summary_report(t, trace::summarize(t), summary->top);
                  }),
         *summary, context);
  });

  add_analysis(trace_app, "leaks",
               "Allocations alive at the end by allocation site; growing sites (leaks) first", 1,
               leaks)
      ->add_option("--top", leaks->top, "Sites to list")
      ->capture_default_str();
  trace_app->get_subcommand("leaks")->callback([leaks, &context] {
    const auto job = load(*leaks, leaks->inputs);
    emit(per_rank(job,
                  [&](const trace::trace& t) {
                    return trace::leak_report(t, trace::find_leaks(t), leaks->top);
                  }),
         *leaks, context);
  });

  add_analysis(
      trace_app, "oom",
      "Explain each out-of-memory event: fragmentation, a per-process limit, or a full device", 1,
      oom);
  trace_app->get_subcommand("oom")->callback([oom, &context] {
    const auto job = load(*oom, oom->inputs);
    emit(per_rank(job,
                  [](const trace::trace& t) { return trace::oom_report(t, trace::find_ooms(t)); }),
         *oom, context);
  });

  auto* tl = add_analysis(trace_app, "timeline",
                          "Allocator segments and blocks at one instant, replayed from the events",
                          1, timeline);
  auto* at = trace::add_time_offset_option(
      *tl, "--at", timeline->at,
      fmt::format("Time since the trace's start: {}, or 40% of the span",
                  trace::duration_examples));
  auto* ev = tl->add_option("--event", timeline->event,
                            "Instead of --at: the state after the first N memory events")
                 ->check(at_least_zero());
  at->excludes(ev);
  tl->add_option("--segments", timeline->segments, "Segments to list (largest first)")
      ->capture_default_str();
  tl->callback([timeline, &context] {
    if (timeline->at.empty() && timeline->event < 0)
      throw CLI::RequiredError("--at or --event");
    const auto job = load(*timeline, timeline->inputs);
    emit(per_rank(job, [&](const trace::trace& t) { return timeline_of(t, *timeline); }), *timeline,
         context);
  });

  add_analysis(trace_app, "diff",
               "What grew and shrank between two snapshots, traces or jobs: by site, by kernel, "
               "and every op by count and time (HTA's trace diff)",
               2, diff)
      ->add_option("--top", diff->top, "Rows to list per table")
      ->capture_default_str();
  trace_app->get_subcommand("diff")->add_option(
      "--ops-json", diff->ops_json,
      "Also write every op's counts and times (schema tensordiag.op-diff/v1) to this file");
  trace_app->get_subcommand("diff")->callback(
      [diff, &context] { emit(run_diff(*diff), *diff, context); });
});

} // namespace
} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
