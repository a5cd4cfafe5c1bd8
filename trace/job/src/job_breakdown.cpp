// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Breakdowns over one rank's GPU rows: temporal (idle / compute / non-compute), kernel type
// with overlap, communication-computation overlap, idle time per stream, kernel tables. Each
// follows HTA's definition (hta/analyzers/breakdown_analysis.py, communication_analysis.py).
#include "job_breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace tdiag::trace::detail {

namespace {

std::vector<interval> merged_of(const rank_rows& rows, int type_mask) {
  std::vector<interval> out;
  for (const auto& g : rows.gpu)
    if (type_mask < 0 || static_cast<int>(g.type) == type_mask)
      out.push_back({g.start, g.end});
  return merge_intervals(std::move(out));
}

std::int64_t total_length(const std::vector<interval>& merged) {
  std::int64_t sum = 0;
  for (const auto& m : merged)
    sum += m.end - m.start;
  return sum;
}

// A +bit / -bit sweep over merged intervals of several classes: calls fn(mask, from, to) for
// every stretch between consecutive change points, as HTA's cumulative "running" column does.
template <typename Fn>
void sweep(const std::vector<std::pair<int, std::vector<interval>>>& classes, Fn&& fn) {
  std::vector<std::pair<std::int64_t, int>> points;
  for (const auto& [bit, merged] : classes)
    for (const auto& m : merged) {
      points.emplace_back(m.start, bit);
      points.emplace_back(m.end, -bit);
    }
  std::stable_sort(points.begin(), points.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  int running = 0;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    running += points[i].second;
    fn(running, points[i].first, points[i + 1].first);
  }
}

} // namespace

temporal_breakdown temporal_of(const rank_rows& rows) {
  temporal_breakdown out;
  const auto all = merged_of(rows, -1);
  if (all.empty())
    return out;
  const auto span = all.back().end - all.front().start;
  const auto idle = span - total_length(all);
  const auto compute = total_length(merged_of(rows, static_cast<int>(kernel_class::computation)));
  out.kernel_us = to_us(span);
  out.idle_us = to_us(idle);
  out.compute_us = to_us(compute);
  out.non_compute_us = to_us(span - compute - idle);
  return out;
}

std::vector<kernel_type_time> kernel_types_of(const rank_rows& rows) {
  static constexpr kernel_class order[] = {kernel_class::computation, kernel_class::communication,
                                           kernel_class::memory};
  std::vector<std::pair<int, std::vector<interval>>> classes;
  for (std::size_t i = 0; i < std::size(order); ++i)
    classes.emplace_back(1 << i, merged_of(rows, static_cast<int>(order[i])));
  std::map<int, std::int64_t> by_mask;
  sweep(classes, [&](int mask, std::int64_t from, std::int64_t to) {
    if (mask > 0)
      by_mask[mask] += to - from;
  });
  std::vector<kernel_type_time> out;
  std::int64_t total = 0;
  for (const auto& [mask, ns] : by_mask) {
    std::string label;
    for (std::size_t i = 0; i < std::size(order); ++i)
      if (mask & (1 << i))
        label += (label.empty() ? "" : " overlapping ") + std::string(to_string(order[i]));
    out.push_back({std::move(label), to_us(ns), 0});
    total += ns;
  }
  for (auto& k : out)
    k.pct = total > 0 ? 100.0 * k.sum_us / to_us(total) : 0;
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.sum_us > b.sum_us; });
  return out;
}

std::optional<double> comm_comp_overlap_of(const rank_rows& rows) {
  auto comm = merged_of(rows, static_cast<int>(kernel_class::communication));
  const auto comm_len = total_length(comm);
  if (comm_len <= 0)
    return std::nullopt;
  std::vector<std::pair<int, std::vector<interval>>> classes;
  classes.emplace_back(1, std::move(comm));
  classes.emplace_back(2, merged_of(rows, static_cast<int>(kernel_class::computation)));
  std::int64_t overlap = 0;
  sweep(classes, [&](int mask, std::int64_t from, std::int64_t to) {
    if (mask == 3)
      overlap += to - from;
  });
  return 100.0 * static_cast<double>(overlap) / static_cast<double>(comm_len);
}

