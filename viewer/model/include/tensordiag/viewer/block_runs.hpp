// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Level of detail for one segment's bar in the allocator view: a block at least `min_px` wide
// is drawn as itself; neighbours narrower than that fold into one run per `min_px` of bar,
// coloured by its largest block in use. A segment of a million 512-byte blocks then costs a
// few hundred rectangles and binary searches, not a million (ImGui's 16-bit vertex limit).
#pragma once

#include <tensordiag/trace/allocator_state.hpp>

#include <cstddef>
#include <optional>
#include <vector>

namespace tdiag::view {

/// Blocks [first, first + count) of a segment, spanning [x0, x1] pixels from the bar's left.
struct block_run {
  double x0 = 0.0;
  double x1 = 0.0;
  std::size_t first = 0;
  std::size_t count = 0;
  /// The block whose state and site the run shows: itself, or for a fold the largest in use
  /// among up to `block_run_samples` blocks spread over the run (a free block when none is).
  std::size_t shown = 0;
  [[nodiscard]] bool folded() const noexcept { return count > 1; }
};

inline constexpr std::size_t block_run_samples = 64;

/// Fills `out` (cleared first) with the runs of `seg` (blocks sorted by address) on a bar of
/// `width_px` pixels. Runs are contiguous and cover every block; there are at most
/// 2 x width_px / min_px + 1 of them.
void block_runs(const trace::segment& seg, double width_px, double min_px,
                std::vector<block_run>& out);

/// Index of the block of `seg` holding `address`, if any (a binary search).
[[nodiscard]] std::optional<std::size_t> block_at(const trace::segment& seg,
                                                  std::uint64_t address) noexcept;

} // namespace tdiag::view
