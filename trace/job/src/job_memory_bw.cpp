// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// HTA's memory bandwidth time series and its summary (trace_counters.py,
// get_memory_bw_time_series / get_memory_bw_summary): each memcpy/memset adds its bandwidth at
// its start and takes it off at its end; the series of one kind of operation is the running
// sum, and the summary describes its positive points.
#include <map>
#include <string>

#include "job_breakdown.hpp"

namespace tdiag::trace::detail {

namespace {

// HTA's get_memory_kernel_type: "Memset", or the first 11 characters ("Memcpy DtoH").
std::string memory_kind_name(std::string_view name) {
  if (name.starts_with("Memset"))
    return "Memset";
  if (!name.starts_with("Memcpy"))
    return "Memcpy Unknown";
  return std::string(name.substr(0, 11));
}

} // namespace

std::vector<memory_bandwidth> memory_bw_of(const trace& t, const rank_rows& rows,
                                           const analysis_options& options) {
  // HTA concatenates the starts and then the ends (each in row order), sorts by time with
  // NumPy's quicksort and sums per name in that order; a 0-length operation lasts one unit.
  const std::int64_t unit = options.hta_compat ? 1000 : 1;
  std::vector<const gpu_row*> ops;
  for (const auto& g : rows.gpu)
    if (g.type == kernel_class::memory)
      ops.push_back(&g);
  if (ops.empty())
    return {};
  std::vector<std::int64_t> times;
  times.reserve(ops.size() * 2);
  for (const auto* g : ops)
    times.push_back(g->start);
  for (const auto* g : ops)
    times.push_back(g->end == g->start ? g->start + unit : g->end);
  std::vector<std::string> names;
  names.reserve(ops.size());
  for (const auto* g : ops)
    names.push_back(memory_kind_name(t.name(g->name)));
  std::map<std::string, std::pair<double, std::vector<double>>> series;
  for (const auto i : numpy_argsort(times)) {
    const auto op = i % ops.size();
    auto& [sum, points] = series[names[op]];
    sum += i < ops.size() ? ops[op]->bandwidth_gbps : -ops[op]->bandwidth_gbps;
    if (sum > 0)
      points.push_back(sum);
  }
  std::vector<memory_bandwidth> out;
  for (auto& [name, s] : series)
    if (!s.second.empty())
      out.push_back({name, describe(std::move(s.second))});
  return out;
}

} // namespace tdiag::trace::detail
