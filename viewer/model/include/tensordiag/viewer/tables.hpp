// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The tables of the tables panel, built from a loaded trace and tensordiag JSON reports.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>
#include <tensordiag/viewer/table_model.hpp>

#include <span>
#include <string>

namespace tdiag::view {

/// Kernel name, count, total, mean, max; a row selects the longest instance.
[[nodiscard]] table_model kernels_table(const trace::trace& t);
/// Allocation site (innermost user frame), allocations, bytes, largest; a row selects the
/// largest allocation from the site.
[[nodiscard]] table_model allocation_sites_table(const trace::trace& t);
/// Allocations alive at the end, grouped by site: live count and bytes; the top site first.
[[nodiscard]] table_model leaks_table(const trace::trace& t);
/// Each oom event: time, device, requested, device free, allocated and reserved then, verdict.
[[nodiscard]] table_model oom_table(const trace::trace& t);
/// Assertion failures: from the trace's assertion events and from reports' TDIAG-DSA
/// diagnostics.
[[nodiscard]] table_model assertions_table(const trace::trace& t, std::span<const report> reports);
/// Every diagnostic of the reports (DTensor checks included): severity, code, title, location.
[[nodiscard]] table_model diagnostics_table(std::span<const report> reports);

/// "function (file:line)" of the innermost frame of `stack` that is user code: the innermost
/// Python frame outside torch and site-packages, else the innermost frame of a known file
/// outside them, else the innermost frame.
[[nodiscard]] std::string site_name(const trace::trace& t, trace::stack_id stack);

/// The time of a diagnostic on the trace axis, from a `time_ns` field or from a `launch_id`
/// field naming a kernel of the trace; false when it has neither.
[[nodiscard]] bool diagnostic_time(const trace::trace& t, const diagnostic& d, std::int64_t& time);

} // namespace tdiag::view
