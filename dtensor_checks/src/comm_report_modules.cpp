// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The modules of a comm_report: every collective a recording holds (DTensor's, FSDP2's,
// torch.distributed's), by the module and phase the recorder placed it in, and their table.
// The one ranking of modules: Python's Recording.modules() and tensordiag.dtensor.report() read
// it through the bindings.
#include <tensordiag/dtensor_checks/comm_report.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <utility>

#include "saturating.hpp"

namespace tdiag::dtensor {
namespace {

using detail::sat_add;
using detail::sat_mul;

// Adds one record's collectives of one call (kind, bytes per rank), `calls` times.
template <typename Each> void for_each_issued(const dtensor_case& c, Each each) {
  if (!c.collectives.empty()) {
    for (const auto& x : c.collectives)
      each(std::string_view(x.kind), x.bytes_per_rank);
    return;
  }
  // Recorded before collectives were seen: the planned redistributions stand for them.
  for (const auto& r : c.redistributions)
    if (r.comm != collective::none)
      each(to_string(r.comm), r.bytes_per_rank);
}

} // namespace

std::vector<comm_module> rank_modules(const std::vector<dtensor_case>& cases) {
  if (std::none_of(cases.begin(), cases.end(), [](const auto& c) { return c.has_module; }))
    return {};
  std::map<std::pair<std::string_view, std::string_view>, comm_module> rows;
  for (const auto& c : cases) {
    std::int64_t moved = 0;
    std::int64_t issued = 0;
    for_each_issued(c, [&](std::string_view, std::int64_t bytes) {
      moved = sat_add(moved, bytes);
      ++issued;
    });
    if (issued == 0)
      continue;
    const std::string_view name = c.module.empty() ? top_level_module : c.module;
    auto [it, fresh] = rows.try_emplace({name, c.phase});
    auto& m = it->second;
    if (fresh) {
      m.module = std::string(name);
      m.phase = c.phase;
    }
    moved = sat_mul(moved, c.calls);
    m.bytes = sat_add(m.bytes, moved);
    m.count = sat_add(m.count, sat_mul(issued, c.calls));
    for_each_issued(c, [&](std::string_view kind, std::int64_t) {
      auto& n = m.collectives[std::string(kind)];
      n = sat_add(n, c.calls);
    });
    auto& calls = m.ops[c.call.op];
    calls = sat_add(calls, c.calls);
    if (c.source && !c.source->file.empty()) {
      auto& bytes = m.lines[fmt::format("{}:{}", c.source->file, c.source->line)];
      bytes = sat_add(bytes, moved);
    }
  }
  std::vector<comm_module> out;
  out.reserve(rows.size());
  for (auto& [key, m] : rows)
    out.push_back(std::move(m));
  std::sort(out.begin(), out.end(), [](const comm_module& x, const comm_module& y) {
    return std::tie(y.bytes, y.count, x.module, x.phase) <
           std::tie(x.bytes, x.count, y.module, y.phase);
  });
  return out;
}

std::string modules_text(const comm_report& r, std::size_t top) {
  if (r.modules.empty())
    return {};
  const auto fb = r.format_bytes
                      ? r.format_bytes
                      : bytes_formatter([](std::int64_t n) { return fmt::format("{} bytes", n); });
  std::int64_t bytes = 0;
  std::int64_t count = 0;
  for (const auto& m : r.modules) {
    bytes = sat_add(bytes, m.bytes);
    count = sat_add(count, m.count);
  }
  auto out = fmt::format("{} module phases moved {} per rank in {} collectives\n\n",
                         r.modules.size(), fb(bytes), count);
  out += fmt::format("{:>3}  {:>12}  {:>6}  {:<8}  {:<34}  {}\n", "#", "bytes/rank", "count",
                     "phase", "collectives", "module");
  const auto n = top == 0 ? r.modules.size() : std::min(top, r.modules.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto& m = r.modules[i];
    std::vector<std::pair<std::string, std::int64_t>> kinds(m.collectives.begin(),
                                                            m.collectives.end());
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const auto& x, const auto& y) { return x.second > y.second; });
    std::string parts;
    for (const auto& [kind, calls] : kinds)
      parts += fmt::format("{}{}×{}", parts.empty() ? "" : ", ", kind, calls);
    out += fmt::format("{:>3}  {:>12}  {:>6}  {:<8}  {:<34}  {}\n", i + 1, fb(m.bytes), m.count,
                       m.phase, parts, m.module);
  }
  if (n < r.modules.size())
    out += fmt::format("  ... {} more module phases (--top 0 lists all)\n", r.modules.size() - n);
  return out;
}

} // namespace tdiag::dtensor
