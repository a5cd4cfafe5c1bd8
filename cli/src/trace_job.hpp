// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one way `tdiag trace` commands read their input: a job (files, a folder or a glob, one
// trace per rank) through trace::load_job, each trace's import warnings printed on stderr; and
// the options that open part of every trace (--device, --window: trace/trace_select.hpp).
#pragma once

#if defined(TDIAG_CLI_HAS_TRACE)

#  include <tensordiag/trace/job_analysis.hpp>
#  include <tensordiag/trace/job_load.hpp>

#  include <filesystem>
#  include <memory>
#  include <span>
#  include <string>
#  include <string_view>
#  include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace tdiag::cli {

/// `--device N` and `--window A:B`, added to a command by add_selection_options(); the parsed
/// selection, checked when the command line is, stays valid while the command runs.
[[nodiscard]] std::shared_ptr<trace::trace_selection> add_selection_options(CLI::App* cmd);

/// Loads the job, prints every trace's warnings ("tdiag: warning: ... [CODE]"); throws what
/// trace::load_job throws.
[[nodiscard]] std::vector<trace::job_member>
load_trace_job(const std::vector<std::string>& inputs, const trace::job_load_options& options = {});

/// A file a command writes, and the option that names it ("-o").
struct named_output {
  std::filesystem::path path;
  std::string_view option;
};

/// Throws TDIAG-CORE-005's one line when one of `outputs` is one of `files` (the same file, by
/// identity): writing it would replace the trace the command reports on. A path yet to be
/// written, empty or "-" is none. Each file is looked at once, whatever the number of outputs.
void refuse_output_over_an_input(std::span<const named_output> outputs,
                                 std::span<const std::filesystem::path> files);
/// The same before the job is loaded: `inputs` (files, folders, globs) are expanded once, and
/// only where one of the outputs exists.
void refuse_output_over_an_input(std::span<const named_output> outputs,
                                 const std::vector<std::string>& inputs);

} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
