// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Allocated and reserved bytes of one memory lane over time, as a step function: the one
// answer to "how much memory was in use at time T" for `tdiag trace summary` (peaks), the
// viewer's memory curve and anyone else. Allocated means bytes of active_allocated blocks
// (block sizes, as torch.cuda.memory_allocated() and Kineto's "Total Allocated" count them);
// requested is what the program asked for (block sizes minus rounding); reserved is the
// memory taken from the driver (segments; implicit segments do not count).
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace tdiag::trace {

struct memory_sample {
  std::int64_t time = 0;
  std::int64_t allocated = 0;
  std::int64_t requested = 0; ///< -1 when the source does not say (Kineto totals)
  std::int64_t reserved = 0;
  friend bool operator==(const memory_sample&, const memory_sample&) = default;
};

struct memory_series {
  lane_id lane = 0;
  std::int32_t device = 0;
  /// True when the values are the totals the source reported with each event (Kineto
  /// [memory] "Total Allocated" / "Total Reserved"); false when replayed from the events and
  /// the state derived backwards from a snapshot's dump (allocator_replay).
  bool reported = false;
  /// samples[0]: the state before the first event (at its time); samples[i + 1]: after event i
  /// of the lane. Empty for a lane without events.
  std::vector<memory_sample> samples;
};

/// The series of memory lane `lane` of a finalized trace.
[[nodiscard]] memory_series memory_series_of(const trace& t, lane_id lane);
/// The samples of memory_series_of(t, lane), visited in order and not kept: a peak or a final
/// value needs no series (a summary of 100M events keeps no 3.2 GB series). Returns
/// memory_series::reported. `mismatches`, when given, receives the events the forward replay
/// found not to match its state (apply_memory_event returned false); for reported totals, the
/// allocations and frees whose allocated total did not move by their bytes from the one before.
/// `threads`: how many threads a replay from a dump may take (the same samples, in order, on
/// the caller's thread).
bool for_each_memory_sample(const trace& t, lane_id lane,
                            const std::function<void(const memory_sample&)>& visit,
                            std::size_t* mismatches = nullptr, unsigned threads = 1);

} // namespace tdiag::trace
