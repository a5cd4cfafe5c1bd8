// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/assertions/launch_registry.hpp>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>

namespace tdiag::assertions {
namespace {
constexpr std::size_t words_per_entry = (sizeof(launch_info) + 7) / 8;
// Only the captured frames are copied: the fixed fields, then `size` frames, then the words
// from raw_stack::size to the end.
constexpr std::size_t frames_word = offsetof(launch_info, stack) / 8;
constexpr std::size_t tail_word = (offsetof(launch_info, stack) + offsetof(raw_stack, size)) / 8;
static_assert(offsetof(launch_info, stack) % 8 == 0 && offsetof(raw_stack, frames) == 0 &&
                  offsetof(raw_stack, size) % 8 == 0,
              "launch_info layout assumed by the word copy");

template <typename F> void for_each_used_word(std::uint32_t frames, F&& f) {
  for (std::size_t i = 0; i < frames_word; ++i)
    f(i);
  for (std::size_t i = 0; i < frames && i < raw_stack::max_frames; ++i)
    f(frames_word + i);
  for (std::size_t i = tail_word; i < words_per_entry; ++i)
    f(i);
}
} // namespace

// A sequence lock: `sequence` is 2*id+1 while slot is written and 2*id+2 once complete. All words
// are atomics so the protocol is race-free in the C++ memory model (and under TSan).
struct launch_registry::slot {
  std::atomic<std::uint64_t> sequence{0};
  std::atomic<std::uint64_t> words[words_per_entry];
};

launch_registry::launch_registry(std::uint32_t capacity, std::uint64_t first_id)
    : capacity_(std::bit_ceil(capacity < 2 ? 2u : capacity)),
      slots_(std::make_unique<slot[]>(capacity_)), next_(first_id < 1 ? 1 : first_id) {}

launch_registry::~launch_registry() = default;

std::uint64_t launch_registry::record(launch_info& info) noexcept {
  const std::uint64_t id = next_.fetch_add(1, std::memory_order_relaxed);
  info.launch_id = id;
  slot& s = slots_[id & (capacity_ - 1)];
  // Release stores on the words (instead of a fence) keep `sequence = odd` ahead of them; the
  // reader's acquire loads keep its second look at `sequence` behind them. Free on x86, and
  // TSan models it (it does not model standalone fences).
  s.sequence.store(2 * id + 1, std::memory_order_relaxed);
  const char* bytes = reinterpret_cast<const char*>(&info);
  for_each_used_word(info.stack.size, [&](std::size_t i) {
    std::uint64_t word = 0;
    std::memcpy(&word, bytes + 8 * i, std::min<std::size_t>(8, sizeof(info) - 8 * i));
    s.words[i].store(word, std::memory_order_release);
  });
  s.sequence.store(2 * id + 2, std::memory_order_release);
  // The ring is larger than the caches close to the core, so the next slot is cold by the time
  // its launch comes: fetch the lines that launch writes now, off its critical path.
  const slot& next = slots_[(id + 1) & (capacity_ - 1)];
  __builtin_prefetch(&next.sequence, 1);
  __builtin_prefetch(&next.words[frames_word], 1);
  __builtin_prefetch(&next.words[tail_word], 1);
  return id;
}

std::optional<launch_info> launch_registry::find(std::uint64_t id) const noexcept {
  if (id == 0 || id >= next_.load(std::memory_order_acquire))
    return std::nullopt;
  const slot& s = slots_[id & (capacity_ - 1)];
  const std::uint64_t before = s.sequence.load(std::memory_order_acquire);
  if (before != 2 * id + 2)
    return std::nullopt;
  std::uint64_t buffer[words_per_entry] = {};
  for (std::size_t i = tail_word; i < words_per_entry; ++i)
    buffer[i] = s.words[i].load(std::memory_order_acquire);
  std::uint32_t frames = 0;
  std::memcpy(&frames,
              reinterpret_cast<const char*>(buffer) + offsetof(launch_info, stack) +
                  offsetof(raw_stack, size),
              sizeof(frames));
  for_each_used_word(frames, [&](std::size_t i) {
    if (i < tail_word)
      buffer[i] = s.words[i].load(std::memory_order_acquire);
  });
  if (s.sequence.load(std::memory_order_relaxed) != before)
    return std::nullopt;
  launch_info info;
  std::memcpy(&info, buffer, sizeof(info));
  if (info.stack.size > raw_stack::max_frames)
    info.stack.size = 0;
  return info;
}

} // namespace tdiag::assertions
