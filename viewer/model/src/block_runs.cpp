// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/block_runs.hpp>

#include <algorithm>
#include <cmath>

namespace tdiag::view {
namespace {

// The largest block in use among up to block_run_samples spread over [first, last), else first.
std::size_t pick_shown(const std::vector<trace::block>& blocks, std::size_t first,
                       std::size_t last) {
  const std::size_t count = last - first;
  const std::size_t step = std::max<std::size_t>(count / block_run_samples, 1);
  std::size_t best = first;
  bool in_use = false;
  for (std::size_t i = first; i < last; i += step) {
    const auto& b = blocks[i];
    if (b.state == trace::block_state::inactive)
      continue;
    if (!in_use || b.size > blocks[best].size)
      best = i, in_use = true;
  }
  return best;
}

} // namespace

void block_runs(const trace::segment& seg, double width_px, double min_px,
                std::vector<block_run>& out) {
  out.clear();
  const auto& blocks = seg.blocks;
  const std::size_t n = blocks.size();
  if (n == 0 || seg.total_size == 0)
    return;
  const double px_per_byte = width_px / static_cast<double>(seg.total_size);
  const double min_w = std::max(min_px, 1e-9);
  auto x_at = [&](std::uint64_t address) {
    return static_cast<double>(address - seg.address) * px_per_byte;
  };
  auto wide = [&](std::size_t i) {
    return static_cast<double>(blocks[i].size) * px_per_byte >= min_w;
  };
  std::size_t i = 0;
  while (i < n) {
    const double x0 = x_at(blocks[i].address);
    if (wide(i)) {
      out.push_back({x0, x_at(blocks[i].address + blocks[i].size), i, 1, i});
      ++i;
      continue;
    }
    // Fold every block starting before x0 + min_px, one binary search per run.
    const auto limit =
        seg.address + static_cast<std::uint64_t>(std::ceil((x0 + min_w) / px_per_byte));
    auto it =
        std::lower_bound(blocks.begin() + static_cast<std::ptrdiff_t>(i + 1), blocks.end(), limit,
                         [](const trace::block& b, std::uint64_t a) { return b.address < a; });
    std::size_t k = static_cast<std::size_t>(it - blocks.begin());
    if (k - 1 > i && wide(k - 1)) // a wide block ends the fold; it is a run of its own next
      --k;
    const auto& last = blocks[k - 1];
    out.push_back({x0, x_at(last.address + last.size), i, k - i, pick_shown(blocks, i, k)});
    i = k;
  }
}

std::optional<std::size_t> block_at(const trace::segment& seg, std::uint64_t address) noexcept {
  const auto& blocks = seg.blocks;
  auto it = std::upper_bound(blocks.begin(), blocks.end(), address,
                             [](std::uint64_t a, const trace::block& b) { return a < b.address; });
  if (it == blocks.begin())
    return std::nullopt;
  --it;
  if (address >= it->address + it->size)
    return std::nullopt;
  return static_cast<std::size_t>(it - blocks.begin());
}

} // namespace tdiag::view
