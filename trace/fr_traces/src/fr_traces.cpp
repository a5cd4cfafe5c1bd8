// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/fr_traces.hpp>

#include <algorithm>
#include <vector>

namespace tdiag::trace::fr {
namespace {

// The rank's last `n` kernels by start (the end of its trace), oldest first.
culprit_trace culprit_of(int rank, std::span<const job_member> job, std::size_t n) {
  culprit_trace out;
  out.rank = rank;
  const auto it =
      std::find_if(job.begin(), job.end(), [&](const job_member& m) { return m.rank == rank; });
  if (it == job.end())
    return out;
  const trace& t = it->loaded.trace;
  out.source = it->path.string();
  const auto span = t.span();
  out.trace_begin_ns = span.begin;
  out.trace_end_ns = span.end;
  const auto& kernels = t.kernels.all();
  std::vector<std::size_t> order(kernels.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  const std::size_t keep = std::min(n, order.size());
  // The `keep` latest starts (ties: the later end), then oldest first.
  const auto later = [&](std::size_t a, std::size_t b) {
    return kernels[a].start != kernels[b].start ? kernels[a].start > kernels[b].start
                                                : kernels[a].end > kernels[b].end;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep), order.end(),
                    later);
  order.resize(keep);
  std::reverse(order.begin(), order.end());
  for (const auto i : order) {
    const auto& k = kernels[i];
    out.last_kernels.push_back({std::string(t.name(k.name)), k.stream, k.start, k.end - k.start});
  }
  return out;
}

} // namespace

trace_context join_traces(const job_report& verdict, std::span<const job_member> job,
                          const job_analysis_result& analysis, std::string run,
                          const join_options& options) {
  trace_context out;
  out.run = std::move(run);
  out.ranks = job.size();
  out.collectives = analysis.collectives.size();
  for (const auto& c : verdict.culprits)
    out.culprits.push_back(culprit_of(c.rank, job, options.last_kernels));
  for (const auto& w : analysis.waits) {
    if (w.times_last == 0)
      continue;
    trace_straggler s;
    s.rank = w.rank;
    s.times_last = w.times_last;
    s.wait_us = w.wait_us;
    s.late_us = w.late_us;
    for (std::size_t k = 1; k < late_cause_count; ++k)
      if (w.late_by_cause_us[k] > s.cause_us) {
        s.cause_us = w.late_by_cause_us[k];
        s.cause = std::string(to_string(static_cast<late_cause>(k)));
      }
    s.culprit = std::any_of(verdict.culprits.begin(), verdict.culprits.end(),
                            [&](const culprit& c) { return c.rank == w.rank; });
    out.stragglers.push_back(std::move(s));
  }
  std::stable_sort(out.stragglers.begin(), out.stragglers.end(),
                   [](const trace_straggler& a, const trace_straggler& b) {
                     return a.late_us != b.late_us ? a.late_us > b.late_us
                                                   : a.times_last > b.times_last;
                   });
  return out;
}

} // namespace tdiag::trace::fr
