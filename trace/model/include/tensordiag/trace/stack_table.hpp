// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Interned source frames and call stacks. A frame is {function, file, line} as string ids; a
// stack is a sequence of frame ids, innermost (most recent call) first. Stacks are interned
// whole, so the thousands of allocations made from one site share one stack id.
#pragma once

#include <tensordiag/trace/string_table.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace tdiag::trace {

/// Id of an interned frame; 0 = no frame (frame_table entry 0 is an empty frame).
using frame_id = std::uint32_t;
/// Id of an interned stack; 0 = no stack (the empty sequence).
using stack_id = std::uint32_t;
inline constexpr stack_id no_stack = 0;

struct frame {
  string_id function = no_string;
  string_id file = no_string;
  std::uint32_t line = 0; ///< 1-based; 0 when unknown
  friend bool operator==(const frame&, const frame&) = default;
};

class stack_table {
public:
  stack_table();

  /// The id of `f`, adding it if new. Not thread-safe.
  [[nodiscard]] frame_id intern_frame(const frame& f);
  /// The id of the stack `frames` (innermost first), adding it if new. An empty sequence is
  /// no_stack. Every element must be a valid frame id (checked: throws std::out_of_range).
  [[nodiscard]] stack_id intern_stack(std::span<const frame_id> frames);

  /// Undefined for id >= frame_count().
  [[nodiscard]] const frame& frame_at(frame_id id) const noexcept { return frames_[id]; }
  /// The frames of stack `id`, innermost first; empty for no_stack or an out-of-range id.
  [[nodiscard]] std::span<const frame_id> stack(stack_id id) const noexcept;

  /// Frame ids, including the empty frame 0.
  [[nodiscard]] std::size_t frame_count() const noexcept { return frames_.size(); }
  /// Stack ids, including no_stack.
  [[nodiscard]] std::size_t stack_count() const noexcept { return stacks_.size(); }

  friend bool operator==(const stack_table& a, const stack_table& b);

private:
  struct frame_hash {
    std::size_t operator()(const frame& f) const noexcept;
  };
  // Where a stack's frames are: chunks_[chunk][begin, begin + size).
  struct stack_span {
    std::uint32_t chunk = 0, begin = 0, size = 0;
  };
  std::span<const frame_id> frames_of(const stack_span& s) const noexcept {
    return std::span<const frame_id>(chunks_[s.chunk]).subspan(s.begin, s.size);
  }
  stack_span store(std::span<const frame_id> frames);
  void grow_index();

  std::vector<frame> frames_;
  std::unordered_map<frame, frame_id, frame_hash> frame_index_;
  std::vector<stack_span> stacks_; ///< stack 0: the empty sequence
  // Frame ids in chunks that are filled, never moved once full size (a deep snapshot's stacks
  // are tens of MB of frame ids: one growing vector copied and faulted in twice that).
  std::vector<std::vector<frame_id>> chunks_;
  // Open addressing over stack ids: each slot the high 32 bits of a stack's hash and its id
  // (0: empty); a match is compared in full.
  std::vector<std::uint64_t> index_;
};

} // namespace tdiag::trace
