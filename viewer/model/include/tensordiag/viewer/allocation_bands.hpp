// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The largest allocations (trace::allocation_lifetimes()) as stacked bands under the
// allocated-bytes curve, as memory_viz's Active Memory Timeline draws them: each band sits
// on the bands below it that are alive, so a free lowers the bands above it.
#pragma once

#include <tensordiag/trace/allocation_lifetimes.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

namespace tdiag::view {

inline constexpr std::uint32_t no_event = trace::no_memory_event;

/// An alloc paired with its free: trace::allocation_lifetimes() computes them (the pairing
/// leak analysis uses); the bands only stack them.
using allocation = trace::allocation_lifetime;

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
