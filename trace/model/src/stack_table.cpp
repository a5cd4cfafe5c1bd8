// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/stack_table.hpp>

#include <algorithm>
#include <stdexcept>

namespace tdiag::trace {
namespace {

/// Slots a chunk holds: 4 MiB (a stack longer than that gets a chunk of its own).
constexpr std::size_t chunk_slots = std::size_t{1} << 21;
/// Frame ids up to this one take a slot each until a larger one is interned.
constexpr frame_id narrow_frames = 0xffff;

// Two multiply-xorshift lanes over pairs of frame ids (FNV-1a's one multiply per id in a chain
// was most of interning a 100-frame stack); collisions are resolved by comparing sequences.
std::uint64_t hash_frames(std::span<const frame_id> frames) noexcept {
  constexpr std::uint64_t k1 = 0x9E3779B97F4A7C15ull, k2 = 0xC2B2AE3D27D4EB4Full;
  std::uint64_t a = frames.size() * k1, b = k2;
  std::size_t i = 0;
  for (; i + 4 <= frames.size(); i += 4) {
    a = (a ^ (std::uint64_t{frames[i]} << 32 | frames[i + 1])) * k1;
    b = (b ^ (std::uint64_t{frames[i + 2]} << 32 | frames[i + 3])) * k2;
    a ^= a >> 29;
    b ^= b >> 31;
  }
  for (; i < frames.size(); ++i)
    a = (a ^ frames[i]) * k1;
  std::uint64_t h = (a ^ (b * k1)) * k2;
  return h ^ (h >> 32);
}

constexpr std::uint64_t tag_of(std::uint64_t h) noexcept {
  return h & 0xffffffff00000000ull;
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
  stacks_.push_back({}); // stack 0: the empty sequence
}

bool operator==(const stack_table& a, const stack_table& b) {
  if (a.frames_ != b.frames_ || a.stacks_.size() != b.stacks_.size())
    return false;
  for (std::size_t k = 1; k < a.stacks_.size(); ++k) {
    const auto x = a.frames_of(a.stacks_[k]), y = b.frames_of(b.stacks_[k]);
    if (!std::equal(x.begin(), x.end(), y.begin(), y.end()))
      return false;
  }
  return true;
}

frame_id stack_table::intern_frame(const frame& f) {
  if (auto it = frame_index_.find(f); it != frame_index_.end())
    return it->second;
  const auto id = static_cast<frame_id>(frames_.size());
  if (id > narrow_frames && !wide_)
    widen();
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
  if (2 * stacks_.size() >= index_.size())
    grow_index();
  const std::uint64_t h = hash_frames(frames);
  const std::size_t mask = index_.size() - 1;
  auto i = static_cast<std::size_t>(h >> 32) & mask;
  for (; index_[i] != 0; i = (i + 1) & mask) {
    const auto id = static_cast<stack_id>(index_[i]);
    if (tag_of(index_[i]) != tag_of(h))
      continue;
    const auto known = frames_of(stacks_[id]);
    if (std::equal(known.begin(), known.end(), frames.begin(), frames.end()))
      return id;
  }
  const auto id = static_cast<stack_id>(stacks_.size());
  stacks_.push_back(store(frames));
  index_[i] = tag_of(h) | id;
  return id;
}

std::size_t stack_table::memory_bytes() const noexcept {
  std::size_t ids = 0;
  for (const auto& c : chunks_)
    ids += c.capacity() * sizeof(std::uint16_t);
  // A frame index entry: its node (frame, id, hash, link, the allocator's header), a bucket.
  constexpr std::size_t per_frame = sizeof(frame) + sizeof(frame_id) + 8 + 8 + 16 + sizeof(void*);
  return frames_.capacity() * sizeof(frame) + frame_index_.size() * per_frame +
         frame_index_.bucket_count() * sizeof(void*) + stacks_.capacity() * sizeof(stack_span) +
         chunks_.capacity() * sizeof(std::vector<std::uint16_t>) + ids +
         index_.capacity() * sizeof(std::uint64_t);
}

// Copies a new stack's frames into the last chunk, or a new one where it does not fit.
stack_table::stack_span stack_table::store(std::span<const frame_id> frames) {
  const std::size_t per = wide_ ? 2 : 1, n = frames.size() * per;
  if (chunks_.empty() || chunks_.back().capacity() - chunks_.back().size() < n) {
    auto* last = chunks_.empty() ? nullptr : &chunks_.back();
    if (last != nullptr && last->capacity() < chunk_slots && last->size() + n <= chunk_slots)
      last->reserve(std::min(chunk_slots, std::max(2 * last->capacity(), last->size() + n)));
    else
      chunks_.emplace_back().reserve(chunks_.size() == 1 ? std::max<std::size_t>(n, 2048)
                                                         : std::max(chunk_slots, n));
  }
  auto& chunk = chunks_.back();
  const stack_span s{static_cast<std::uint32_t>(chunks_.size() - 1),
                     static_cast<std::uint32_t>(chunk.size()),
                     static_cast<std::uint32_t>(frames.size())};
  for (const frame_id f : frames) {
    chunk.push_back(static_cast<std::uint16_t>(f));
    if (wide_)
      chunk.push_back(static_cast<std::uint16_t>(f >> 16));
  }
  return s;
}

void stack_table::widen() {
  const auto narrow = std::move(chunks_);
  chunks_ = {};
  wide_ = true;
  std::vector<frame_id> ids;
  for (auto& s : stacks_) {
    if (s.size == 0)
      continue;
    const frame_list old(narrow[s.chunk].data() + s.begin, s.size, false);
    ids.assign(old.begin(), old.end());
    s = store(ids);
  }
}

// Doubles the index (at least 64 slots), placing every stack again by its hash.
void stack_table::grow_index() {
  std::vector<std::uint64_t> old(std::max<std::size_t>(64, 2 * index_.size()), 0);
  old.swap(index_);
  const std::size_t mask = index_.size() - 1;
  for (const auto slot : old) {
    if (slot == 0)
      continue;
    auto i = static_cast<std::size_t>(slot >> 32) & mask;
    while (index_[i] != 0)
      i = (i + 1) & mask;
    index_[i] = slot;
  }
}

frame_list stack_table::stack(stack_id id) const noexcept {
  if (id == no_stack || id >= stacks_.size())
    return {};
  return frames_of(stacks_[id]);
}

} // namespace tdiag::trace
