// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the importers' one line for an input that will not fit. An import streams its file
// and extrapolates, from the share read, the events and the memory the whole will need; past
// the memory budget it stops at once (never at std::bad_alloc) with the file, the events
// counted and estimated, the memory needed, the budget and what to do.
#pragma once

#include <cstdint>
#include <string_view>

namespace tdiag::trace::detail {

struct import_progress {
  std::string_view code;  ///< the diagnostic's code (a snapshot's, a Kineto trace's)
  std::string_view title; ///< and its title
  std::string_view file;
  std::uint64_t events_counted = 0;
  /// The share of the file read, in (0, 1]; the estimates are the counts divided by it (by 1
  /// when it is 0: nothing to extrapolate from).
  double share_read = 1.0;
  std::uint64_t bytes_so_far = 0; ///< what the counted events hold
};

/// The events and bytes the whole input will need, extrapolated from `p`.
[[nodiscard]] std::uint64_t estimated_events(const import_progress& p) noexcept;
[[nodiscard]] std::uint64_t estimated_bytes(const import_progress& p) noexcept;

/// Throws the one line (tdiag::input_error with `p.code`) when the estimate exceeds the memory
/// budget: TDIAG_MEMORY_LIMIT for the whole import, else half the memory available now for what
/// is still to come.
void check_import_budget(const import_progress& p);

/// Throws it regardless: `from_bad_alloc` when the allocator refused before the estimate did.
[[noreturn]] void refuse_import(const import_progress& p, bool from_bad_alloc);

} // namespace tdiag::trace::detail
