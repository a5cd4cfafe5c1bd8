// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace timeline --at T`: the allocator state (segments and blocks) of every device at
// one instant, replayed from the memory events (allocator_replay).
// Diagnostic codes: TDIAG-TR-240 (a device's totals), 241 (one segment).
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace {

struct timeline_lane {
  lane_id lane = 0;
  std::int32_t device = 0;
  std::size_t event_index = 0; ///< events applied
  std::size_t event_count = 0;
  allocator_state state;
};

struct timeline_result {
  std::int64_t time = 0; ///< on the trace axis
  std::vector<timeline_lane> lanes;
};

/// The state of every memory lane at `time` (after every event at or before it).
[[nodiscard]] timeline_result timeline_at(const trace& t, std::int64_t time);
/// The state after the first `index` events of each memory lane (index clamped per lane).
[[nodiscard]] timeline_result timeline_after_events(const trace& t, std::size_t index);
/// The state at `at` as the CLI's `--at` and Python read it: a time since the trace's start
/// (1.5s, 250ms, bare seconds) or a share of its span (40%). Where the memory events carry no
/// times (all at one instant: a snapshot without time_us), a share is of each lane's events
/// (50%: after half of them; the report says after how many) and a time is refused, since any
/// would name the end. std::nullopt, with `why`, when `at` names no instant of the trace.
[[nodiscard]] std::optional<timeline_result> timeline_at_text(const trace& t, std::string_view at,
                                                              std::string* why);

[[nodiscard]] report timeline_report(const trace& t, const timeline_result& r,
                                     std::size_t max_segments = 20, std::size_t max_blocks = 8);

} // namespace tdiag::trace
