// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The op-level diff of two runs (hta/trace_diff.py: compare_traces, ops_diff), over whole
// jobs: ops grouped by name, as HTA groups them.
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/job_diff.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "job_rows.hpp"

namespace tdiag::trace {

std::string_view to_string(op_change c) noexcept {
  switch (c) {
  case op_change::added:
    return "added";
  case op_change::removed:
    return "removed";
  case op_change::increased:
    return "increased";
  case op_change::decreased:
    return "decreased";
  case op_change::unchanged:
    break;
  }
  return "unchanged";
}

namespace {

struct op_total {
  bool gpu = false;
  std::size_t count[2] = {0, 0};
  std::int64_t ns[2] = {0, 0};
};

void add_side(std::map<std::string, op_total, std::less<>>& ops, std::span<const rank_trace> side,
              int which, const analysis_options& options) {
  for (const auto& r : side) {
    const trace& t = *r.t;
    const detail::row_clock clock(t, options);
    // Per name id first (one string lookup per distinct name, not per row).
    std::unordered_map<string_id, op_total> by_id;
    auto add = [&](string_id name, std::int64_t s, std::int64_t e, bool gpu) {
      const auto iv = clock(s, e);
      auto& o = by_id[name];
      o.gpu = o.gpu || gpu;
      ++o.count[which];
      o.ns[which] += iv.end - iv.start;
    };
    for (const auto& a : t.api_calls.all())
      add(a.name, a.start, a.end, false);
    for (const auto& g : t.ranges.all())
      add(g.name, g.start, g.end,
          g.kind == range_kind::gpu_sync || g.kind == range_kind::gpu_annotation);
    for (const auto& k : t.kernels.all())
      add(k.name, k.start, k.end, true);
    for (const auto& c : t.copies.all())
      add(c.name, c.start, c.end, true);
    for (const auto& [id, o] : by_id) {
      auto& total = ops[std::string(t.name(id))];
      total.gpu = total.gpu || o.gpu;
      total.count[which] += o.count[which];
      total.ns[which] += o.ns[which];
    }
  }
}

} // namespace

op_diff diff_ops(std::span<const rank_trace> a, std::span<const rank_trace> b,
                 const analysis_options& options) {
  std::map<std::string, op_total, std::less<>> ops;
  add_side(ops, a, 0, options);
  add_side(ops, b, 1, options);
  op_diff out;
  for (auto& [name, o] : ops) {
    op_diff_row row;
    row.name = name;
    row.gpu = o.gpu;
    row.count_a = o.count[0];
    row.count_b = o.count[1];
    row.us_a = detail::to_us(o.ns[0]);
    row.us_b = detail::to_us(o.ns[1]);
    row.change = row.count_a == 0            ? op_change::added
                 : row.count_b == 0          ? op_change::removed
                 : row.count_b > row.count_a ? op_change::increased
                 : row.count_b < row.count_a ? op_change::decreased
                                             : op_change::unchanged;
    ++out.by_change[static_cast<std::size_t>(row.change)];
    out.total_us_a += row.us_a;
    out.total_us_b += row.us_b;
    out.rows.push_back(std::move(row));
  }
  std::stable_sort(out.rows.begin(), out.rows.end(), [](const auto& x, const auto& y) {
    return std::fabs(x.delta_us()) > std::fabs(y.delta_us());
  });
  return out;
}

std::string op_diff_json(const op_diff& diff) {
  tdiag::detail::json_out j;
  j.begin_object();
  j.member("schema", std::string_view("tensordiag.op-diff/v1"));
  j.key("ops_by_change");
  j.begin_object();
  for (std::size_t c = 0; c < op_change_count; ++c) {
    j.key(to_string(static_cast<op_change>(c)));
    j.unsigned_integer(diff.by_change[c]);
  }
  j.end_object();
  j.key("ops");
  j.begin_array();
  for (const auto& r : diff.rows) {
    j.begin_object();
    j.member("name", r.name);
    j.member("device", std::string_view(r.gpu ? "gpu" : "cpu"));
    j.member("change", to_string(r.change));
    j.key("count_a");
    j.unsigned_integer(r.count_a);
    j.key("count_b");
    j.unsigned_integer(r.count_b);
    j.key("diff_count");
    j.integer(static_cast<std::int64_t>(r.count_b) - static_cast<std::int64_t>(r.count_a));
    j.key("total_us_a");
    j.number(r.us_a);
    j.key("total_us_b");
    j.number(r.us_b);
    j.key("diff_us");
    j.number(r.delta_us());
    j.end_object();
  }
  j.end_array();
  j.end_object();
  return j.take();
}

void add_op_diff(report& out, const op_diff& diff, std::string_view label_a,
                 std::string_view label_b, std::size_t top) {
  auto count = [&](op_change c) {
    return static_cast<std::int64_t>(diff.by_change[static_cast<std::size_t>(c)]);
  };
  {
    diagnostic d;
    d.level = severity::note;
    d.code = std::string(codes::op_diff);
    d.title = "op diff";
    d.message = fmt::format(
        "{} -> {}: {} ops by name: {} added, {} removed, {} more often, {} less often, {} as "
        "often; their time {} -> {}",
        label_a, label_b, diff.rows.size(), count(op_change::added), count(op_change::removed),
        count(op_change::increased), count(op_change::decreased), count(op_change::unchanged),
        format_duration(static_cast<std::int64_t>(std::llround(diff.total_us_a * 1000))),
        format_duration(static_cast<std::int64_t>(std::llround(diff.total_us_b * 1000))));
    for (std::size_t c = 0; c < op_change_count; ++c)
      d.add_field(fmt::format("ops_{}", to_string(static_cast<op_change>(c))),
                  count(static_cast<op_change>(c)));
    out.diagnostics.push_back(std::move(d));
  }
  for (std::size_t i = 0; i < std::min(top, diff.rows.size()); ++i) {
    const auto& r = diff.rows[i];
    if (r.delta_us() == 0 && r.change == op_change::unchanged)
      break;
    diagnostic d;
    d.level = severity::note;
    d.code = std::string(codes::op_changed);
    d.title = "op changed";
    const auto ns = [](double us) { return static_cast<std::int64_t>(std::llround(us * 1000)); };
    d.message = fmt::format(
        "{} ({}, {}): {} x{} -> {} x{}, {}{}", printable(r.name, 100), r.gpu ? "GPU" : "host",
        to_string(r.change), format_duration(ns(r.us_a)), r.count_a, format_duration(ns(r.us_b)),
        r.count_b, r.delta_us() >= 0 ? "+" : "", format_duration(ns(r.delta_us())));
    d.add_field("op", r.name);
    d.add_field("device", std::string(r.gpu ? "gpu" : "cpu"));
    d.add_field("change", std::string(to_string(r.change)));
    d.add_field("count_a", static_cast<std::int64_t>(r.count_a));
    d.add_field("count_b", static_cast<std::int64_t>(r.count_b));
    d.add_field("total_ns_a", ns(r.us_a));
    d.add_field("total_ns_b", ns(r.us_b));
    d.add_field("delta_ns", ns(r.delta_us()));
    out.diagnostics.push_back(std::move(d));
  }
}

report run_diff_report(std::span<const rank_trace> a, std::span<const rank_trace> b,
                       const op_diff& ops, std::string_view label_a, std::string_view label_b,
                       std::size_t top, std::vector<diff_result>* pair_diffs) {
  report r;
  r.metadata = make_report_metadata();
  for (const auto& ra : a)
    for (const auto& rb : b)
      if (ra.rank == rb.rank || (a.size() == 1 && b.size() == 1)) {
        auto diff = diff_traces(*ra.t, *rb.t);
        auto part = diff_report(*ra.t, *rb.t, diff, top);
        for (auto& d : part.diagnostics)
          r.diagnostics.push_back(std::move(d));
        if (pair_diffs != nullptr)
          pair_diffs->push_back(std::move(diff));
      }
  if (!ops.rows.empty())
    add_op_diff(r, ops, label_a, label_b, top);
  return r;
}

} // namespace tdiag::trace
