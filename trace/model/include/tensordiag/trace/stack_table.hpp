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
#include <iterator>
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

/// The frames of one stack, innermost first: a view into its stack_table, which stores the ids
/// in 16 bits while every frame id fits (a deep snapshot's stacks are most of its memory).
/// Valid until the table interns another frame or stack.
class frame_list {
public:
  class iterator {
  public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = frame_id;
    using difference_type = std::ptrdiff_t;
    using reference = frame_id;
    using pointer = void;
    iterator() = default;
    iterator(const std::uint16_t* at, bool wide) noexcept : at_(at), wide_(wide) {}
    [[nodiscard]] frame_id operator*() const noexcept {
      return wide_ ? frame_id{at_[0]} | frame_id{at_[1]} << 16 : frame_id{at_[0]};
    }
    iterator& operator++() noexcept {
      at_ += wide_ ? 2 : 1;
      return *this;
    }
    iterator operator++(int) noexcept {
      auto was = *this;
      ++*this;
      return was;
    }
    friend bool operator==(const iterator& a, const iterator& b) noexcept { return a.at_ == b.at_; }

  private:
    const std::uint16_t* at_ = nullptr;
    bool wide_ = false;
  };

  frame_list() = default;
  /// `size` ids from `data`, each one slot (or two, low half first, when `wide`).
  frame_list(const std::uint16_t* data, std::size_t size, bool wide) noexcept
      : data_(data), size_(size), wide_(wide) {}
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] frame_id operator[](std::size_t i) const noexcept {
    return *iterator(data_ + (wide_ ? 2 * i : i), wide_);
  }
  [[nodiscard]] frame_id front() const noexcept { return (*this)[0]; }
  [[nodiscard]] iterator begin() const noexcept { return {data_, wide_}; }
  [[nodiscard]] iterator end() const noexcept { return {data_ + (wide_ ? 2 : 1) * size_, wide_}; }

private:
  const std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;
  bool wide_ = false;
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
  [[nodiscard]] frame_list stack(stack_id id) const noexcept;

  /// Frame ids, including the empty frame 0.
  [[nodiscard]] std::size_t frame_count() const noexcept { return frames_.size(); }
  /// Stack ids, including no_stack.
  [[nodiscard]] std::size_t stack_count() const noexcept { return stacks_.size(); }
  /// About the bytes the table holds, its indexes included (an importer's memory budget).
  [[nodiscard]] std::size_t memory_bytes() const noexcept;

  friend bool operator==(const stack_table& a, const stack_table& b);

private:
  struct frame_hash {
    std::size_t operator()(const frame& f) const noexcept;
  };
  // Where a stack's frames are: `size` ids from chunks_[chunk][begin] (a slot each, or two
  // once wide_).
  struct stack_span {
    std::uint32_t chunk = 0, begin = 0, size = 0;
  };
  frame_list frames_of(const stack_span& s) const noexcept {
    return {chunks_[s.chunk].data() + s.begin, s.size, wide_};
  }
  stack_span store(std::span<const frame_id> frames);
  void grow_index();
  /// Stores every stack's ids in two slots: a frame id past 16 bits is coming.
  void widen();

  std::vector<frame> frames_;
  std::unordered_map<frame, frame_id, frame_hash> frame_index_;
  std::vector<stack_span> stacks_; ///< stack 0: the empty sequence
  // Frame ids in chunks that are filled, never moved once full size (a deep snapshot's stacks
  // are tens of MB of frame ids: one growing vector copied and faulted in twice that). While
  // every frame id fits 16 bits each takes one slot: half the memory of 32-bit ids.
  std::vector<std::vector<std::uint16_t>> chunks_;
  bool wide_ = false;
  // Open addressing over stack ids: each slot the high 32 bits of a stack's hash and its id
  // (0: empty); a match is compared in full.
  std::vector<std::uint64_t> index_;
};

} // namespace tdiag::trace
