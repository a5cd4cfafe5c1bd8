// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag shard check CASES.jsonl [--format jsonl|text|json|github|sarif] [-o OUT] [--score]` and
// `tdiag shard explain OP --mesh 2,4 --arg 'f32[12,1] (S(0),P(sum))' --arg ... [--format
// text|json]`. Exit status: 0 clean, 1 when a case or the explained call is rejected, 2 for bad
// usage, unreadable input, malformed lines or an op without a rule.
#ifdef TDIAG_CLI_HAS_DTENSOR_CHECKS
#  include <tensordiag/core/error.hpp>
#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/dtensor_checks/case_check.hpp>
#  include <tensordiag/dtensor_checks/case_io.hpp>
#  include <tensordiag/dtensor_checks/explain.hpp>
#  include <tensordiag/dtensor_checks/scoring.hpp>

#  include <fmt/format.h>

#  include <cstdio>
#  include <iterator>
#  include <string>
#  include <unistd.h>
#  include <vector>

#  include "command.hpp"

namespace tdiag::cli {
namespace {

using namespace tdiag::dtensor;

struct check_options {
  std::string input;
  std::string format = "jsonl";
  std::string output;
  bool score = false;
};

void run_check(const check_options& o, command_context& context) {
  const auto check = check_cases(read_case_file(o.input));
  const auto& file = check.file;
  for (const auto& e : file.errors) {
    fmt::print(stderr, "tdiag: {}:{}: malformed case{}: {}\n", printable(o.input), e.line,
               e.id.empty() ? "" : fmt::format(" '{}'", printable(e.id)), printable(e.message));
  }
  if (o.format == "jsonl") {
    write_output(o.output, to_jsonl(check));
  } else {
    const auto format = parse_report_format(o.format).value_or(report_format::text);
    text_options text;
    text.color = (o.output.empty() || o.output == "-") && colour_wanted(STDOUT_FILENO);
    write_output(o.output, render(check_report(check, o.input), format, text));
  }
  if (o.score) {
    const auto s = score_answers(file.cases, check.answers);
    fmt::print(stderr,
               "score: {}/{} cases agree with the recorded outcome ({:.2f}%): ok {}/{}, user_error "
               "rejected {}/{}, "
               "limitation {} (rejected {}); collectives agree on {}/{} ok cases ({:.2f}%)\n",
               s.ok_agree + s.user_error_rejected + s.limitation_cases, s.total,
               100.0 * s.agreement(), s.ok_agree, s.ok_cases, s.user_error_rejected,
               s.user_error_cases, s.limitation_cases, s.limitation_rejected, s.comms_agree,
               s.ok_cases, 100.0 * s.comms_agreement());
  }
  fmt::print(stderr, "tdiag shard check: {} cases, {} rejected, {} malformed lines\n",
             file.cases.size(), check.rejected, file.errors.size());
  context.status =
      !file.errors.empty() ? exit_usage : (check.rejected != 0 ? exit_findings : exit_clean);
}

struct explain_options {
  std::string op;
  std::string mesh;
  std::vector<std::string> args;
  std::string format = "text";
  bool all = false;
};

void run_explain(const explain_options& o, command_context& context) {
  op_call call;
  call.mesh = parse_mesh(o.mesh);
  const auto& registry = op_registry::builtin();
  const auto* rule = registry.resolve(o.op);
  if (rule == nullptr) {
    std::string name = o.op.rfind("aten.", 0) == 0 ? o.op : "aten." + o.op;
    fmt::print(stderr, "tdiag: no sharding rule for {}; nearest known ops: {}\n", name,
               fmt::join(registry.nearest(o.op, 3), ", "));
    context.status = exit_usage;
    return;
  }
  call.op = rule->name;
  for (const auto& a : o.args)
    call.args.push_back(parse_arg(a, call.mesh.ndim()));
  try {
    const auto result = propagate(call, registry);
    write_output("", o.format == "json" ? explain_json(call, result) + "\n"
                                        : explain_text(call, result, o.all));
    context.status = exit_clean;
  } catch (const sharding_error& e) {
    report r;
    r.metadata = make_report_metadata("tdiag shard explain");
    r.diagnostics.push_back(e.diag());
    write_output("", o.format == "json" ? to_json(r)
                                        : to_text(r, text_options{colour_wanted(STDOUT_FILENO)}));
    context.status = e.error_kind() == error_class::unknown_op ? exit_usage : exit_findings;
  }
}

const command_registration registration{
    30, [](CLI::App& app, command_context& context) {
      auto* shard = family(
          app, "shard",
          "DTensor sharding: propagate placements, plan redistributions, explain rejections");

      auto check_opts = std::make_shared<check_options>();
      auto* check = shard->add_subcommand(
          "check", "Propagate every case of a JSONL corpus and answer per case");
      check
          ->add_option("cases", check_opts->input,
                       "Case file (JSONL, shared/README.md format; - for stdin)")
          ->required();
      check
          ->add_option("--format", check_opts->format,
                       "Output: jsonl answers, or rejections as a report")
          ->check(CLI::IsMember({"jsonl", "text", "json", "github", "sarif", "junit"}))
          ->capture_default_str();
      check->add_option("-o,--output", check_opts->output,
                        "Output file (default: standard output)");
      check->add_flag("--score", check_opts->score,
                      "Score against the cases' recorded `expect` (to stderr)");
      check->callback([check_opts, &context] { run_check(*check_opts, context); });

      auto explain_opts = std::make_shared<explain_options>();
      auto* explain = shard->add_subcommand(
          "explain", "Explain one op call: candidates, costs, choice and plan");
      explain->add_option("op", explain_opts->op, "Op: aten.mm.default, mm, add_, ...")->required();
      explain->add_option("--mesh", explain_opts->mesh, "Mesh shape, e.g. 2,4")->required();
      explain
          ->add_option("--arg", explain_opts->args,
                       "Positional argument, in aten order: 'f32[12,1] (S(0),P(sum))', 1, '[1,2]', "
                       "2.0, true")
          // One value per --arg: CLI11 would otherwise split '[2,8]' into two arguments.
          ->allow_extra_args(false);
      explain->add_option("--format", explain_opts->format, "text or json")
          ->check(CLI::IsMember({"text", "json"}))
          ->capture_default_str();
      explain->add_flag("--all", explain_opts->all, "Also list candidates of infinite cost");
      explain->callback([explain_opts, &context] { run_explain(*explain_opts, context); });
    }};

} // namespace
} // namespace tdiag::cli
#endif
