// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag shard validate [--op OP]... [--mesh 2,4]... [--combos N] [--mutations] [--format F] [-o
// OUT]`: validates numerically, on a simulated mesh, every strategy the sharding rules produce over
// a grid of shapes (uneven included) and meshes ([4], [8], [2,2], [2,4], [4,2], [2,2,2] by
// default). With --mutations, checks instead that each deliberately wrong rule of the built-in set
// is caught. Exit status: 0 all valid (all mutations caught), 1 otherwise, 2 for bad usage or an
// unknown op.
#ifdef TDIAG_CLI_HAS_DTENSOR_CHECKS
#  include <tensordiag/core/error.hpp>
#  include <tensordiag/core/file_io.hpp>
#  include <tensordiag/core/report_io.hpp>
#  include <tensordiag/dtensor_checks/codes.hpp>
#  include <tensordiag/dtensor_checks/sim/mutations.hpp>
#  include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>

#  include <fmt/format.h>

#  include <cstdio>
#  include <memory>
#  include <string>
#  include <unistd.h>
#  include <vector>

#  include "command.hpp"

namespace tdiag::cli {
namespace {

using namespace tdiag::dtensor;

struct validate_options {
  std::vector<std::string> ops;
  std::vector<std::string> meshes;
  std::size_t combos = 256;
  bool mutations = false;
  std::string format = "text";
  std::string output;
};

void emit(const report& r, const validate_options& o) {
  const auto format = parse_report_format(o.format).value_or(report_format::text);
  text_options text;
  text.color = o.output.empty() && format == report_format::text && colour_wanted(STDOUT_FILENO);
  const auto rendered = render(r, format, text);
  write_output(o.output, rendered);
}

sim::grid_options grid_for(const validate_options& o) {
  sim::grid_options g;
  g.ops = o.ops;
  g.max_placement_combos = o.combos;
  if (!o.meshes.empty()) {
    g.meshes.clear();
    for (const auto& m : o.meshes)
      g.meshes.push_back(parse_mesh(m));
  }
  return g;
}

int run_grid(const validate_options& o) {
  const auto result = sim::validate_rule_set(op_registry::builtin(),
                                             sim::reference_registry::builtin(), grid_for(o));
  report r;
  r.metadata = make_report_metadata("tdiag shard validate");
  for (const auto& op : result.ops) {
    fmt::print(
        stderr,
        "{:32} {:6} strategies {:6} passed {:4} failed ({} calls, {} rejected by the rule)\n",
        op.op, op.strategies, op.passed, op.failed, op.calls, op.rejected);
    for (const auto& d : op.failures)
      r.diagnostics.push_back(d);
  }
  fmt::print(stderr, "validated {} strategies of {} ops: {} wrong\n", result.strategies(),
             result.ops.size(), result.failed());
  if (o.format != "text" || !r.diagnostics.empty())
    emit(r, o);
  return result.ok() ? exit_clean : exit_findings;
}

int run_mutations(const validate_options& o) {
  report r;
  r.metadata = make_report_metadata("tdiag shard validate --mutations");
  std::size_t caught = 0;
  for (const auto& m : sim::builtin_mutations()) {
    auto g = grid_for(o);
    g.ops = {m.op};
    g.max_failures_kept = 1;
    const auto result = sim::validate_rule_set(sim::mutated_registry(op_registry::builtin(), m),
                                               sim::reference_registry::builtin(), g);
    const bool hit = !result.ok();
    caught += hit ? 1 : 0;
    fmt::print(stderr, "{:7} {:38} {} ({} of {} strategies wrong)\n", hit ? "caught" : "MISSED",
               m.name, m.description, result.failed(), result.strategies());
    if (!hit) {
      diagnostic d;
      d.code = tdiag::dtensor::codes::wrong_values;
      d.title = "a wrong rule was not caught";
      d.message =
          fmt::format("mutation {} of {} ({}) passed validation", m.name, m.op, m.description);
      d.hint = "widen the argument grid or the placement combinations (--combos)";
      r.diagnostics.push_back(std::move(d));
    }
  }
  fmt::print(stderr, "{} of {} wrong rules caught\n", caught, sim::builtin_mutations().size());
  if (o.format != "text" || !r.diagnostics.empty())
    emit(r, o);
  return caught == sim::builtin_mutations().size() ? exit_clean : exit_findings;
}

void run_validate(const validate_options& o, command_context& context) {
  try {
    context.status = o.mutations ? run_mutations(o) : run_grid(o);
  } catch (const input_error& e) {
    fmt::print(stderr, "tdiag shard validate: {}\n", e.what());
    context.status = exit_usage;
  }
}

const command_registration registration{
    31, [](CLI::App& app, command_context& context) {
      auto* shard = family(
          app, "shard",
          "DTensor sharding: propagate placements, plan redistributions, explain rejections");
      auto opts = std::make_shared<validate_options>();
      auto* validate = shard->add_subcommand(
          "validate",
          "Validate every strategy of the sharding rules numerically on a simulated mesh");
      validate->add_option("--op", opts->ops,
                           "Op to validate (repeatable; default: every op with a reference)");
      validate->add_option("--mesh", opts->meshes,
                           "Mesh shape, e.g. 2,4 (repeatable; default: 4 8 2,2 2,4 4,2 2,2,2)");
      validate
          ->add_option("--combos", opts->combos,
                       "Input placement combinations per shape and mesh (sampled above)")
          ->capture_default_str();
      validate->add_flag("--mutations", opts->mutations,
                         "Check that each deliberately wrong rule is caught");
      validate->add_option("--format", opts->format, "Report format for the failures")
          ->check(CLI::IsMember({"text", "json", "github", "sarif", "junit"}))
          ->capture_default_str();
      validate->add_option("-o,--output", opts->output, "Report file (default: standard output)");
      validate->callback([opts, &context] { run_validate(*opts, context); });
    }};

} // namespace
} // namespace tdiag::cli
#endif
