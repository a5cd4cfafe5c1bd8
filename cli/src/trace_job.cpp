// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#if defined(TDIAG_CLI_HAS_TRACE)

#  include "trace_job.hpp"

#  include <tensordiag/core/codes.hpp>
#  include <tensordiag/core/error.hpp>
#  include <tensordiag/core/printable.hpp>
#  include <tensordiag/trace/selection_options.hpp>

#  include <fmt/format.h>

#  include <algorithm>
#  include <cstdio>
#  include <set>
#  include <sys/stat.h>
#  include <utility>

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

namespace {

// An output that exists (only those can be an input).
bool exists(const named_output& o) {
  std::error_code ec;
  return !o.path.empty() && o.path != "-" && std::filesystem::exists(o.path, ec);
}

} // namespace

void refuse_output_over_an_input(std::span<const named_output> outputs,
                                 std::span<const std::filesystem::path> files) {
  if (std::none_of(outputs.begin(), outputs.end(), exists))
    return;
  // Files by identity (device, inode): a job of 10,000 ranks with an output each is 20,000
  // stat() calls, not 10,000 x 10,000 comparisons.
  std::set<std::pair<dev_t, ino_t>> read;
  struct stat st {};
  for (const auto& f : files)
    if (::stat(f.c_str(), &st) == 0)
      read.emplace(st.st_dev, st.st_ino);
  for (const auto& o : outputs)
    if (exists(o) && ::stat(o.path.c_str(), &st) == 0 && read.contains({st.st_dev, st.st_ino}))
      throw_input_error(codes::cannot_write, "the output is an input",
                        fmt::format("{}: {} names a trace being read; what the command writes "
                                    "would replace it (write it elsewhere)",
                                    printable(o.path.string()), o.option));
}

void refuse_output_over_an_input(std::span<const named_output> outputs,
                                 const std::vector<std::string>& inputs) {
  if (std::none_of(outputs.begin(), outputs.end(), exists))
    return;
  std::vector<diagnostic> skipped; // said when the job loads
  refuse_output_over_an_input(outputs, trace::expand_job_inputs(inputs, &skipped));
}

} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
