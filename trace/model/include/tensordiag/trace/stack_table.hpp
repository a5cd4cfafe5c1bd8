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
  [[nodiscard]] std::size_t stack_count() const noexcept { return stack_offsets_.size() - 1; }

  friend bool operator==(const stack_table& a, const stack_table& b) {
    return a.frames_ == b.frames_ && a.stack_offsets_ == b.stack_offsets_ &&
           a.stack_frames_ == b.stack_frames_;
  }

private:
  struct frame_hash {
    std::size_t operator()(const frame& f) const noexcept;
  };
  std::vector<frame> frames_;
  std::unordered_map<frame, frame_id, frame_hash> frame_index_;
  // Stack k spans stack_frames_[stack_offsets_[k], stack_offsets_[k + 1]).
  std::vector<std::uint32_t> stack_offsets_;
  std::vector<frame_id> stack_frames_;
  // Hash of a stack's frame sequence -> candidate stack ids (collisions compared in full).
  std::unordered_multimap<std::uint64_t, stack_id> stack_index_;
};

} // namespace tdiag::trace
