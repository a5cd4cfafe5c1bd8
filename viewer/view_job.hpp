// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A job in the viewer: several traces (files, a folder or a glob, one per rank) loaded with
// trace::load_job, analysed with trace::analyze_job and merged with trace::merge_job into the
// one trace the timeline and memory views draw, its tracks titled and grouped by rank. The Job
// tab (view_job.cpp) presents the analysis; it computes nothing of its own.
#pragma once

#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_merge.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "document.hpp"

namespace tdiag::view {

struct job_document {
  trace::job_analysis_result analysis;   ///< what tdiag trace analyze computes (exact mode)
  std::vector<trace::merged_lane> lanes; ///< per lane of the document's trace: rank and origin
  std::vector<std::string> sources;      ///< per rank (analysis order): the file
};

/// True when the inputs are a job rather than one trace: several of them, a folder or a glob.
[[nodiscard]] bool is_job_input(std::span<const std::filesystem::path> traces);

/// Loads (the selected part of every rank), analyses and merges a job and builds every
/// view-model of the merged trace. Throws what trace::load_job throws.
[[nodiscard]] std::unique_ptr<document>
load_job_document(std::span<const std::filesystem::path> inputs, load_progress& progress,
                  const trace::trace_selection& select = {});

} // namespace tdiag::view
