// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The op-level diff of two runs (or two jobs), HTA's TraceDiff: every host operator, runtime
// call, annotation and GPU row by name, its count and total time in A and in B, and whether it
// was added, removed, or occurs more, fewer or as many times in B.
//
// Diagnostic codes: TDIAG-TR-234 (op diff overview), TDIAG-TR-235 (an op changed).
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/diff_analysis.hpp>
#include <tensordiag/trace/job_analysis.hpp>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace tdiag::trace {

/// HTA's ops_diff categories: added (only in B), removed (HTA's "deleted": only in A), and, in
/// both, increased, decreased or unchanged in count.
enum class op_change : std::uint8_t { added, removed, increased, decreased, unchanged };
inline constexpr std::size_t op_change_count = 5;
[[nodiscard]] std::string_view to_string(op_change c) noexcept;

struct op_diff_row {
  std::string name;
  bool gpu = false; ///< a GPU row (kernel, memcpy/memset, sync); else a host row
  std::size_t count_a = 0, count_b = 0;
  double us_a = 0, us_b = 0; ///< total time
  op_change change = op_change::unchanged;
  [[nodiscard]] double delta_us() const noexcept { return us_b - us_a; }
};

struct op_diff {
  std::vector<op_diff_row> rows; ///< by |delta_us|, largest first, then by name
  std::array<std::size_t, op_change_count> by_change{};
  double total_us_a = 0, total_us_b = 0;
};

/// Every rank of A against every rank of B, summed over ranks; times through the analyses'
/// clock (options.hta_compat: HTA's whole-us rounding). Thread-safe for const traces.
[[nodiscard]] op_diff diff_ops(std::span<const rank_trace> a, std::span<const rank_trace> b,
                               const analysis_options& options = {});

/// The diff as JSON, schema `tensordiag.op-diff/v1` (docs/analysis.md).
[[nodiscard]] std::string op_diff_json(const op_diff& diff);

/// Appends the diff to a report: an overview (TDIAG-TR-234) and the `top` ops whose time
/// changed most (TDIAG-TR-235), A and B named by `label_a` / `label_b`.
void add_op_diff(report& out, const op_diff& diff, std::string_view label_a,
                 std::string_view label_b, std::size_t top = 10);

/// What `tdiag trace diff A B` reports (and tensordiag.trace's Trace.diff): the memory and kernel
/// diff of every rank both have (of the two traces when each side is one trace), then `ops`, the
/// op-level diff of the whole runs, when it has rows. `pair_diffs`, when given, receives each
/// compared pair's diff_result in report order.
[[nodiscard]] report run_diff_report(std::span<const rank_trace> a, std::span<const rank_trace> b,
                                     const op_diff& ops, std::string_view label_a,
                                     std::string_view label_b, std::size_t top = 10,
                                     std::vector<diff_result>* pair_diffs = nullptr);

} // namespace tdiag::trace
