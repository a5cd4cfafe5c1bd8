// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/allocation_bands.hpp>

#include <algorithm>
#include <numeric>

namespace tdiag::view {

allocation_bands allocation_bands::build(std::span<const allocation> allocations,
                                         std::size_t top_n) {
  std::vector<std::size_t> idx(allocations.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  auto bigger = [&](std::size_t a, std::size_t b) {
    const auto& x = allocations[a];
    const auto& y = allocations[b];
    const double wx = static_cast<double>(x.size) * static_cast<double>(x.end - x.begin);
    const double wy = static_cast<double>(y.size) * static_cast<double>(y.end - y.begin);
    if (wx != wy)
      return wx > wy;
    return x.size > y.size;
  };
  const std::size_t n = std::min(top_n, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(n), idx.end(), bigger);
  idx.resize(n);
  // Stacking order: earlier allocations lower.
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
    return allocations[a].begin != allocations[b].begin
               ? allocations[a].begin < allocations[b].begin
               : a < b;
  });

  allocation_bands out;
  for (const std::size_t i : idx) {
    const auto& a = allocations[i];
    out.bands_.push_back(
        {i, a.begin, std::max(a.end, a.begin + 1), static_cast<std::int64_t>(a.size), {}});
  }
  std::vector<std::int64_t> changes;
  for (const auto& b : out.bands_) {
    changes.push_back(b.begin);
    changes.push_back(b.end);
  }
  std::sort(changes.begin(), changes.end());
  changes.erase(std::unique(changes.begin(), changes.end()), changes.end());
  for (const std::int64_t t : changes) {
    std::int64_t base = 0;
    for (auto& b : out.bands_) {
      if (b.begin > t || b.end <= t)
        continue;
      if (b.steps.empty() || b.steps.back().base != base)
        b.steps.push_back({t, base});
      base += b.size;
    }
  }
  return out;
}

std::optional<std::int64_t> allocation_bands::base_at(std::size_t b,
                                                      std::int64_t t) const noexcept {
  if (b >= bands_.size())
    return std::nullopt;
  const auto& bd = bands_[b];
  if (t < bd.begin || t >= bd.end || bd.steps.empty())
    return std::nullopt;
  auto it = std::upper_bound(bd.steps.begin(), bd.steps.end(), t,
                             [](std::int64_t v, const step& s) { return v < s.time; });
  return std::prev(it)->base;
}

std::optional<std::size_t> allocation_bands::hit_test(std::int64_t t,
                                                      std::int64_t bytes) const noexcept {
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    const auto base = base_at(b, t);
    if (base && bytes >= *base && bytes < *base + bands_[b].size)
      return b;
  }
  return std::nullopt;
}

} // namespace tdiag::view
