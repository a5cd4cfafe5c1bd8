// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What HTA cannot tell: which rank every collective waited for, how each step's wall time
// splits on the GPU, and which kernels make one rank deviate from the others.
#include <algorithm>
#include <map>
#include <string>

#include "job_breakdown.hpp"

namespace tdiag::trace::detail {

namespace {

std::int64_t median(std::vector<std::int64_t> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int step_at(const rank_rows& rows, std::int64_t time) {
  for (const auto& s : rows.step_ranges)
    if (s.start <= time && time < s.end)
      return s.step;
  return -1;
}

// Per collective key (name, n): the n-th communication kernel of that name, per rank.
using collective_map = std::map<std::pair<std::string, std::size_t>, std::vector<const gpu_row*>>;

collective_map match_collectives(std::span<const rank_trace> ranks,
                                 const std::vector<rank_rows>& rows) {
  collective_map matched;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    std::map<string_id, std::size_t> seen;
    for (const auto& g : rows[r].gpu) {
      if (g.type != kernel_class::communication || !g.is_kernel)
        continue;
      const auto n = seen[g.name]++;
      auto& slot = matched[{std::string(ranks[r].t->name(g.name)), n}];
      slot.resize(ranks.size(), nullptr);
      slot[r] = &g;
    }
  }
  std::erase_if(matched, [](const auto& entry) {
    return std::find(entry.second.begin(), entry.second.end(), nullptr) != entry.second.end();
  });
  return matched;
}

} // namespace

void analyze_collectives(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                         job_analysis_result& out) {
  out.clock_offsets_ns.clear();
  for (const auto& r : ranks)
    out.clock_offsets_ns.push_back(r.clock_offset_ns);
  out.waits.clear();
  for (const auto& r : ranks)
    out.waits.push_back({r.rank, 0, 0, {}});
  if (ranks.size() < 2)
    return;
  const auto matched = match_collectives(ranks, rows);
  if (out.options.align_collectives && !matched.empty()) {
    // Collectives end together on every rank: the median end difference is the clock offset.
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      std::vector<std::int64_t> diffs;
      for (const auto& [key, per_rank] : matched)
        diffs.push_back(per_rank[0]->end - per_rank[r]->end);
      out.clock_offsets_ns[r] = median(std::move(diffs));
    }
  }
  std::vector<std::map<int, double>> by_step(ranks.size());
  for (const auto& [key, per_rank] : matched) {
    collective_wait c;
    c.name = key.first;
    c.occurrence = key.second;
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    std::size_t last_index = 0;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const auto start = per_rank[r]->start + out.clock_offsets_ns[r];
      first = std::min(first, start);
      if (start > last) {
        last = start;
        last_index = r;
      }
    }
    c.last_rank = ranks[last_index].rank;
    c.spread_us = to_us(last - first);
    const auto& late = *per_rank[last_index];
    c.step =
        step_at(rows[last_index], late.launch_start != INT64_MIN ? late.launch_start : late.start);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const double wait = to_us(last - (per_rank[r]->start + out.clock_offsets_ns[r]));
      c.wait_us.push_back(wait);
      c.start_ns.push_back(per_rank[r]->start);
      c.end_ns.push_back(per_rank[r]->end);
      out.waits[r].wait_us += wait;
      by_step[r][c.step] += wait;
    }
    ++out.waits[last_index].times_last;
    out.collectives.push_back(std::move(c));
  }
  for (std::size_t r = 0; r < ranks.size(); ++r)
    out.waits[r].wait_by_step.assign(by_step[r].begin(), by_step[r].end());
  // Time order on the job clock: by the last arrival.
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t i = 0; i < out.collectives.size(); ++i) {
    const auto& c = out.collectives[i];
    const auto& g = *matched.at({c.name, c.occurrence})[0];
    order.emplace_back(to_us(g.start + out.clock_offsets_ns[0]) + c.wait_us[0], i);
  }
  std::stable_sort(order.begin(), order.end());
  std::vector<collective_wait> sorted;
  for (const auto& [time, i] : order)
    sorted.push_back(std::move(out.collectives[i]));
  out.collectives = std::move(sorted);
  std::stable_sort(out.waits.begin(), out.waits.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
}

std::vector<step_time> step_times_of(const rank_rows& rows, int rank) {
  std::vector<step_time> out;
  for (const auto& s : rows.step_ranges) {
    step_time st;
    st.rank = rank;
    st.step = s.step;
    st.start_ns = s.start;
    st.end_ns = s.end;
    st.step_us = to_us(s.end - s.start);
    std::vector<interval> all, by_class[3];
    for (const auto& g : rows.gpu) {
      const auto a = std::max(g.start, s.start), b = std::min(g.end, s.end);
      if (a >= b)
        continue;
      all.push_back({a, b});
      if (g.type != kernel_class::other)
        by_class[static_cast<int>(g.type)].push_back({a, b});
    }
    auto length = [](std::vector<interval> v) {
      std::int64_t sum = 0;
      for (const auto& m : merge_intervals(std::move(v)))
        sum += m.end - m.start;
      return to_us(sum);
    };
    st.gpu_busy_us = length(std::move(all));
    st.compute_us = length(std::move(by_class[static_cast<int>(kernel_class::computation)]));
    st.communication_us =
        length(std::move(by_class[static_cast<int>(kernel_class::communication)]));
    st.memory_us = length(std::move(by_class[static_cast<int>(kernel_class::memory)]));
    out.push_back(st);
  }
  return out;
}

std::vector<rank_deviation> deviations_of(const std::vector<rank_analysis>& ranks) {
  std::vector<rank_deviation> out;
  if (ranks.size() < 2)
    return out;
  std::map<std::pair<kernel_class, std::string>, std::vector<double>> sums;
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (const auto& k : ranks[r].kernels) {
      auto& v = sums[{k.type, k.name}];
      v.resize(ranks.size(), 0.0);
      v[r] = k.sum_us;
    }
  for (auto& [key, v] : sums) {
    v.resize(ranks.size(), 0.0);
    auto sorted = v;
    std::sort(sorted.begin(), sorted.end());
    const auto n = sorted.size();
    const double med = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (v[r] != med)
        out.push_back({ranks[r].rank, key.second, key.first, v[r], med});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::abs(a.delta_us()) > std::abs(b.delta_us());
  });
  if (out.size() > 20)
    out.resize(20);
  return out;
}

} // namespace tdiag::trace::detail
