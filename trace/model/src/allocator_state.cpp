// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_state.hpp>

#include <algorithm>

namespace tdiag::trace {

std::uint64_t segment::allocated_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const auto& b : blocks)
    if (b.state == block_state::active_allocated)
      n += b.size;
  return n;
}

std::uint64_t segment::active_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const auto& b : blocks)
    if (b.state != block_state::inactive)
      n += b.size;
  return n;
}

std::uint64_t segment::largest_free_block() const noexcept {
  std::uint64_t n = 0;
  for (const auto& b : blocks)
    if (b.state == block_state::inactive)
      n = std::max(n, b.size);
  return n;
}

std::uint64_t allocator_state::reserved_bytes(std::int32_t device) const noexcept {
  std::uint64_t n = 0;
  for (const auto& s : segments)
    if ((device < -1 || s.device == device) && s.pool != implicit_pool)
      n += s.total_size;
  return n;
}

std::uint64_t allocator_state::allocated_bytes(std::int32_t device) const noexcept {
  std::uint64_t n = 0;
  for (const auto& s : segments)
    if (device < -1 || s.device == device)
      n += s.allocated_bytes();
  return n;
}

double state_figures::fragmentation() const noexcept {
  return free == 0 ? 0.0
                   : 1.0 - static_cast<double>(largest_free_block) / static_cast<double>(free);
}

state_figures allocator_state::figures(std::int32_t device) const noexcept {
  state_figures f;
  for (const auto& s : segments) {
    if (device >= -1 && s.device != device)
      continue;
    ++f.segments;
    f.largest_segment = std::max(f.largest_segment, s.total_size);
    if (s.pool != implicit_pool)
      f.reserved += s.total_size;
    for (const auto& b : s.blocks) {
      switch (b.state) {
      case block_state::active_allocated:
        f.allocated += b.size, ++f.allocated_blocks;
        break;
      case block_state::active_pending_free:
        f.pending_free += b.size;
        break;
      case block_state::inactive:
        f.free += b.size, f.largest_free_block = std::max(f.largest_free_block, b.size);
        break;
      }
    }
  }
  return f;
}

const segment* allocator_state::find_segment(std::int32_t device,
                                             std::uint64_t address) const noexcept {
  // First segment not below (device, address); the containing one is that or its predecessor.
  auto it = std::partition_point(segments.begin(), segments.end(), [&](const segment& s) {
    return s.device < device || (s.device == device && s.address <= address);
  });
  if (it == segments.begin())
    return nullptr;
  --it;
  if (it->device == device && address >= it->address && address - it->address < it->total_size)
    return &*it;
  return nullptr;
}

namespace {

// std::sort, skipped where the order is already strict (no two equal keys, whose order std::sort
// might change): an importer's dump usually is, and sorting it again cost as much as reading it.
template <typename T, typename Less> void sort_unless_strict(std::vector<T>& v, Less less) {
  if (std::adjacent_find(v.begin(), v.end(), [&](const T& a, const T& b) { return !less(a, b); }) !=
      v.end())
    std::sort(v.begin(), v.end(), less);
}

} // namespace

void allocator_state::sort() {
  sort_unless_strict(segments, [](const segment& a, const segment& b) {
    return a.device != b.device ? a.device < b.device : a.address < b.address;
  });
  for (auto& s : segments)
    sort_unless_strict(s.blocks,
                       [](const block& a, const block& b) { return a.address < b.address; });
}

} // namespace tdiag::trace
