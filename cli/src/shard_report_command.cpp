// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag shard report RECORDING [--json | --to text|json|github|junit|sarif] [--top N] [-o OUT]`:
// where a recorded DTensor program (tensordiag.torch.record_dtensor) communicates and why — the
// user's source lines ranked by redistributed bytes, the op and argument that forced each, the
// placement change that avoids it where propagation knows one, and the ops on which our
// propagation disagrees with PyTorch. The ranked text by default; --json writes
// tensordiag.shard_report/v1; --to renders the findings as a tensordiag report (TDIAG-DT-401 per
// line, then the disagreements), in any of its formats. Exit status 0
// (the report is information), 2 for bad usage or an unreadable or malformed recording.
#ifdef TDIAG_CLI_HAS_DTENSOR_CHECKS
#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/dtensor_checks/comm_report.hpp>
#  include <tensordiag/trace/units.hpp>

#  include <memory>
#  include <string>
#  include <unistd.h>

#  include "command.hpp"

namespace tdiag::cli {
namespace {

using namespace tdiag::dtensor;

struct report_options {
  std::string input;
  bool json = false;
  std::string to;
  std::size_t top = 10;
  std::string output;
};

void run_report(const report_options& o, command_context& context) {
  const auto r = build_comm_report(read_case_file_strict(o.input), o.input, [](std::int64_t b) {
    return trace::format_bytes(static_cast<std::uint64_t>(b < 0 ? 0 : b));
  });
  if (o.json) {
    write_output(o.output, to_json(r, o.top));
  } else if (!o.to.empty()) {
    write_output(o.output, render(to_report(r, o.top), *parse_report_format(o.to), {}));
  } else {
    write_output(o.output, to_text(r, o.top));
  }
  context.status = exit_clean;
}

const command_registration registration{
    31, [](CLI::App& app, command_context& context) {
      auto* shard = family(
          app, "shard",
          "DTensor sharding: propagate placements, plan redistributions, explain rejections");
      auto o = std::make_shared<report_options>();
      auto* cmd = shard->add_subcommand(
          "report", "Where a recorded DTensor program communicates, why, and how to avoid it");
      cmd->add_option("recording", o->input,
                      "Recording (JSONL case format with source lines; - for stdin)")
          ->required();
      auto* json = cmd->add_flag("--json", o->json, "Write JSON (tensordiag.shard_report/v1)");
      cmd->add_option("--to", o->to,
                      "The findings as a tensordiag report: text, json, github, junit, sarif")
          ->check(CLI::IsMember({"text", "json", "github", "junit", "sarif"}))
          ->excludes(json);
      cmd->add_option("--top", o->top, "Source lines to list (0: all)")->capture_default_str();
      cmd->add_option("-o,--output", o->output, "Output file (default: standard output)");
      cmd->callback([o, &context] { run_report(*o, context); });
    }};

} // namespace
} // namespace tdiag::cli
#endif
