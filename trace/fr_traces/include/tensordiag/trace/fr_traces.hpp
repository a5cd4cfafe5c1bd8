// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A Flight Recorder verdict beside the same job's traces (one per rank, as `tdiag trace
// analyze` loads them): for each culprit, the kernels its GPU ran last before its trace ends,
// and the ranks the trace analysis found arriving last at the collectives (its stragglers, as
// analyze_job computed them: nothing is recomputed here). The result goes into
// job_report::traces, which to_json() and to_text() render.
#pragma once

#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace tdiag::trace::fr {

struct join_options {
  std::size_t last_kernels = 5; ///< per culprit
};

/// Joins `verdict` with the job's traces `job` (load_job) and their analysis (analyze_job over
/// rank_traces(job)). `run` names the traces' inputs in the output. Pure: no I/O.
[[nodiscard]] trace_context join_traces(const job_report& verdict, std::span<const job_member> job,
                                        const job_analysis_result& analysis, std::string run,
                                        const join_options& options = {});

} // namespace tdiag::trace::fr
