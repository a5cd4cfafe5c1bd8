// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace leaks`: the allocations still alive at the end of a trace, grouped by allocation
// site (the innermost user frame, then the full stack), with bytes, counts and growth per
// repeated iteration. Sites that kept allocations from most iterations since they began (the
// signature of a leak: a list that grows every step) come first, then static ones (weights,
// optimizer state, workspaces). A site kept from a few scattered iterations is not growing:
// sources without stacks (Kineto [memory]) put everything in one site, and a workspace made in
// step 1, optimizer state made in step 2 and the last step's loss are three iterations.
// Diagnostic codes: TDIAG-TR-210 growing site (warning), 211 static site (note), 212 overview.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tdiag::trace {

/// One live allocation at the end of the trace.
struct live_allocation {
  std::int32_t device = 0;
  std::uint64_t address = 0;
  std::uint64_t bytes = 0;
  std::int64_t time = 0; ///< when it was allocated; INT64_MIN when before the recorded history
  stack_id stack = no_stack;
};

struct leak_site {
  frame_id site = 0;         ///< innermost user frame (0 when unknown)
  stack_id stack = no_stack; ///< the full stack holding the most bytes at this site
  std::size_t stacks = 0;    ///< distinct full stacks at this site
  std::uint64_t live_bytes = 0;
  std::size_t live_count = 0;
  std::size_t iterations =
      0; ///< distinct iterations (or allocation times) its live blocks come from
  std::uint64_t growth_per_iteration = 0;
  std::int64_t first_time = 0, last_time = 0;
  bool growing = false;
  /// With iteration markers: iterations from the site's first kept allocation to the last
  /// iteration of the trace, and the share of them that kept an allocation here (a leak that
  /// grows every step is near 1). 0 without markers.
  std::size_t iteration_span = 0;
  double coverage = 0;
};

struct leak_result {
  std::vector<live_allocation> live;
  std::uint64_t live_bytes = 0;
  std::size_t iterations = 0;   ///< iterations found in the trace (0 = no step markers)
  std::string iteration_source; ///< "ProfilerStep ranges", "annotation 'X'", or empty
  std::vector<leak_site> sites; ///< growing first, then by live bytes
  /// Whether any live allocation has a stack (Kineto [memory] events have none: one site).
  bool has_stacks = false;
  /// True when `live` comes from a dumped allocator state (a snapshot); false when from allocs
  /// without a free, i.e. alive when the recording stopped, not necessarily at exit.
  bool from_dump = false;
  /// With a dump: allocations the events leave open (an alloc, no free) that the dumped state
  /// does not hold. The dump and its history disagree; `live` follows the dump.
  std::size_t open_not_in_dump = 0;
  std::uint64_t open_not_in_dump_bytes = 0;
};

/// Allocations alive at the end: from the dumped allocator state when there is one, else from
/// alloc events without a matching free.
/// `open_not_in_dump`, when given, receives the allocations the events leave open that a dump
/// does not hold (count, bytes).
[[nodiscard]] std::vector<live_allocation>
live_allocations(const trace& t, std::pair<std::size_t, std::uint64_t>* open_not_in_dump = nullptr);

/// The warning (TDIAG-TR-213) that `open` allocations of `t` (`bytes` in all), which its memory
/// events leave open, are not allocated in its dump; leaks and diff report it alike.
[[nodiscard]] diagnostic history_disagrees_warning(const trace& t, std::size_t open,
                                                   std::uint64_t bytes);
/// Iteration boundaries (start times, sorted): profiler steps, else the most repeated
/// annotation; `source` says which. Empty when the trace has neither.
[[nodiscard]] std::vector<std::int64_t> iteration_starts(const trace& t,
                                                         std::string* source = nullptr);

[[nodiscard]] leak_result find_leaks(const trace& t);
[[nodiscard]] report leak_report(const trace& t, const leak_result& r, std::size_t top = 10);

} // namespace tdiag::trace
