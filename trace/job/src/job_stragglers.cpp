// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What HTA cannot tell: which rank every collective waited for, how each step's wall time
// splits on the GPU, and which kernels make one rank deviate from the others.
#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "job_breakdown.hpp"

namespace tdiag::trace::detail {

void analyze_collectives(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                         job_analysis_result& out, unsigned threads) {
  out.waits.clear();
  for (const auto& r : ranks)
    out.waits.push_back({r.rank, 0, 0, {}});
  const auto kernels = gather_collectives(ranks, rows, threads); // the matches point into it
  auto aligned = align_clocks(ranks, kernels, out.options.align);
  out.clock_offsets_ns = std::move(aligned.offsets);
  out.clocks = std::move(aligned.clocks);
  auto& matches = aligned.matches;
  std::vector<std::map<int, double>> by_step(ranks.size());
  std::vector<std::pair<double, std::size_t>> order; // by the last arrival on the job clock
  for (const auto& m : matches.matched) {
    collective_wait c;
    c.name = m.id->name;
    c.operation = m.id->operation;
    c.group = m.id->group;
    c.seq = m.seq;
    c.occurrence = m.occurrence;
    c.step = m.step;
    c.members = m.members;
    std::int64_t first = INT64_MAX, last = INT64_MIN;
    std::size_t last_index = 0;
    for (std::size_t i = 0; i < m.members.size(); ++i) {
      const auto r = m.members[i];
      const auto start = m.per_member[i]->start + out.clock_offsets_ns[r];
      first = std::min(first, start);
      if (start > last) {
        last = start;
        last_index = r;
      }
    }
    c.last_rank = ranks[last_index].rank;
    c.spread_us = to_us(last - first);
    for (std::size_t i = 0; i < m.members.size(); ++i) {
      const auto r = m.members[i];
      const double wait = to_us(last - (m.per_member[i]->start + out.clock_offsets_ns[r]));
      c.ranks.push_back(ranks[r].rank);
      c.wait_us.push_back(wait);
      c.start_ns.push_back(m.per_member[i]->start);
      c.end_ns.push_back(m.per_member[i]->end);
      out.waits[r].wait_us += wait;
      by_step[r][c.step] += wait;
    }
    ++out.waits[last_index].times_last;
    order.emplace_back(to_us(last), out.collectives.size());
    out.collectives.push_back(std::move(c));
  }
  for (std::size_t r = 0; r < ranks.size(); ++r)
    out.waits[r].wait_by_step.assign(by_step[r].begin(), by_step[r].end());
  std::stable_sort(order.begin(), order.end());
  std::vector<collective_wait> sorted;
  for (const auto& [time, i] : order)
    sorted.push_back(std::move(out.collectives[i]));
  out.collectives = std::move(sorted);
  std::stable_sort(matches.unmatched.begin(), matches.unmatched.end(),
                   [](const auto& a, const auto& b) {
                     return std::tie(a.rank, a.start_ns) < std::tie(b.rank, b.start_ns);
                   });
  out.unmatched_collectives = std::move(matches.unmatched);
  std::stable_sort(out.waits.begin(), out.waits.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  explain_stragglers(ranks, rows, out, threads);
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
    // Only the rows from the first that reaches the step to the step's end can overlap it.
    for (auto i = first_reaching(rows.gpu_reach, s.start);
         i < rows.gpu.size() && rows.gpu[i].start < s.end; ++i) {
      const auto& g = rows.gpu[i];
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
