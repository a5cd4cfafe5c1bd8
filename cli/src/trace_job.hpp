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

/// Throws TDIAG-CORE-005's one line when `output` (an option's file, `option` naming it) is one
/// of `inputs` (the files the command reads; folders and globs expanded): writing it would
/// replace the trace it reports on. A path yet to be written, empty or "-" is none.
void refuse_output_over_an_input(const std::filesystem::path& output,
                                 const std::vector<std::string>& inputs, std::string_view option);

} // namespace tdiag::cli

#endif // TDIAG_CLI_HAS_TRACE
