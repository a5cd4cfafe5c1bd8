// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/job_analysis.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

#include "job_breakdown.hpp"

namespace tdiag::trace {

namespace {
bool starts(std::string_view s, std::string_view p) noexcept {
  return s.starts_with(p);
}
bool has(std::string_view s, std::string_view p) noexcept {
  return s.find(p) != std::string_view::npos;
}
// HTA's ComputeKernelGroupingPattern, inverted: names that are NOT computation (re.match
// anchors at the start, so `.*X` means "contains X" and `cuda.*LaunchKernel` "starts with cuda
// and contains LaunchKernel").
bool not_computation(std::string_view n) noexcept {
  return starts(n, "nccl") || has(n, "Memcpy") || has(n, "Memset") || has(n, "dma") ||
         has(n, "Sync") || starts(n, "Stream Wait Event") ||
         (starts(n, "cuda") && has(n.substr(4), "LaunchKernel")) || starts(n, "runFunction") ||
         starts(n, "hip") || starts(n, "job_exe") || starts(n, "packet") || starts(n, "pe_exe") ||
         starts(n, "cpum_exe_subgraph") || starts(n, "hccl") ||
         starts(n, "collective_subgraph_execution");
}
} // namespace

kernel_class classify_kernel(std::string_view n) noexcept {
  if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || has(n, "ncclKernel"))
    return kernel_class::communication;
  if (starts(n, "Memcpy") || starts(n, "hipMemcpy") || starts(n, "Memset") ||
      starts(n, "hipMemset") || starts(n, "dma"))
    return kernel_class::memory;
  if (!not_computation(n))
    return kernel_class::computation;
  return kernel_class::other;
}

std::string_view to_string(kernel_class c) noexcept {
  switch (c) {
  case kernel_class::computation:
    return "COMPUTATION";
  case kernel_class::communication:
    return "COMMUNICATION";
  case kernel_class::memory:
    return "MEMORY";
  case kernel_class::other:
    break;
  }
  return "OTHER";
}

namespace detail {

namespace {

// A ns time as the double of microseconds HTA's parser holds for the same JSON text (`rebase`:
// the whole us the importer took off epoch timestamps).
double us_as_hta_double(std::int64_t ns, std::int64_t rebase) noexcept {
  const auto q = ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
  return static_cast<double>(q + rebase) + static_cast<double>(ns - q * 1000) / 1000.0;
}

// HTA (round_down_time_stamps): ts := ceil(ts), end := floor(ts + dur), both in double us.
void round_like_hta(std::int64_t& start, std::int64_t& end, std::int64_t rebase) noexcept {
  const double ts = us_as_hta_double(start, rebase);
  const double e = ts + us_as_hta_double(end - start, 0);
  start = (static_cast<std::int64_t>(std::ceil(ts)) - rebase) * 1000;
  end = (static_cast<std::int64_t>(std::floor(e)) - rebase) * 1000;
}

std::optional<int> step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (!name.starts_with(prefix))
    return std::nullopt;
  int n = 0;
  const auto digits = name.substr(prefix.size());
  const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc{} || p == digits.data())
    return std::nullopt;
  return n;
}

struct step_window {
  bool filter = false;
  std::int64_t last_start = 0;
};

} // namespace

std::vector<interval> merge_intervals(std::vector<interval> rows) {
  // HTA sorts by start with NumPy's quicksort; ties matter when a -1 us row starts with another.
  std::stable_sort(rows.begin(), rows.end(),
                   [](const interval& a, const interval& b) { return a.start < b.start; });
  std::vector<std::int64_t> starts;
  starts.reserve(rows.size());
  for (const auto& r : rows)
    starts.push_back(r.start);
  std::vector<interval> out;
  std::int64_t running_end = INT64_MIN;
  for (const auto i : numpy_argsort(starts)) {
    const auto& r = rows[i];
    if (out.empty() || r.start > running_end) {
      out.push_back(r);
    } else {
      out.back().end = std::max(out.back().end, r.end);
    }
    running_end = std::max(running_end, r.end);
  }
  return out;
}

row_clock::row_clock(const trace& t, const analysis_options& options) {
  const auto* fractional = t.metadata.property("kineto.fractional_ts");
  round_ = options.hta_compat && fractional && *fractional == "1";
  if (const auto* r = t.metadata.property("kineto.ts_rebase_us"))
    std::from_chars(r->data(), r->data() + r->size(), rebase_);
}

interval row_clock::operator()(std::int64_t start, std::int64_t end) const noexcept {
  if (round_)
    round_like_hta(start, end, rebase_);
  return {start, end};
}

