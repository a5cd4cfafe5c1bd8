// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The state of a caching allocator at one instant: segments (one cudaMalloc or expandable
// region each) split into blocks. A PyTorch snapshot's `segments` list fills it; replaying
// memory events moves it through time.
#pragma once

#include <tensordiag/trace/stack_table.hpp>
#include <tensordiag/trace/string_table.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tdiag::trace {

enum class block_state : std::uint8_t {
  active_allocated = 0,    ///< handed out to a tensor
  active_pending_free = 1, ///< freed by the user, stream uses still pending
  inactive = 2,            ///< free and reusable
};

enum class segment_type : std::uint8_t { unknown = 0, small = 1, large = 2 };

/// Pool id of an implicit segment: replay makes one of exactly a block's size for an alloc
/// outside every segment when the source reports no segments (Kineto [memory], CUPTI), and
/// drops it when the block is freed; it is not reserved memory.
inline constexpr std::uint64_t implicit_pool = ~std::uint64_t{0};

struct block {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  std::uint64_t requested_size = 0; ///< what the user asked for (size minus rounding)
  block_state state = block_state::inactive;
  stack_id stack = no_stack;
  friend bool operator==(const block&, const block&) = default;
};

struct segment {
  std::int32_t device = 0;
  std::uint64_t address = 0;
  std::uint64_t total_size = 0;
  std::uint64_t stream = 0;
  std::uint64_t pool = 0; ///< pool id; 0 = default pool
  segment_type type = segment_type::unknown;
  bool is_expandable = false;
  stack_id stack = no_stack; ///< where the segment was allocated
  std::vector<block> blocks; ///< sorted by address, covering [address, address + total_size)
  friend bool operator==(const segment&, const segment&) = default;

  /// Bytes in active_allocated blocks.
  [[nodiscard]] std::uint64_t allocated_bytes() const noexcept;
  /// Bytes in active_allocated or active_pending_free blocks.
  [[nodiscard]] std::uint64_t active_bytes() const noexcept;
  /// Largest inactive block (0 if none).
  [[nodiscard]] std::uint64_t largest_free_block() const noexcept;
};

/// The totals of one allocator state, counted in one pass over its blocks: what the viewer's
/// allocator view, `tdiag trace timeline` and the OOM analysis print.
struct state_figures {
  std::uint64_t reserved = 0;           ///< allocator_state::reserved_bytes()
  std::uint64_t allocated = 0;          ///< allocator_state::allocated_bytes()
  std::uint64_t pending_free = 0;       ///< bytes in active_pending_free blocks
  std::uint64_t free = 0;               ///< bytes in inactive (cached, reusable) blocks
  std::uint64_t largest_free_block = 0; ///< largest inactive block (0 if none)
  std::uint64_t largest_segment = 0;    ///< largest segment's total_size (0 if none)
  std::size_t segments = 0;
  std::size_t allocated_blocks = 0; ///< active_allocated blocks
  friend bool operator==(const state_figures&, const state_figures&) = default;

  /// 1 - largest_free_block / free: the share of the free bytes no single request can use
  /// (0 when nothing is free).
  [[nodiscard]] double fragmentation() const noexcept;
};

struct allocator_state {
  std::int64_t time = 0;         ///< ns on the trace axis at which this state holds
  std::vector<segment> segments; ///< sorted by (device, address)
  friend bool operator==(const allocator_state&, const allocator_state&) = default;

  /// Sum of segment sizes (optionally of one device; device < -1 means all): the memory taken
  /// from the driver, so implicit segments (pool == implicit_pool) do not count.
  [[nodiscard]] std::uint64_t reserved_bytes(std::int32_t device = -2) const noexcept;
  [[nodiscard]] std::uint64_t allocated_bytes(std::int32_t device = -2) const noexcept;
  /// The totals of the segments of `device` (device < -1 means all).
  [[nodiscard]] state_figures figures(std::int32_t device = -2) const noexcept;
  /// The segment containing `address` on `device`, or nullptr. O(log n) when sorted.
  [[nodiscard]] const segment* find_segment(std::int32_t device,
                                            std::uint64_t address) const noexcept;
  /// Sorts segments by (device, address) and each segment's blocks by address.
  void sort();
};

} // namespace tdiag::trace
