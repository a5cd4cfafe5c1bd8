// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Each alloc event paired with the free that ends it: the one pairing behind leak analysis
// without a dump (allocations the program never freed) and the viewer's allocation bands.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <limits>
#include <vector>

namespace tdiag::trace {

inline constexpr std::uint32_t no_memory_event = std::numeric_limits<std::uint32_t>::max();

struct allocation_lifetime {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;       ///< the free that made the block reusable, else the trace's end
  bool alive_at_end = false;  ///< no free ended it
  bool freed_by_user = false; ///< a free_requested or free_completed came (pending blocks too)
  std::int32_t device = 0;
  stack_id stack = no_stack;
  std::uint32_t alloc_event = no_memory_event; ///< index in t.memory.all()
  std::uint32_t free_event = no_memory_event;  ///< the free that ended it
};

/// Every alloc of `device`'s memory lane in time order, paired with the next free of its
/// address: free_completed when the history has them (the block is occupied until then), else
/// free_requested or a plain free. Frees without an alloc (history cut by a ring buffer) are
/// dropped. `t` must be finalized.
[[nodiscard]] std::vector<allocation_lifetime> allocation_lifetimes(const trace& t,
                                                                    std::int32_t device);
/// The same with the end of the trace given (what t.span().end returns): a caller going over
/// every device computes it once, so many devices stay linear in the events.
[[nodiscard]] std::vector<allocation_lifetime>
allocation_lifetimes(const trace& t, std::int32_t device, std::int64_t trace_end);

} // namespace tdiag::trace
