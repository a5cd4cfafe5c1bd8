// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#if defined(TDIAG_CLI_HAS_TRACE)

#  include "trace_job.hpp"

#  include <tensordiag/core/codes.hpp>
#  include <tensordiag/core/error.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/trace/selection_options.hpp>

#  include <fmt/format.h>

#  include <cstdio>

#  include "command.hpp"

namespace tdiag::cli {

std::shared_ptr<trace::trace_selection> add_selection_options(CLI::App* cmd) {
  auto select = std::make_shared<trace::trace_selection>();
  trace::add_selection_options(*cmd, *select); // *select lives as long as the command's callback
  return select;
}

std::vector<trace::job_member> load_trace_job(const std::vector<std::string>& inputs,
                                              const trace::job_load_options& options) {
  std::vector<diagnostic> skipped;
  auto job = trace::load_job(inputs, options, &skipped);
  for (const auto& w : skipped)
    fmt::print(stderr, "tdiag: {}: {} [{}]\n", to_string(w.level), printable(w.message), w.code);
  for (const auto& m : job)
    for (const auto& w : m.loaded.warnings)
      fmt::print(stderr, "tdiag: {}: {} [{}]\n", to_string(w.level), printable(w.message), w.code);
  return job;
}

void refuse_output_over_an_input(const std::filesystem::path& output,
                                 const std::vector<std::string>& inputs, std::string_view option) {
  std::error_code ec;
  if (output.empty() || output == "-" || !std::filesystem::exists(output, ec))
    return;
  std::vector<diagnostic> skipped; // said when the job loads
  for (const auto& input : trace::expand_job_inputs(inputs, &skipped))
    if (std::filesystem::equivalent(input, output, ec))
      throw_input_error(codes::cannot_write, "the output is an input",
                        fmt::format("{}: {} names a trace being read; what the command writes "
                                    "would replace it (write it elsewhere)",
                                    printable(output.string()), option));
}

} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
