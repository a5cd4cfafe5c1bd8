// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Flight Recorder dumps in the viewer: a folder (or files, or a glob) of one dump per rank,
// told from traces by trace::fr::looks_like_dumps, loaded with trace::fr::load_dumps and judged
// by trace::fr::analyze, as `tdiag fr analyze` does. The Flight Recorder tab (view_fr.cpp) draws
// the rings per rank (fr_rings.hpp) and the verdict; it computes nothing of its own.
#pragma once

#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/viewer/fr_rings.hpp>

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "document.hpp"

namespace tdiag::view {

struct fr_document {
  std::vector<trace::fr::dump> dumps;
  trace::fr::job_report report; ///< what tdiag fr analyze computes
  fr_rings rings;               ///< its rows per rank
  std::string text;             ///< trace::fr::to_text(report): the verdict as the CLI prints it
};

/// True when the inputs are Flight Recorder dumps (trace::fr::looks_like_dumps).
[[nodiscard]] bool is_fr_input(std::span<const std::filesystem::path> inputs);

/// Loads and analyses the dumps; the document's trace is empty and `fr` holds the verdict.
/// Throws what trace::fr::load_dumps throws.
[[nodiscard]] std::unique_ptr<document>
load_fr_document(std::span<const std::filesystem::path> inputs, load_progress& progress);

} // namespace tdiag::view
