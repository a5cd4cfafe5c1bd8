// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Copying events between traces that have different interning tables: ids are re-interned in
// the destination (strings, frames, stacks, lanes with their names). The .tdtrace writer uses it
// to pack producer batches into chunks and the reader to join chunks; it also joins traces.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <vector>

namespace tdiag::trace {

/// Maps ids of `src` to ids of `dst`, interning lazily and caching each mapping. Ids out of
/// range in `src` map to no_string / no_stack, and lanes to an "unknown lane". Both traces must
/// outlive the remapper; reset() drops the cache (needed when `dst` is cleared).
class id_remapper {
public:
  id_remapper(trace& dst, const trace& src) : dst_(&dst), src_(&src) {}

  [[nodiscard]] string_id string(string_id id);
  [[nodiscard]] frame_id frame(frame_id id);
  [[nodiscard]] stack_id stack(stack_id id);
  [[nodiscard]] lane_id lane(lane_id id);
  /// A memory event's detail (memory_event::detail of `src`) as one of `dst`: its strings
  /// remapped, a correlation id other than 0 moved by `correlation_base` (the same for every
  /// call of one remapper).
  [[nodiscard]] std::uint32_t detail(std::uint32_t id, std::uint32_t correlation_base = 0);
  /// Remaps every id field of `record` in place (a memory event's detail too).
  template <typename Record> void remap(Record& record);

  void reset();

private:
  static constexpr std::uint32_t unmapped = 0xFFFFFFFFu;
  trace* dst_;
  const trace* src_;
  std::vector<std::uint32_t> strings_, frames_, stacks_, lanes_, details_;
  std::vector<frame_id> scratch_;
};

/// Appends every event of `from` to `into` (remapping ids), merges metadata (properties appended,
/// dropped records added; format and origin kept from `into` unless empty) and takes `from`'s
/// allocator state when `into` has none. `into` needs finalize() afterwards.
void merge_trace(trace& into, const trace& from);

/// What merge_allocator_history added.
struct history_merge {
  std::size_t events = 0;         ///< block allocs, frees and OOMs added
  std::size_t segment_events = 0; ///< the history's own segment events, left out
  std::int64_t offset_ns = 0;     ///< added to the history's times (from the two epoch origins)
};

/// Adds a caching allocator's history (a PyTorch memory snapshot: block allocations, frees and
/// OOMs with their stacks) to a captured trace whose segments (cudaMalloc, cudaFree) CUPTI
/// recorded from the start: the history's segment events are left out (the capture has them
/// all, the history only those since recording began), its times moved onto the capture's
/// axis by the difference of the two Unix-epoch origins. Call finalize() afterwards.
history_merge merge_allocator_history(trace& captured, const trace& history);

} // namespace tdiag::trace
