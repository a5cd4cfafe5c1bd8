// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Allocations (an alloc paired with its free) and the largest of them as stacked bands under
// the allocated-bytes curve, as memory_viz's Active Memory Timeline draws them: each band sits
// on the bands below it that are alive, so a free lowers the bands above it.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace tdiag::view {

inline constexpr std::uint32_t no_event = std::numeric_limits<std::uint32_t>::max();

struct allocation {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0; ///< the free, or the trace's end when still alive
  bool alive_at_end = false;
  std::int32_t device = 0;
  trace::stack_id stack = trace::no_stack;
  std::uint32_t alloc_event = no_event; ///< index in trace.memory.all()
  std::uint32_t free_event = no_event;
};

/// Pairs every alloc of `device` with the next free of the same address (free_completed, or
/// free_requested when the source has no free_completed), in time order. Allocations still
/// alive end at `trace_end`. Frees without an alloc (history cut by the ring buffer) are dropped.
[[nodiscard]] std::vector<allocation> pair_allocations(const trace::trace& t, std::int32_t device,
                                                       std::int64_t trace_end);

class allocation_bands {
public:
  /// Where a band's base changes: from `time` on, it sits at `base` bytes.
  struct step {
    std::int64_t time = 0;
    std::int64_t base = 0;
  };
  struct band {
    std::size_t allocation = 0; ///< index into the span given to build()
    std::int64_t begin = 0;
    std::int64_t end = 0;
    std::int64_t size = 0;
    std::vector<step> steps; ///< first step at begin; the last holds until end
  };

  /// The `top_n` allocations holding the most memory over time (bytes x lifetime: weights and
  /// optimizer state rather than one-step temporaries), stacked in order of allocation.
  [[nodiscard]] static allocation_bands build(std::span<const allocation> allocations,
                                              std::size_t top_n);

  [[nodiscard]] const std::vector<band>& bands() const noexcept { return bands_; }
  /// Base of band `b` at time `t`, or nullopt when it is not alive then.
  [[nodiscard]] std::optional<std::int64_t> base_at(std::size_t b, std::int64_t t) const noexcept;
  /// The band covering `bytes` at time `t`, if any.
  [[nodiscard]] std::optional<std::size_t> hit_test(std::int64_t t,
                                                    std::int64_t bytes) const noexcept;

private:
  std::vector<band> bands_;
};

} // namespace tdiag::view