std::vector<stream_idle> idle_of(const rank_rows& rows, const analysis_options& options) {
  std::map<std::uint64_t, std::vector<const gpu_row*>> by_stream;
  for (const auto& g : rows.gpu)
    if (g.is_kernel)
      by_stream[g.stream].push_back(&g); // rows.gpu is in start order already
  const auto consecutive = static_cast<std::int64_t>(options.consecutive_kernel_delay_us * 1000);
  std::vector<stream_idle> out;
  for (auto& [stream, list] : by_stream) {
    // HTA sorts each stream's rows by start with NumPy's quicksort: the same tie order.
    std::vector<std::int64_t> starts;
    for (const auto* g : list)
      starts.push_back(g->start);
    std::vector<const gpu_row*> sorted;
    for (const auto i : numpy_argsort(starts))
      sorted.push_back(list[i]);
    list = std::move(sorted);
    stream_idle s;
    s.stream = stream;
    std::vector<double> gaps[3];
    s.by_category[static_cast<int>(idle_category::other)].present = true; // the first row
    for (std::size_t i = 1; i < list.size(); ++i) {
      const auto prev_end = list[i - 1]->end;
      const auto gap = list[i]->start - prev_end;
      const auto& g = *list[i];
      auto cat = idle_category::other;
      if (g.launch_start != INT64_MIN && g.launch_start > prev_end)
        cat = idle_category::host_wait;
      else if (gap < consecutive)
        cat = idle_category::kernel_wait;
      gaps[static_cast<int>(cat)].push_back(to_us(gap));
      s.by_category[static_cast<int>(cat)].present = true;
    }
    double total = 0;
    for (int c = 0; c < 3; ++c) {
      auto& share = s.by_category[c];
      share.time_us = std::accumulate(gaps[c].begin(), gaps[c].end(), 0.0);
      total += share.time_us;
      share.gaps = describe(std::move(gaps[c]));
    }
    for (auto& share : s.by_category)
      if (total != 0)
        share.ratio = share.time_us / total;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

kernel_summary summarize(std::string name, kernel_class type, const std::vector<double>& values) {
  kernel_summary k;
  k.name = std::move(name);
  k.type = type;
  const auto d = describe(values);
  k.count = d.count;
  k.sum_us = d.sum;
  k.max_us = d.max.value_or(0);
  k.min_us = d.min.value_or(0);
  k.mean_us = d.mean.value_or(0);
  k.std_us = d.std.value_or(0); // HTA fills NaN (one kernel) with 0
  return k;
}

} // namespace

kernel_tables kernels_of(const trace& t, const rank_rows& rows, const analysis_options& options) {
  kernel_tables out;
  for (const auto type :
       {kernel_class::computation, kernel_class::communication, kernel_class::memory}) {
    std::map<string_id, std::vector<double>> by_name;
    for (const auto& g : rows.gpu)
      if (g.type == type)
        by_name[g.name].push_back(to_us(g.end - g.start));
    std::vector<kernel_summary> all;
    for (const auto& [name, durations] : by_name)
      all.push_back(summarize(std::string(t.name(name)), type, durations));
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.sum_us > b.sum_us; });
    out.all.insert(out.all.end(), all.begin(), all.end());
    if (all.size() <= options.top_num_kernels) {
      out.top.insert(out.top.end(), all.begin(), all.end());
      continue;
    }
    // HTA: names past the duration_ratio quantile of the cumulative sum, or past num_kernels,
    // become "others"; then the group is re-aggregated by name over the per-name sums.
    std::vector<double> cumsum;
    double running = 0;
    for (const auto& k : all)
      cumsum.push_back(running += k.sum_us);
    const auto cut = quantile(cumsum, options.top_duration_ratio);
    std::map<std::string, std::vector<double>> grouped;
    std::map<std::string, std::size_t> counts;
    for (std::size_t i = 0; i < all.size(); ++i) {
      const bool others = cumsum[i] > cut || i >= options.top_num_kernels;
      const auto& key = others ? std::string("others") : all[i].name;
      grouped[key].push_back(all[i].sum_us);
      counts[key] += all[i].count;
    }
    for (const auto& [name, sums] : grouped) {
      auto k = summarize(name, type, sums);
      k.count = counts[name];
      out.top.push_back(std::move(k));
    }
  }
  return out;
}

} // namespace tdiag::trace::detail
