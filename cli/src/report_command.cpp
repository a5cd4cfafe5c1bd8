// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag report convert IN.json --to text|json|github|junit|sarif [-o OUT]` and
// `tdiag report merge A.json B.json ... [-o ALL.json]`. Exit status 1 when the report holds an
// error-severity finding, 2 for bad usage or unreadable input (main() prints the one line).
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/core/report_merge.hpp>

#include <fmt/format.h>

#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "command.hpp"

namespace tdiag::cli {
namespace {

struct output_options {
  std::string format = "text";
  std::string path;
  std::string color = "auto";
};

void add_output_options(CLI::App* command, output_options& o, std::string_view default_format) {
  o.format = std::string(default_format);
  command->add_option("--to", o.format, "Output format")
      ->check(CLI::IsMember({"text", "json", "github", "junit", "sarif"}))
      ->capture_default_str();
  command->add_option("-o,--output", o.path, "Output file (default: standard output)");
  command
      ->add_option("--color", o.color,
                   "Colour in text output: auto (a terminal and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
}

void emit(const report& r, const output_options& o, command_context& context) {
  const auto format = parse_report_format(o.format).value_or(report_format::text);
  const bool to_stdout = o.path.empty() || o.path == "-";
  text_options text;
  text.color =
      o.color == "always" || (o.color == "auto" && to_stdout && colour_wanted(STDOUT_FILENO));
  const std::string rendered = render(r, format, text);
  write_output(o.path, rendered);
  context.status = r.has_errors() ? exit_findings : exit_clean;
}

struct convert_state {
  std::string input;
  output_options output;
};

struct merge_state {
  std::vector<std::string> inputs;
  output_options output;
};

const command_registration registration(10, [](CLI::App& app, command_context& context) {
  auto* report_app = family(app, "report", "Convert and merge tensordiag reports");

  auto convert_data = std::make_shared<convert_state>();
  auto* convert = report_app->add_subcommand(
      "convert", "Render a tensordiag.report/v1 JSON file as text, JSON, GitHub Actions "
                 "workflow commands, JUnit XML or SARIF 2.1.0");
  convert->add_option("input", convert_data->input, "Report file (JSON; - for standard input)")
      ->required();
  add_output_options(convert, convert_data->output, "text");
  convert->callback([convert_data, &context] {
    emit(read_report_file(convert_data->input), convert_data->output, context);
  });

  auto merge_data = std::make_shared<merge_state>();
  auto* merge_app = report_app->add_subcommand(
      "merge",
      "Merge reports (e.g. one per rank) into one; diagnostics keep their rank as a field");
  merge_app->add_option("inputs", merge_data->inputs, "Report files (JSON; - for standard input)")
      ->required();
  add_output_options(merge_app, merge_data->output, "json");
  merge_app->callback([merge_data, &context] {
    std::vector<report> reports;
    for (const auto& path : merge_data->inputs)
      reports.push_back(read_report_file(path));
    emit(merge_reports(reports), merge_data->output, context);
  });
});

} // namespace
} // namespace tdiag::cli
