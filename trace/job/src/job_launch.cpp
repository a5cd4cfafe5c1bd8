// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Kernel launch statistics and queue length per stream (HTA's cuda_kernel_analysis.py and
// trace_counters.py), and the describe() statistics every table uses.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "job_breakdown.hpp"

namespace tdiag::trace {

describe_stats describe(std::vector<double> values) {
  describe_stats d;
  d.count = values.size();
  if (values.empty())
    return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const auto v : values)
    sum += v;
  d.sum = sum;
  const auto n = static_cast<double>(values.size());
  d.mean = sum / n;
  if (values.size() > 1) {
    double sq = 0;
    for (const auto v : values)
      sq += (v - *d.mean) * (v - *d.mean);
    d.std = std::sqrt(sq / (n - 1));
  }
  auto at = [&](double q) {
    const double pos = q * (n - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const auto hi = std::min(lo + 1, values.size() - 1);
    return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
  };
  d.min = values.front();
  d.p25 = at(0.25);
  d.p50 = at(0.5);
  d.p75 = at(0.75);
  d.max = values.back();
  return d;
}

namespace detail {

double quantile(std::vector<double> values, double q) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

namespace {

bool named(const trace& t, string_id id, std::initializer_list<std::string_view> names) {
  const auto n = t.name(id);
  return std::find(names.begin(), names.end(), n) != names.end();
}

// What HTA's queue length counts as enqueuing work on a stream.
bool is_enqueue(const trace& t, string_id id) {
  return named(t, id,
               {"cudaMemsetAsync", "cudaMemcpyAsync", "cudaLaunchKernel", "cudaLaunchKernelExC",
                "cuLaunchKernel", "runFunction - job_prep_and_submit_for_execution",
                "hipLaunchKernel", "hipExtModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync",
                "hipMemcpyWithStream", "cuLaunchKernelEx"});
}

// What the launch statistics count as a launch. HTA (`hta_compat`) counts the CUDA runtime's
// calls only: a Triton kernel launched through the driver (cuLaunchKernel) and every launch of
// a ROCm trace (hipLaunchKernel, hipExtModuleLaunchKernel) are not, so an MI300 trace had 0
// launches for its 1,516 kernels. Exact mode counts every call that puts one kernel, copy or
// memset on a stream: HTA's enqueues and the cooperative and module launches it does not name
// (a graph launch, which puts many, is not).
bool is_counted_launch(const trace& t, string_id id, bool hta_compat) {
  if (hta_compat)
    return named(t, id,
                 {"cudaLaunchKernel", "cudaLaunchKernelExC", "cudaMemcpyAsync", "cudaMemsetAsync",
                  "runFunction - job_prep_and_submit_for_execution"});
  return is_enqueue(t, id) ||
         named(t, id,
               {"cudaLaunchCooperativeKernel", "cuLaunchCooperativeKernel", "hipExtLaunchKernel",
                "hipModuleLaunchKernel", "hipLaunchCooperativeKernel"});
}

} // namespace

// Each counted launch with the GPU rows of its correlation id, as HTA's merge on it pairs them
// (one launch, one or more rows). Where several launches share an id (a trace that merged
// processes, or a writer that reuses ids), the merge would pair every launch with every row:
// N launches and N kernels of one id made N^2 pairs (8,000 took 7 s and 1.5 GB). There the
// k-th launch takes the k-th row, and the launches are counted.
launch_statistics launches_of(const trace& t, const rank_rows& rows,
                              const analysis_options& options) {
  struct by_id {
    std::size_t launches = 0, seen = 0;
    std::vector<const gpu_row*> gpu;
  };
  std::unordered_map<std::uint32_t, by_id> ids;
  for (const auto& c : rows.cpu)
    if (is_counted_launch(t, c.name, options.hta_compat))
      ++ids[c.correlation].launches;
  for (const auto& g : rows.gpu)
    if (g.correlation != 0)
      if (const auto it = ids.find(g.correlation); it != ids.end())
        it->second.gpu.push_back(&g);
  std::vector<double> cpu, gpu, delay;
  launch_statistics s;
  const auto runtime_cut = options.launch_runtime_cutoff_us;
  const auto delay_cut = options.launch_delay_cutoff_us;
  for (const auto& c : rows.cpu) {
    const auto it = ids.find(c.correlation);
    if (it == ids.end())
      continue;
    auto& id = it->second;
    std::span<const gpu_row* const> paired = id.gpu;
    if (id.launches > 1) {
      ++s.shared_correlation_launches;
      paired = id.seen < paired.size() ? paired.subspan(id.seen++, 1) : paired.first(0);
    }
    for (const auto* row : paired) {
      const auto& g = *row;
      const double cd = to_us(c.end - c.start), gd = to_us(g.end - g.start);
      const double ld = std::max(0.0, to_us(g.start - c.end));
      cpu.push_back(cd);
      gpu.push_back(gd);
      delay.push_back(ld);
      ++s.num_launches;
      s.short_kernels += cd <= runtime_cut && gd < cd ? 1 : 0;
      s.runtime_outliers += cd > runtime_cut ? 1 : 0;
      s.launch_delay_outliers += ld > delay_cut ? 1 : 0;
    }
  }
  s.cpu_duration = describe(std::move(cpu));
  s.gpu_duration = describe(std::move(gpu));
  s.launch_delay = describe(std::move(delay));
  return s;
}

namespace {

// Walks HTA's queue-length series: fn(stream, correlation, enqueue?, length after the change).
template <typename Fn> void walk_queue(const trace& t, const rank_rows& rows, Fn&& fn) {
  std::unordered_map<std::uint32_t, std::uint64_t> stream_of;
  std::unordered_set<std::uint32_t> enqueued;
  for (const auto& c : rows.cpu)
    if (is_enqueue(t, c.name))
      enqueued.insert(c.correlation);
  for (const auto& g : rows.gpu)
    if (g.correlation != 0 && enqueued.contains(g.correlation))
      stream_of.try_emplace(g.correlation, g.stream);
  // HTA concatenates the enqueue calls and then the GPU rows (each in trace order, which is
  // start order here), sorts the whole by time with NumPy's unstable quicksort and takes each
  // stream's rows in that order: ties between streams' rows decide the series, so the same sort.
  std::vector<std::int64_t> times;
  struct change {
    std::uint64_t stream;
    std::uint32_t correlation;
    int delta; // +1 enqueue, -1 start on the GPU
  };
  std::vector<change> changes;
  for (const auto& c : rows.cpu)
    if (enqueued.contains(c.correlation))
      if (const auto it = stream_of.find(c.correlation); it != stream_of.end()) {
        times.push_back(c.start);
        changes.push_back({it->second, c.correlation, +1});
      }
  for (const auto& g : rows.gpu)
    if (g.correlation != 0 && enqueued.contains(g.correlation)) {
      times.push_back(g.start);
      changes.push_back({g.stream, g.correlation, -1});
    }
  std::unordered_map<std::uint64_t, int> length;
  for (const auto i : numpy_argsort(times)) {
    const auto& c = changes[i];
    fn(c.stream, c.correlation, c.delta > 0, length[c.stream] += c.delta);
  }
}

} // namespace

std::vector<stream_queue> queues_of(const trace& t, const rank_rows& rows) {
  std::map<std::uint64_t, std::vector<double>> series;
  walk_queue(t, rows, [&](std::uint64_t stream, std::uint32_t, bool, int length) {
    series[stream].push_back(length);
  });
  std::vector<stream_queue> out;
  for (auto& [stream, s] : series)
    out.push_back({stream, describe(std::move(s))});
  return out;
}

queue_points queue_points_of(const trace& t, const rank_rows& rows) {
  queue_points q;
  walk_queue(t, rows, [&](std::uint64_t, std::uint32_t correlation, bool enqueue, int length) {
    (enqueue ? q.at_enqueue : q.at_start)[correlation] = length;
  });
  return q;
}

} // namespace detail
} // namespace tdiag::trace
