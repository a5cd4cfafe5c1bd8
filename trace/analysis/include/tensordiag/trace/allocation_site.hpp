// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Where an allocation comes from, as a user would say it: the innermost frame of the user's own
// code (not PyTorch, not the Python standard library, not C++ internals), then the full stack.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tdiag::trace {

/// True for frames inside PyTorch or Python itself: files under torch/, site-packages/,
/// dist-packages/, the standard library, `<frozen ...>` and other `<...>` pseudo-files, and C++
/// frames (unknown file "??" or no line).
[[nodiscard]] bool is_internal_frame(const trace& t, const frame& f);
/// The innermost user frame of `stack`; when there is none, the innermost frame with a line;
/// 0 (no frame) for an empty stack.
[[nodiscard]] frame_id user_frame(const trace& t, stack_id stack);
/// "train.py:42 (main)" or "<unknown site>".
[[nodiscard]] std::string describe_frame(const trace& t, frame_id id);
/// The frame as a report location (file, line, function).
[[nodiscard]] source_location frame_location(const trace& t, frame_id id);
/// Every alloc event of one allocation site (user_frame() of its stack).
struct allocation_site_total {
  frame_id site = 0;
  std::size_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t largest = 0;
  std::size_t largest_event = 0; ///< index in t.memory.all() of the largest alloc
};
/// Alloc events grouped by site, most bytes first (then by site id).
[[nodiscard]] std::vector<allocation_site_total> allocation_sites(const trace& t);
/// describe_frame(t, user_frame(t, stack)): how every front end names a stack's site.
[[nodiscard]] std::string describe_site(const trace& t, stack_id stack);

/// The stack for a diagnostic, innermost first, at most `limit` frames.
[[nodiscard]] std::vector<stack_frame> report_stack(const trace& t, stack_id stack,
                                                    std::size_t limit = 24);

} // namespace tdiag::trace
