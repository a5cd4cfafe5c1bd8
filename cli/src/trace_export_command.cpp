// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace export (alias convert) PATH... (--chrome OUT.json | --tdtrace OUT.tdtrace)
// [--no-api]
// [--no-flows] [--no-memory-counters] [--device N] [--window A:B]`: any trace tensordiag reads
// (.tdtrace, PyTorch snapshot, Kineto JSON) as Chrome trace JSON for Perfetto / chrome://tracing,
// or as a .tdtrace file; a job (several files, a folder, a glob) as one output per rank,
// OUT.rankN.EXT. Load warnings (lost chunks) go to standard error; the exit status stays 0 when the
// export succeeded.
#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/trace/chrome_export.hpp>
#  include <tensordiag/trace/load.hpp>
#  include <tensordiag/trace/tdtrace_writer.hpp>

#  include <fmt/format.h>

#  include <filesystem>
#  include <memory>
#  include <string>
#  include <vector>

#  include "command.hpp"
#  include "trace_job.hpp"

namespace tdiag::cli {
namespace {

struct export_state {
  std::vector<std::string> inputs;
  std::string chrome;
  std::string tdtrace;
  bool no_api = false;
  bool no_flows = false;
  bool no_memory_counters = false;
  std::shared_ptr<trace::trace_selection> select; ///< --device, --window
};

// With several ranks, rank N goes to OUT with ".rankN" before its extension (job.json ->
// job.rank3.json).
std::string rank_path(const std::string& out, const trace::job_member& m, std::size_t ranks) {
  if (ranks == 1)
    return out;
  std::filesystem::path p(out);
  const auto ext = p.extension().string();
  p.replace_extension();
  return fmt::format("{}.rank{}{}", p.string(), m.rank, ext);
}

void export_one(const export_state& s, const trace::trace& t, const std::string& chrome,
                const std::string& tdtrace) {
  if (!chrome.empty()) {
    trace::chrome_export_options o;
    o.api_calls = !s.no_api;
    o.flows = !s.no_flows;
    o.memory_counters = !s.no_memory_counters;
    // Through output_file: a failed export (a full disk) leaves no truncated JSON behind.
    output_file out(chrome);
    const auto stats = trace::write_chrome_trace(t, out.write_path(), o);
    out.commit();
    fmt::print("wrote {} trace events to {}: {} kernels, {} copies, {} host calls, {} ranges, "
               "{} instants, {} flows, {} counter samples\n",
               stats.trace_events(), chrome, stats.kernels, stats.copies, stats.api_calls,
               stats.ranges, stats.instants, stats.flows, stats.counters);
  }
  if (!tdtrace.empty()) {
    output_file out(tdtrace);
    trace::tdtrace_writer_options o;
    o.display_name = out.name();
    trace::write_tdtrace(out.write_path(), t, o);
    out.commit();
    fmt::print("wrote {} events to {}\n", t.event_count(), tdtrace);
  }
}

void run_export(const export_state& s, command_context& context) {
  if (s.chrome.empty() && s.tdtrace.empty())
    throw CLI::RequiredError("--chrome or --tdtrace");
  trace::job_load_options load;
  load.load.select = *s.select;
  const auto job = load_trace_job(s.inputs, load);
  // Every rank's outputs against every trace read, in one pass over each.
  std::vector<named_output> outputs;
  std::vector<std::filesystem::path> files;
  for (const auto& m : job) {
    files.push_back(m.path);
    if (!s.chrome.empty())
      outputs.push_back({rank_path(s.chrome, m, job.size()), "--chrome"});
    if (!s.tdtrace.empty())
      outputs.push_back({rank_path(s.tdtrace, m, job.size()), "--tdtrace"});
  }
  refuse_output_over_an_input(outputs, files);
  for (const auto& m : job)
    export_one(s, m.loaded.trace, s.chrome.empty() ? "" : rank_path(s.chrome, m, job.size()),
               s.tdtrace.empty() ? "" : rank_path(s.tdtrace, m, job.size()));
  context.status = exit_clean;
}

const command_registration registration(31, [](CLI::App& app, command_context& context) {
  auto* trace_app = family(app, "trace", "Inspect, analyse and convert GPU traces");
  auto state = std::make_shared<export_state>();
  auto* cmd = trace_app->add_subcommand(
      "export", "Convert a trace (.tdtrace, PyTorch memory snapshot, Kineto/Chrome JSON) to "
                "Chrome trace JSON for Perfetto, or to .tdtrace");
  // `tdiag trace convert BIG.pickle --tdtrace BIG.tdtrace`: what the over-budget line suggests.
  cmd->alias("convert");
  cmd->add_option("paths", state->inputs,
                  "Trace files, folders or globs (a job: one output per rank, OUT.rankN.EXT)")
      ->required();
  cmd->add_option("--chrome", state->chrome, "Write Chrome trace-event JSON here");
  cmd->add_option("--tdtrace", state->tdtrace, "Write a .tdtrace file here");
  state->select = add_selection_options(cmd);
  cmd->add_flag("--no-api", state->no_api, "Leave out host runtime/driver calls and CPU ops");
  cmd->add_flag("--no-flows", state->no_flows, "Leave out launch -> kernel flow arrows");
  cmd->add_flag("--no-memory-counters", state->no_memory_counters,
                "Leave out the allocated/reserved memory counters");
  cmd->callback([state, &context] { run_export(*state, context); });
});

} // namespace
} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
