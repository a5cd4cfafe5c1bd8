// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The tables of the tables panel, built from a loaded trace and tensordiag JSON reports. The
// allocation-site, leak and OOM tables format what trace/ computes (allocation_sites(),
// find_leaks(), find_ooms(): the functions `tdiag trace leaks/oom` call); nothing here decides
// a site, a leak or a verdict.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/trace.hpp>
#include <tensordiag/viewer/table_model.hpp>

#include <span>
#include <string>
#include <vector>

namespace tdiag::view {

/// Kernel name, count, total, mean, max; a row selects the longest instance.
[[nodiscard]] table_model kernels_table(const trace::trace& t);
/// trace::allocation_sites(): site, allocations, bytes, largest; a row selects the largest
/// allocation from the site.
[[nodiscard]] table_model allocation_sites_table(const trace::trace& t);
/// trace::find_leaks(): one row per leak site in its order (growing first): live count and
/// bytes, growth per iteration, verdict; a row selects the site's largest live allocation.
[[nodiscard]] table_model leaks_table(const trace::trace& t, const trace::leak_result& leaks);
[[nodiscard]] table_model leaks_table(const trace::trace& t);
/// trace::find_ooms(): time, device, requested, device free, allocated and reserved then,
/// verdict (trace::to_string(oom_verdict)); a row selects the oom event.
[[nodiscard]] table_model oom_table(const trace::trace& t,
                                    const std::vector<trace::oom_finding>& ooms);
[[nodiscard]] table_model oom_table(const trace::trace& t);
/// Assertion failures: from the trace's assertion events and from reports' TDIAG-DSA
/// diagnostics.
[[nodiscard]] table_model assertions_table(const trace::trace& t, std::span<const report> reports);
/// Every diagnostic of the reports (DTensor checks included): severity, code, title, location.
[[nodiscard]] table_model diagnostics_table(std::span<const report> reports);

/// trace::describe_site(): the allocation site of `stack` as every front end names it.
[[nodiscard]] std::string site_name(const trace::trace& t, trace::stack_id stack);

/// The time of a diagnostic on the trace axis, from a `time_ns` field or from a `launch_id`
/// field naming a kernel of the trace; false when it has neither.
[[nodiscard]] bool diagnostic_time(const trace::trace& t, const diagnostic& d, std::int64_t& time);

} // namespace tdiag::view
