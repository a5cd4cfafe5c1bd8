// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/diff_analysis.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace tdiag::trace {
namespace {

using row_map = std::map<std::string, diff_row>;

void add_sites(const trace& t, row_map& rows, bool second, std::int64_t& total,
               std::pair<std::size_t, std::uint64_t>& disagree) {
  for (const auto& a : live_allocations(t, &disagree)) {
    auto& row = rows[describe_frame(t, user_frame(t, a.stack))];
    auto& bytes = second ? row.b : row.a;
    bytes = detail::sat_add(bytes, detail::signed_size(a.bytes));
    ++(second ? row.count_b : row.count_a);
    total = detail::sat_add(total, detail::signed_size(a.bytes));
  }
}

void add_kernels(const trace& t, row_map& rows, bool second) {
  for (const auto& k : kernel_stats(t)) {
    auto& row = rows[std::string(t.name(k.name))];
    auto& ns = second ? row.b : row.a;
    ns = detail::sat_add(ns, k.total_ns);
    (second ? row.count_b : row.count_a) += k.count;
  }
}

std::vector<diff_row> ordered(row_map& rows) {
  std::vector<diff_row> out;
  for (auto& [key, row] : rows) {
    row.key = key;
    if (row.delta() != 0 || row.count_a != row.count_b)
      out.push_back(row);
  }
  std::stable_sort(out.begin(), out.end(), [](const diff_row& x, const diff_row& y) {
    return std::abs(x.delta()) > std::abs(y.delta());
  });
  return out;
}

void peaks(const trace& t, std::int64_t& allocated, std::int64_t& reserved) {
  for (const auto& p : memory_peaks(t)) {
    allocated = std::max(allocated, p.peak_allocated);
    reserved = std::max(reserved, p.peak_reserved);
  }
}

std::string short_name(std::string_view name) {
  return name.size() > 100 ? fmt::format("{}...", name.substr(0, 97)) : std::string(name);
}

} // namespace

diff_result diff_traces(const trace& a, const trace& b) {
  diff_result r;
  row_map sites, kernels;
  add_sites(a, sites, false, r.live_a, r.disagree_a);
  add_sites(b, sites, true, r.live_b, r.disagree_b);
  add_kernels(a, kernels, false);
  add_kernels(b, kernels, true);
  r.sites = ordered(sites);
  r.kernels = ordered(kernels);
  peaks(a, r.peak_allocated_a, r.peak_reserved_a);
  peaks(b, r.peak_allocated_b, r.peak_reserved_b);
  return r;
}

report diff_report(const trace& a, const trace& b, const diff_result& r, std::size_t top) {
  report out;
  out.metadata = make_report_metadata();
  {
    diagnostic d;
    d.level = severity::note;
    d.code = codes::diff;
    d.title = "trace diff";
    d.message = fmt::format(
        "{} -> {}: live at the end {} -> {} ({}), peak allocated {} -> {}, peak reserved {} -> {}",
        a.metadata.source_path, b.metadata.source_path, format_bytes_or_unknown(r.live_a),
        format_bytes_or_unknown(r.live_b), format_byte_delta(detail::sat_sub(r.live_b, r.live_a)),
        format_bytes_or_unknown(r.peak_allocated_a), format_bytes_or_unknown(r.peak_allocated_b),
        format_bytes_or_unknown(r.peak_reserved_a), format_bytes_or_unknown(r.peak_reserved_b));
    d.add_field("live_bytes_a", r.live_a);
    d.add_field("live_bytes_b", r.live_b);
    d.add_field("peak_allocated_a", r.peak_allocated_a);
    d.add_field("peak_allocated_b", r.peak_allocated_b);
    d.add_field("peak_reserved_a", r.peak_reserved_a);
    d.add_field("peak_reserved_b", r.peak_reserved_b);
    d.add_field("sites_changed", static_cast<std::int64_t>(r.sites.size()));
    d.add_field("kernels_changed", static_cast<std::int64_t>(r.kernels.size()));
    out.diagnostics.push_back(std::move(d));
  }
  // A live figure that follows a dump its history disagrees with is said, as leaks says it.
  for (const auto& [t, disagree] : {std::pair{&a, r.disagree_a}, std::pair{&b, r.disagree_b}})
    if (disagree.first != 0)
      out.diagnostics.push_back(history_disagrees_warning(*t, disagree.first, disagree.second));
  for (std::size_t i = 0; i < std::min(top, r.sites.size()); ++i) {
    const auto& s = r.sites[i];
    diagnostic d;
    const bool grew = s.delta() > 0;
    d.level = grew ? severity::warning : severity::note;
    d.code = grew ? codes::site_grew : codes::site_shrank;
    d.title = grew ? "site grew" : "site shrank";
    d.message = fmt::format("{}: live {} ({} allocs) -> {} ({} allocs), {}", s.key,
                            format_bytes(static_cast<std::uint64_t>(s.a)), s.count_a,
                            format_bytes(static_cast<std::uint64_t>(s.b)), s.count_b,
                            format_byte_delta(s.delta()));
    d.add_field("site", s.key);
    d.add_field("bytes_a", s.a);
    d.add_field("bytes_b", s.b);
    d.add_field("delta_bytes", s.delta());
    d.add_field("count_a", static_cast<std::int64_t>(s.count_a));
    d.add_field("count_b", static_cast<std::int64_t>(s.count_b));
    out.diagnostics.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < std::min(top, r.kernels.size()); ++i) {
    const auto& k = r.kernels[i];
    diagnostic d;
    d.level = severity::note;
    d.code = codes::kernel_time_changed;
    d.title = "kernel time changed";
    const auto mean = [](std::int64_t total, std::size_t n) {
      return n == 0 ? 0 : total / static_cast<std::int64_t>(n);
    };
    d.message = fmt::format("{}: {} x{} (mean {}) -> {} x{} (mean {}), {}{}", short_name(k.key),
                            format_duration(k.a), k.count_a, format_duration(mean(k.a, k.count_a)),
                            format_duration(k.b), k.count_b, format_duration(mean(k.b, k.count_b)),
                            k.delta() >= 0 ? "+" : "", format_duration(k.delta()));
    d.add_field("kernel", k.key);
    d.add_field("total_ns_a", k.a);
    d.add_field("total_ns_b", k.b);
    d.add_field("count_a", static_cast<std::int64_t>(k.count_a));
    d.add_field("count_b", static_cast<std::int64_t>(k.count_b));
    d.add_field("delta_ns", k.delta());
    out.diagnostics.push_back(std::move(d));
  }
  return out;
}

} // namespace tdiag::trace
