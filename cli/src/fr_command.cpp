// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag fr analyze PATH... [--json] [-o FILE] [--format text|json|github|junit|sarif]
//  [--world-size N] [--traces RUN]`: why a distributed job is stuck, from its PyTorch Flight
// Recorder dumps (files, a folder or a glob; one dump per rank). Without --format it prints the
// verdict for people (culprits, each group's divergence, stacks); --json writes tensordiag.fr/v1;
// --traces loads the same job's traces as `tdiag trace analyze` does and puts beside the
// verdict each culprit's last kernels and the stragglers (trace::fr::join_traces);
// --format renders the verdict's diagnostics (TDIAG-FR-NNN) in a report format for CI.
// Exit status 0 when nothing is found, 1 for a culprit, a mismatch or a stuck collective,
// 2 for unreadable input.
#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/core/codes.hpp>
#  include <tensordiag/core/error.hpp>
#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/trace/flight_recorder.hpp>
#  include <tensordiag/trace/fr_traces.hpp>
#  include <tensordiag/trace/job_analysis.hpp>

#  include <fmt/format.h>

#  include <cstdio>
#  include <filesystem>
#  include <malloc.h>
#  include <memory>
#  include <string>
#  include <vector>

#  include "command.hpp"
#  include "trace_job.hpp"

namespace tdiag::cli {
namespace {

struct fr_options {
  std::vector<std::string> inputs;
  bool json = false;
  std::string format;
  std::string output;
  int world_size = 0;
  std::string traces;
};

// The job's traces, loaded and analysed as `tdiag trace analyze --job-only` does, beside the
// verdict. An unreadable RUN is one line saying it is --traces' (its code kept).
trace::fr::trace_context join_job_traces(const trace::fr::job_report& verdict,
                                         const std::string& run) {
  std::vector<trace::job_member> members;
  try {
    members = load_trace_job({run});
  } catch (const input_error& e) {
    auto d = e.report().diagnostics.empty() ? diagnostic{} : e.report().diagnostics.front();
    d.message = fmt::format("--traces: {}", e.what());
    throw input_error(std::move(d));
  }
  trace::analysis_options options;
  options.rank_analyses = false;
  const auto analysis = trace::analyze_job(trace::rank_traces(members), options);
  for (const auto& w : analysis.clocks.warnings)
    fmt::print(stderr, "tdiag: {}: {} [{}]\n", to_string(w.level), w.message, w.code);
  return trace::fr::join_traces(verdict, members, analysis, run);
}

// Every thread reads a dump and lets its parse go, dump after dump. By default glibc gives the
// freed top of each thread's heap back to the kernel and maps buffers over 128 KiB afresh, so
// the next dump faults its pages in again and the threads queue on the kernel's lock for the
// process's mappings: on 16 cores, a quarter of the command's wall time (28 ms against 37 ms
// for 64 dumps, benchmarks/RESULTS.md). This command lives for one job; it keeps what it freed.
void keep_freed_memory() {
#  if defined(__GLIBC__)
  (void)::mallopt(M_MMAP_THRESHOLD, 32 << 20); // the most glibc documents
  (void)::mallopt(M_TRIM_THRESHOLD, 1 << 30);
#  endif
}

// -o naming one of the dumps would put the verdict where the evidence was.
void refuse_output_over_a_dump(const fr_options& o) {
  std::error_code ec;
  if (o.output.empty() || o.output == "-" || !std::filesystem::exists(o.output, ec))
    return; // a file yet to be written is no dump: the inputs are not listed twice
  for (const auto& input : trace::fr::expand_inputs(o.inputs)) {
    if (std::filesystem::equivalent(input, o.output, ec))
      throw_input_error(tdiag::codes::cannot_write, "the output is an input",
                        fmt::format("{}: -o names one of the dumps being read; the verdict "
                                    "would replace it (write it elsewhere)",
                                    o.output));
  }
}

void run_analyze(const fr_options& o, command_context& context) {
  namespace fr = trace::fr;
  refuse_output_over_a_dump(o);
  keep_freed_memory();
  const auto dumps = fr::load_dumps(o.inputs);
  fr::analyze_options options;
  options.world_size = o.world_size;
  auto verdict = fr::analyze(dumps, options);
  if (!o.traces.empty())
    verdict.traces = join_job_traces(verdict, o.traces);
  std::string rendered;
  if (o.json)
    rendered = fr::to_json(verdict);
  else if (!o.format.empty())
    rendered =
        render(fr::to_report(verdict), parse_report_format(o.format).value_or(report_format::text));
  else
    rendered = fr::to_text(verdict);
  write_output(o.output, rendered);
  context.status = verdict.findings() ? exit_findings : exit_clean;
}

const command_registration registration(33, [](CLI::App& app, command_context& context) {
  auto* fr_app = family(app, "fr", "PyTorch Flight Recorder dumps: why a distributed job is stuck");
  auto o = std::make_shared<fr_options>();
  auto* analyze = fr_app->add_subcommand(
      "analyze", "Match every process group's collectives across the ranks' dumps and name the "
                 "ranks that hold the job, with the cause the evidence supports");
  analyze->add_option("paths", o->inputs, "Dump files, a folder of them, or a quoted glob")
      ->required();
  analyze->add_flag("--json", o->json, "Write the verdict as JSON (schema tensordiag.fr/v1)");
  analyze
      ->add_option("--format", o->format,
                   "Render the verdict's diagnostics as a report: text, json, github, junit, sarif")
      ->check(CLI::IsMember({"text", "json", "github", "junit", "sarif"}));
  analyze->add_option("-o,--output", o->output, "Output file (default: standard output)");
  analyze
      ->add_option("--world-size", o->world_size,
                   "Ranks in the job, when some wrote no dump and no group lists them")
      ->check(at_least_zero());
  analyze->add_option("--traces", o->traces,
                      "The same job's traces (a folder or a quoted glob, one trace per rank, as "
                      "`tdiag trace analyze` reads them): each culprit's last kernels and the "
                      "stragglers beside the verdict");
  analyze->callback([o, &context] { run_analyze(*o, context); });
});

} // namespace
} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
