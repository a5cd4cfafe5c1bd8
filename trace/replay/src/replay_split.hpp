// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: one memory lane's forward replay (what for_each_memory_sample visits) on several
// threads, with the answers of one (replay_split.cpp).
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/trace.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <span>

namespace tdiag::trace::detail {

/// Events a thread replays forward at least (the tests set it small to split short histories).
inline std::atomic<std::size_t> replay_split_min_events{32768};

/// Receives the `k`th state a backward pass leaves at a cut (derive_start_cut).
using cut_visitor = std::function<void(std::size_t k, allocator_state state)>;

/// initial_allocator_state(t, lane, mismatches), with `at_cut(k, state)` called as the backward
/// pass from the dump reaches cuts[k] (ascending, each below the lane's event count): the state
/// before event cuts[k]. The last cut comes first. (allocator_replay.cpp)
allocator_state derive_start_cut(const trace& t, lane_id lane, std::span<const std::size_t> cuts,
                                 const cut_visitor& at_cut, std::size_t* mismatches = nullptr);

/// What a split replay did (for the tests): the parts it made, and those whose replay on
/// another thread was taken.
struct split_stats {
  std::size_t parts = 1, taken = 0;
};

/// The samples for_each_memory_sample visits for a lane it replays (no reported totals, at
/// least one event): the totals before the first event, then after each. Returns the events
/// that did not match the state replayed to them. On up to `threads` threads.
std::size_t replay_samples(const trace& t, lane_id lane, unsigned threads,
                           const std::function<void(const memory_sample&)>& visit,
                           split_stats* stats = nullptr);

} // namespace tdiag::trace::detail
