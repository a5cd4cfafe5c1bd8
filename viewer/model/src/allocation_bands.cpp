// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/allocation_bands.hpp>

#include <algorithm>
#include <numeric>
#include <unordered_map>

namespace tdiag::view {

std::vector<allocation> pair_allocations(const trace::trace& t, std::int32_t device,
                                         std::int64_t trace_end) {
  using trace::memory_action;
  const auto all = t.memory.all();
  std::vector<std::uint32_t> order;
  bool has_completed = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].device != device)
      continue;
    order.push_back(static_cast<std::uint32_t>(i));
    has_completed |= all[i].action == memory_action::free_completed;
  }
  // One memory lane per device is already in time order: skip the sort then.
  const auto by_time = [&](std::uint32_t a, std::uint32_t b) { return all[a].time < all[b].time; };
  if (!std::is_sorted(order.begin(), order.end(), by_time))
    std::stable_sort(order.begin(), order.end(), by_time);
  const memory_action free_action =
      has_completed ? memory_action::free_completed : memory_action::free_requested;

  std::vector<allocation> out;
  std::unordered_map<std::uint64_t, std::size_t> live; // address -> index in out
  for (const std::uint32_t i : order) {
    const auto& m = all[i];
    if (m.action == memory_action::alloc) {
      allocation a;
      a.address = m.address;
      a.size = m.size;
      a.begin = m.time;
      a.end = std::max(trace_end, m.time);
      a.alive_at_end = true;
      a.device = device;
      a.stack = m.stack;
      a.alloc_event = i;
      live[m.address] = out.size();
      out.push_back(a);
    } else if (m.action == free_action) {
      auto it = live.find(m.address);
      if (it == live.end())
        continue;
      auto& a = out[it->second];
      a.end = m.time;
      a.alive_at_end = false;
      a.free_event = i;
      live.erase(it);
    }
  }
  return out;
}

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
