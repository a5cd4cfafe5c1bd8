// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/detail/parallel_for.hpp>
#include <tensordiag/trace/job_analysis.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "job_breakdown.hpp"

namespace tdiag::trace {

std::string_view to_string(idle_category c) noexcept {
  switch (c) {
  case idle_category::host_wait:
    return "host_wait";
  case idle_category::kernel_wait:
    return "kernel_wait";
  case idle_category::other:
    break;
  }
  return "other";
}

namespace detail {

rank_analysis analyze_rows(const trace& t, const rank_rows& rows, int rank,
                           const analysis_options& options) {
  rank_analysis r;
  r.rank = rank;
  r.source = t.metadata.source_path;
  r.steps = rows.steps;
  r.gpu_rows = rows.gpu.size();
  std::set<std::uint64_t> streams;
  for (const auto& g : rows.gpu)
    streams.insert(g.stream);
  r.streams.assign(streams.begin(), streams.end());
  r.temporal = detail::temporal_of(rows);
  r.idle = detail::idle_of(rows, options);
  r.kernel_types = detail::kernel_types_of(rows);
  auto tables = detail::kernels_of(t, rows, options);
  r.kernels = std::move(tables.all);
  r.top_kernels = std::move(tables.top);
  r.comp_comm_overlap_pct = detail::comm_comp_overlap_of(rows);
  r.launches = detail::launches_of(t, rows, options);
  r.queues = detail::queues_of(t, rows);
  r.memory_bw = detail::memory_bw_of(t, rows, options);
  r.critical_path = detail::critical_path_of(t, rows, options);
  return r;
}

} // namespace detail

std::vector<rank_trace> rank_traces(std::span<const job_member> job) {
  std::vector<rank_trace> ranks;
  ranks.reserve(job.size());
  for (const auto& m : job)
    ranks.push_back({m.rank, &m.loaded.trace, m.clock_offset_ns});
  return ranks;
}

rank_analysis analyze_rank(const trace& t, int rank, const analysis_options& options) {
  return detail::analyze_rows(t, detail::build_rows(t, options), rank, options);
}

job_analysis_result analyze_job(std::span<const rank_trace> ranks, const analysis_options& options,
                                unsigned threads) {
  job_analysis_result out;
  out.options = options;
  out.ranks.resize(ranks.size());
  std::vector<detail::rank_rows> rows(ranks.size());
  detail::parallel_for(ranks.size(), threads, [&](std::size_t i) {
    rows[i] = detail::build_rows(*ranks[i].t, options);
    if (options.rank_analyses) {
      out.ranks[i] = detail::analyze_rows(*ranks[i].t, rows[i], ranks[i].rank, options);
    } else {
      out.ranks[i].rank = ranks[i].rank;
      out.ranks[i].source = ranks[i].t->metadata.source_path;
      out.ranks[i].steps = rows[i].steps;
      out.ranks[i].gpu_rows = rows[i].gpu.size();
      rows[i].cpu = {}; // only the per-rank analyses read them; 64 large ranks add up
    }
  });
  detail::analyze_collectives(ranks, rows, out, threads);
  for (std::size_t i = 0; i < ranks.size(); ++i)
    for (auto& s : detail::step_times_of(rows[i], ranks[i].rank))
      out.steps.push_back(s);
  // Rank order from here on (the inputs may come in any order).
  std::stable_sort(out.ranks.begin(), out.ranks.end(),
                   [](const auto& a, const auto& b) { return a.rank < b.rank; });
  std::stable_sort(out.steps.begin(), out.steps.end(), [](const auto& a, const auto& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.step < b.step;
  });
  if (options.rank_analyses)
    out.deviations = detail::deviations_of(out.ranks);
  std::map<std::string, double> sums;
  double total = 0;
  for (const auto& r : out.ranks)
    for (const auto& k : r.kernel_types) {
      sums[k.type] += k.sum_us;
      total += k.sum_us;
    }
  for (const auto& [type, sum] : sums)
    out.kernel_types.push_back({type, sum, total > 0 ? 100.0 * sum / total : 0});
  std::stable_sort(out.kernel_types.begin(), out.kernel_types.end(),
                   [](const auto& a, const auto& b) { return a.sum_us > b.sum_us; });
  return out;
}

} // namespace tdiag::trace
