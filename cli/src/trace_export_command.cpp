// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace export FILE (--chrome OUT.json | --tdtrace OUT.tdtrace) [--no-api] [--no-flows]
// [--no-memory-counters]`: any trace tensordiag reads (.tdtrace, PyTorch snapshot, Kineto JSON)
// as Chrome trace JSON for Perfetto / chrome://tracing, or as a .tdtrace file. Load warnings
// (lost chunks) go to standard error; the exit status stays 0 when the export succeeded.
#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/trace/chrome_export.hpp>
#  include <tensordiag/trace/load.hpp>
#  include <tensordiag/trace/tdtrace_writer.hpp>

#  include <fmt/format.h>

#  include <memory>
#  include <string>

#  include "command.hpp"

namespace tdiag::cli {
namespace {

struct export_state {
  std::string input;
  std::string chrome;
  std::string tdtrace;
  bool no_api = false;
  bool no_flows = false;
  bool no_memory_counters = false;
};

void run_export(const export_state& s, command_context& context) {
  if (s.chrome.empty() && s.tdtrace.empty())
    throw CLI::RequiredError("--chrome or --tdtrace");
  auto loaded = trace::load_trace(s.input);
  for (const auto& w : loaded.warnings)
    fmt::print(stderr, "tdiag: warning: {} [{}]\n", printable(w.message), w.code);
  const auto& t = loaded.trace;
  if (!s.chrome.empty()) {
    trace::chrome_export_options o;
    o.api_calls = !s.no_api;
    o.flows = !s.no_flows;
    o.memory_counters = !s.no_memory_counters;
    // Through output_file: a failed export (a full disk) leaves no truncated JSON behind.
    output_file out(s.chrome);
    const auto stats = trace::write_chrome_trace(t, out.write_path(), o);
    out.commit();
    fmt::print("wrote {} trace events to {}: {} kernels, {} copies, {} host calls, {} ranges, "
               "{} instants, {} flows, {} counter samples\n",
               stats.trace_events(), s.chrome, stats.kernels, stats.copies, stats.api_calls,
               stats.ranges, stats.instants, stats.flows, stats.counters);
  }
  if (!s.tdtrace.empty()) {
    output_file out(s.tdtrace);
    trace::tdtrace_writer_options o;
    o.display_name = out.name();
    trace::write_tdtrace(out.write_path(), t, o);
    out.commit();
    fmt::print("wrote {} events to {}\n", t.event_count(), s.tdtrace);
  }
  context.status = exit_clean;
}

const command_registration registration(31, [](CLI::App& app, command_context& context) {
  auto* trace_app = family(app, "trace", "Inspect, analyse and convert GPU traces");
  auto state = std::make_shared<export_state>();
  auto* cmd = trace_app->add_subcommand(
      "export", "Convert a trace (.tdtrace, PyTorch memory snapshot, Kineto/Chrome JSON) to "
                "Chrome trace JSON for Perfetto, or to .tdtrace");
  cmd->add_option("file", state->input, "Trace file (format detected from its content)")
      ->required();
  cmd->add_option("--chrome", state->chrome, "Write Chrome trace-event JSON here");
  cmd->add_option("--tdtrace", state->tdtrace, "Write a .tdtrace file here");
  cmd->add_flag("--no-api", state->no_api, "Leave out host runtime/driver calls and CPU ops");
  cmd->add_flag("--no-flows", state->no_flows, "Leave out launch -> kernel flow arrows");
  cmd->add_flag("--no-memory-counters", state->no_memory_counters,
                "Leave out the allocated/reserved memory counters");
  cmd->callback([state, &context] { run_export(*state, context); });
});

} // namespace
} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
