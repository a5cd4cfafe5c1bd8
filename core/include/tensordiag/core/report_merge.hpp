// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Merging reports (e.g. one per rank) into one: what `tdiag report merge` and the Python
// package's `tensordiag.report.merge` both compute.
#pragma once

#include <tensordiag/core/report.hpp>

#include <span>

namespace tdiag {

/// One report from many: the first report's metadata; a `rank` field on every diagnostic that
/// came from a report with a rank (and a `device` field when the inputs name different devices),
/// so nothing is lost; a report-level rank or device only when all inputs agree on it. An empty
/// input gives an empty report. Never throws except std::bad_alloc.
[[nodiscard]] report merge_reports(std::span<const report> inputs);

} // namespace tdiag
