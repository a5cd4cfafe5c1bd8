// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/stack_table.hpp>

#include <algorithm>
#include <stdexcept>

namespace tdiag::trace {
namespace {

// FNV-1a over the frame ids: cheap, and collisions are resolved by comparing sequences.
std::uint64_t hash_frames(std::span<const frame_id> frames) noexcept {
  std::uint64_t h = 1469598103934665603ull;
  for (frame_id f : frames) {
    h ^= f;
    h *= 1099511628211ull;
  }
  return h;
}

} // namespace

std::size_t stack_table::frame_hash::operator()(const frame& f) const noexcept {
  std::uint64_t h = f.function;
  h = h * 0x9E3779B97F4A7C15ull ^ f.file;
  h = h * 0x9E3779B97F4A7C15ull ^ f.line;
  return static_cast<std::size_t>(h ^ (h >> 29));
}

stack_table::stack_table() {
  frames_.push_back(frame{});
  frame_index_.emplace(frame{}, 0);
  stack_offsets_ = {0, 0}; // stack 0: the empty sequence
}

frame_id stack_table::intern_frame(const frame& f) {
  if (auto it = frame_index_.find(f); it != frame_index_.end())
    return it->second;
  const auto id = static_cast<frame_id>(frames_.size());
  frames_.push_back(f);
  frame_index_.emplace(f, id);
  return id;
}

stack_id stack_table::intern_stack(std::span<const frame_id> frames) {
  if (frames.empty())
    return no_stack;
  for (frame_id f : frames)
    if (f >= frames_.size())
      throw std::out_of_range("stack_table::intern_stack: unknown frame id");
  const std::uint64_t h = hash_frames(frames);
  auto [first, last] = stack_index_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    auto existing = stack(it->second);
    if (std::equal(existing.begin(), existing.end(), frames.begin(), frames.end()))
      return it->second;
  }
  const auto id = static_cast<stack_id>(stack_count());
  stack_frames_.insert(stack_frames_.end(), frames.begin(), frames.end());
  stack_offsets_.push_back(static_cast<std::uint32_t>(stack_frames_.size()));
  stack_index_.emplace(h, id);
  return id;
}

std::span<const frame_id> stack_table::stack(stack_id id) const noexcept {
  if (id == no_stack || id >= stack_count())
    return {};
  return std::span<const frame_id>(stack_frames_)
      .subspan(stack_offsets_[id], stack_offsets_[id + 1] - stack_offsets_[id]);
}

} // namespace tdiag::trace