rank_rows build_rows(const trace& t, const analysis_options& options) {
  const row_clock times(t, options);

  // ProfilerStep#N ranges (host or GPU annotations: HTA matches them by name).
  std::set<int> step_names;
  step_window window;
  std::vector<std::pair<int, std::int64_t>> steps;
  std::vector<step_range> host_steps;
  for (const auto& r : t.ranges.all()) {
    if (r.kind == range_kind::gpu_sync)
      continue;
    if (const auto n = step_number(t.name(r.name))) {
      const auto start = times(r.start, r.end).start;
      step_names.insert(*n);
      steps.emplace_back(*n, start);
      if (r.kind == range_kind::step)
        host_steps.push_back({*n, start, times(r.start, r.end).end});
      window.last_start = steps.size() == 1 ? start : std::max(window.last_start, start);
    }
  }
  window.filter = options.hta_compat && step_names.size() >= 2;

  rank_rows rows;
  rows.step_filter = window.filter;
  rows.last_step_start = window.last_start;
  // The kept calls' correlations with their starts, sorted by correlation (the last call of a
  // correlation wins, as a map assigned in trace order would): a sorted vector, not a hash map,
  // for a job of many large ranks.
  std::vector<std::pair<std::uint32_t, std::int64_t>> launches;
  // Exact sizes: a job of many large ranks holds every rank's rows at once.
  rows.gpu.reserve(t.kernels.size() + t.copies.size());
  for (const auto& a : t.api_calls.all()) {
    if (a.correlation == 0)
      continue;
    const auto iv = times(a.start, a.end);
    if (window.filter && iv.start >= window.last_start)
      continue;
    if (options.rank_analyses) // only the per-rank analyses read the CPU rows
      rows.cpu.push_back({iv.start, iv.end, a.name, a.correlation});
    launches.emplace_back(a.correlation, iv.start);
  }
  std::stable_sort(launches.begin(), launches.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  auto launch_of = [&](std::uint32_t correlation) -> const std::int64_t* {
    auto it = std::upper_bound(launches.begin(), launches.end(), correlation,
                               [](std::uint32_t c, const auto& l) { return c < l.first; });
    return it != launches.begin() && (--it)->first == correlation ? &it->second : nullptr;
  };
  std::stable_sort(rows.cpu.begin(), rows.cpu.end(),
                   [](const cpu_row& a, const cpu_row& b) { return a.start < b.start; });

  auto add_gpu = [&](std::int64_t s, std::int64_t e, std::uint64_t stream, string_id name,
                     std::uint32_t correlation, bool is_kernel, std::uint64_t bytes = 0,
                     float source_gbps = 0) {
    // "stream": -1 (Event Sync, Context Sync of newer Kineto) makes a CPU row for HTA.
    if (stream == std::numeric_limits<std::uint64_t>::max())
      return;
    // HTA's GPU kernel filter needs a correlation; with step filtering, a kept CPU partner.
    if (window.filter && (correlation == 0 || !launch_of(correlation)))
      return;
    const auto iv = times(s, e);
    gpu_row g;
    g.start = iv.start;
    g.end = iv.end;
    g.stream = stream;
    g.name = name;
    g.correlation = correlation;
    g.type = classify_kernel(t.name(name));
    g.is_kernel = is_kernel;
    // Kineto's own figure (from the true ns duration) when the source gives one, as HTA reads
    // it; else bytes per ns, which is GB/s (1e9 bytes).
    g.bandwidth_gbps = source_gbps > 0 ? static_cast<double>(source_gbps)
                       : e > s         ? static_cast<double>(bytes) / static_cast<double>(e - s)
                                       : 0.0;
    if (const auto* start = correlation != 0 ? launch_of(correlation) : nullptr)
      g.launch_start = *start;
    rows.gpu.push_back(g);
  };
  for (const auto& k : t.kernels.all())
    add_gpu(k.start, k.end, k.stream, k.name, k.correlation, true);
  for (const auto& c : t.copies.all())
    add_gpu(c.start, c.end, c.stream, c.name, c.correlation, true, c.bytes, c.bandwidth_gbps);
  for (const auto& r : t.ranges.all())
    if (r.kind == range_kind::gpu_sync && r.lane < t.lanes.size())
      add_gpu(r.start, r.end, t.lanes.at(r.lane).id, r.name, r.correlation, false);
  std::stable_sort(rows.gpu.begin(), rows.gpu.end(),
                   [](const gpu_row& a, const gpu_row& b) { return a.start < b.start; });

  std::set<int> remaining;
  for (const auto& [n, start] : steps)
    if (!window.filter || start < window.last_start)
      remaining.insert(n);
  rows.steps.assign(remaining.begin(), remaining.end());
  for (const auto& s : host_steps)
    if (!window.filter || s.start < window.last_start)
      rows.step_ranges.push_back(s);
  std::stable_sort(rows.step_ranges.begin(), rows.step_ranges.end(),
                   [](const step_range& a, const step_range& b) { return a.start < b.start; });
  const auto reach = [](const auto& in_start_order) {
    std::vector<std::int64_t> out(in_start_order.size());
    std::int64_t latest = INT64_MIN;
    for (std::size_t i = 0; i < out.size(); ++i)
      out[i] = latest = std::max(latest, in_start_order[i].end);
    return out;
  };
  rows.gpu_reach = reach(rows.gpu);
  rows.step_reach = reach(rows.step_ranges);
  return rows;
}

std::size_t first_reaching(const std::vector<std::int64_t>& reach, std::int64_t time) noexcept {
  return static_cast<std::size_t>(std::upper_bound(reach.begin(), reach.end(), time) -
                                  reach.begin());
}

} // namespace detail
} // namespace tdiag::trace
