// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tensordiag.analysis/v1: the JSON form of a job analysis (documented in docs/analysis.md).
#include <tensordiag/core/detail/json_out.hpp>
#include <tensordiag/trace/job_analysis.hpp>

#include <cmath>
#include <map>

namespace tdiag::trace {

namespace {

using tdiag::detail::json_out;

void unsigned_member(json_out& j, std::string_view key, std::uint64_t n) {
  j.key(key);
  j.unsigned_integer(n);
}

void number_or_null(json_out& j, std::string_view key, const std::optional<double>& v) {
  j.key(key);
  if (v && std::isfinite(*v))
    j.number(*v);
  else
    j.raw("null");
}

void write_describe(json_out& j, std::string_view key, const describe_stats& d) {
  j.key(key);
  j.begin_object();
  unsigned_member(j, "count", d.count);
  number_or_null(j, "sum", d.count ? std::optional<double>(d.sum) : std::nullopt);
  number_or_null(j, "mean", d.mean);
  number_or_null(j, "std", d.std);
  number_or_null(j, "min", d.min);
  number_or_null(j, "p25", d.p25);
  number_or_null(j, "p50", d.p50);
  number_or_null(j, "p75", d.p75);
  number_or_null(j, "max", d.max);
  j.end_object();
}

void write_types(json_out& j, std::string_view key, const std::vector<kernel_type_time>& types) {
  j.key(key);
  j.begin_array();
  for (const auto& k : types) {
    j.begin_object();
    j.member("kernel_type", k.type);
    number_or_null(j, "sum_us", k.sum_us);
    number_or_null(j, "pct", k.pct);
    j.end_object();
  }
  j.end_array();
}

void write_kernels(json_out& j, std::string_view key, const std::vector<kernel_summary>& list) {
  j.key(key);
  j.begin_array();
  for (const auto& k : list) {
    j.begin_object();
    j.member("name", k.name);
    j.member("kernel_type", to_string(k.type));
    unsigned_member(j, "count", k.count);
    number_or_null(j, "sum_us", k.sum_us);
    number_or_null(j, "max_us", k.max_us);
    number_or_null(j, "min_us", k.min_us);
    number_or_null(j, "mean_us", k.mean_us);
    number_or_null(j, "std_us", k.std_us);
    j.end_object();
  }
  j.end_array();
}

void write_critical_path(json_out& j, const critical_path_result& c) {
  j.key("critical_path");
  j.begin_object();
  j.member("annotation", c.annotation);
  j.member("instance", std::int64_t{c.instance});
  j.key("computed");
  j.raw(c.computed ? "true" : "false");
  if (!c.computed)
    j.member("reason", c.reason);
  j.member("instance_name", c.instance_name);
  number_or_null(j, "window_start_us", c.window_start_us);
  number_or_null(j, "window_end_us", c.window_end_us);
  unsigned_member(j, "graph_nodes", c.graph_nodes);
  unsigned_member(j, "graph_edges", c.graph_edges);
  unsigned_member(j, "path_edges", c.path_edges);
  unsigned_member(j, "path_nodes", c.computed && c.path_edges > 0 ? c.path_edges + 1 : 0);
  number_or_null(j, "total_us", c.total_us);
  number_or_null(j, "path_start_us", c.path_start_us);
  number_or_null(j, "path_end_us", c.path_end_us);
  j.key("bound_by_us");
  j.begin_object();
  for (std::size_t b = 0; b < path_bound_count; ++b)
    number_or_null(j, to_string(static_cast<path_bound>(b)), c.bound_by_us[b]);
  j.end_object();
  // HTA's summary(): each kind's share of the path's summed edge weights.
  double sum = 0;
  for (const double us : c.bound_by_us)
    sum += us;
  j.key("bound_by_pct");
  j.begin_object();
  for (std::size_t b = 0; b < path_bound_count; ++b)
    if (sum > 0)
      number_or_null(j, to_string(static_cast<path_bound>(b)), 100.0 * c.bound_by_us[b] / sum);
    else
      j.key(to_string(static_cast<path_bound>(b))), j.null();
  j.end_object();
  number_or_null(j, "sum_edge_weights_us", sum);
  j.key("edges_by_bound");
  j.begin_object();
  for (std::size_t b = 0; b < path_bound_count; ++b) {
    j.key(to_string(static_cast<path_bound>(b)));
    j.unsigned_integer(c.edges_by_bound[b]);
  }
  j.end_object();
  // HTA's edge_type: the kinds of edge on the path, with their time and count.
  j.key("edge_type");
  j.begin_object();
  for (std::size_t k = 0; k < path_edge_kind_count; ++k) {
    if (c.edges_by_type[k] == 0)
      continue;
    j.key(to_string(static_cast<path_edge_kind>(k)));
    j.begin_object();
    number_or_null(j, "sum_us", c.edge_type_us[k]);
    unsigned_member(j, "count", c.edges_by_type[k]);
    j.end_object();
  }
  j.end_object();
  j.end_object();
}

void write_streams(json_out& j, const rank_analysis& r) {
  std::map<std::uint64_t, const stream_idle*> idle;
  std::map<std::uint64_t, const stream_queue*> queue;
  for (const auto& s : r.idle)
    idle[s.stream] = &s;
  for (const auto& q : r.queues)
    queue[q.stream] = &q;
  j.key("per_stream");
  j.begin_array();
  for (const auto stream : r.streams) {
    j.begin_object();
    unsigned_member(j, "stream", stream);
    if (const auto it = idle.find(stream); it != idle.end()) {
      static constexpr idle_category cats[] = {idle_category::host_wait, idle_category::kernel_wait,
                                               idle_category::other};
      j.key("idle_breakdown");
      j.begin_object();
      for (const auto c : cats)
        number_or_null(j, std::string(to_string(c)) + "_us",
                       it->second->by_category[static_cast<int>(c)].time_us);
      j.end_object();
      j.key("idle_ratio");
      j.begin_object();
      for (const auto c : cats)
        number_or_null(j, to_string(c), it->second->by_category[static_cast<int>(c)].ratio);
      j.end_object();
      j.key("idle_gaps_us");
      j.begin_object();
      for (const auto c : cats)
        if (it->second->by_category[static_cast<int>(c)].present)
          write_describe(j, to_string(c), it->second->by_category[static_cast<int>(c)].gaps);
      j.end_object();
    }
    if (const auto it = queue.find(stream); it != queue.end())
      write_describe(j, "queue_length", it->second->length);
    j.end_object();
  }
  j.end_array();
}

void write_rank(json_out& j, const rank_analysis& r) {
  j.begin_object();
  j.member("rank", std::int64_t{r.rank});
  j.member("source", r.source);
  j.key("steps");
  j.begin_array();
  for (const auto s : r.steps)
    j.integer(s);
  j.end_array();
  unsigned_member(j, "gpu_rows", r.gpu_rows);
  const auto& t = r.temporal;
  number_or_null(j, "idle_time_us", t.idle_us);
  number_or_null(j, "compute_time_us", t.compute_us);
  number_or_null(j, "non_compute_time_us", t.non_compute_us);
  number_or_null(j, "kernel_time_us", t.kernel_us);
  number_or_null(j, "idle_time_pct", t.pct(t.idle_us));
  number_or_null(j, "compute_time_pct", t.pct(t.compute_us));
  number_or_null(j, "non_compute_time_pct", t.pct(t.non_compute_us));
  number_or_null(j, "comp_comm_overlap_pct", r.comp_comm_overlap_pct);
  const auto& l = r.launches;
  unsigned_member(j, "num_launches", l.num_launches);
  unsigned_member(j, "short_kernels", l.short_kernels);
  unsigned_member(j, "runtime_outliers", l.runtime_outliers);
  unsigned_member(j, "launch_delay_outliers", l.launch_delay_outliers);
  unsigned_member(j, "shared_correlation_launches", l.shared_correlation_launches);
  write_describe(j, "cpu_duration_us", l.cpu_duration);
  write_describe(j, "gpu_duration_us", l.gpu_duration);
  write_describe(j, "launch_delay_us", l.launch_delay);
  write_types(j, "kernel_types", r.kernel_types);
  write_streams(j, r);
  write_kernels(j, "top_kernels", r.top_kernels);
  write_kernels(j, "kernels", r.kernels);
  j.key("memory_bw");
  j.begin_array();
  for (const auto& m : r.memory_bw) {
    j.begin_object();
    j.member("name", m.name);
    write_describe(j, "gbps", m.gbps);
    j.end_object();
  }
  j.end_array();
  write_critical_path(j, r.critical_path);
  j.end_object();
}

void write_by_cause(json_out& j, std::string_view key, const double (&us)[late_cause_count]) {
  j.key(key);
  j.begin_object();
  for (std::size_t k = 1; k < late_cause_count; ++k)
    number_or_null(j, to_string(static_cast<late_cause>(k)), us[k]);
  j.end_object();
}

void write_clocks(json_out& j, const job_clocks& c) {
  j.key("clocks");
  j.begin_object();
  j.member("requested", to_string(c.requested));
  j.member("used", to_string(c.used));
  j.member("reference_rank", std::int64_t{c.reference_rank});
  j.key("ranks");
  j.begin_array();
  for (const auto& r : c.ranks) {
    j.begin_object();
    j.member("rank", std::int64_t{r.rank});
    j.member("offset_ns", r.offset_ns);
    j.member("base_time_offset_ns", r.base_time_offset_ns);
    j.key("collective_offset_ns");
    if (r.collective_offset_ns)
      j.integer(*r.collective_offset_ns);
    else
      j.raw("null");
    unsigned_member(j, "collectives", r.collectives);
    number_or_null(j, "median_abs_residual_us", r.median_abs_residual_us);
    number_or_null(j, "max_abs_residual_us", r.max_abs_residual_us);
    number_or_null(j, "disagreement_us", r.disagreement_us);
    j.end_object();
  }
  j.end_array();
  j.key("warnings");
  j.begin_array();
  for (const auto& w : c.warnings) {
    j.begin_object();
    j.member("code", w.code);
    j.member("message", w.message);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_cause(json_out& j, const straggler_cause& c) {
  j.key("cause");
  j.begin_object();
  j.member("kind", to_string(c.cause));
  number_or_null(j, "late_us", c.late_us);
  write_by_cause(j, "excess_us", c.excess_us);
  j.member("window_start_ns", c.window_start_ns);
  j.member("window_end_ns", c.window_end_ns);
  j.key("kernels");
  j.begin_array();
  for (const auto& k : c.kernels) {
    j.begin_object();
    j.member("name", k.name);
    number_or_null(j, "us", k.us);
    number_or_null(j, "median_us", k.median_us);
    number_or_null(j, "excess_us", k.excess_us());
    j.member("start_ns", k.start_ns);
    j.member("end_ns", k.end_ns);
    j.end_object();
  }
  j.end_array();
  j.member("gap_start_ns", c.gap_start_ns);
  j.member("gap_end_ns", c.gap_end_ns);
  j.member("gap_host", c.gap_host);
  j.member("waited_on", c.waited_on);
  j.member("focus_start_ns", c.focus_start_ns);
  j.member("focus_end_ns", c.focus_end_ns);
  j.end_object();
}

void write_stragglers(json_out& j, const job_analysis_result& r) {
  j.key("stragglers");
  j.begin_object();
  j.key("per_rank");
  j.begin_array();
  for (const auto& w : r.waits) {
    j.begin_object();
    j.member("rank", std::int64_t{w.rank});
    number_or_null(j, "wait_us", w.wait_us);
    unsigned_member(j, "times_last", w.times_last);
    j.key("wait_by_step");
    j.begin_array();
    for (const auto& [step, wait] : w.wait_by_step) {
      j.begin_object();
      j.member("step", std::int64_t{step});
      number_or_null(j, "wait_us", wait);
      j.end_object();
    }
    j.end_array();
    number_or_null(j, "late_us", w.late_us);
    write_by_cause(j, "late_by_cause_us", w.late_by_cause_us);
    j.key("late_by_step");
    j.begin_array();
    for (const auto& s : w.late_by_step) {
      j.begin_object();
      j.member("step", std::int64_t{s.step});
      unsigned_member(j, "times_last", s.times_last);
      number_or_null(j, "late_us", s.late_us);
      write_by_cause(j, "by_cause_us", s.by_cause_us);
      j.end_object();
    }
    j.end_array();
    j.end_object();
  }
  j.end_array();
  j.key("collectives");
  j.begin_array();
  for (const auto& c : r.collectives) {
    j.begin_object();
    j.member("name", c.name);
    j.member("operation", c.operation);
    j.member("group", c.group);
    j.member("seq", c.seq);
    unsigned_member(j, "occurrence", c.occurrence);
    j.member("step", std::int64_t{c.step});
    j.member("last_rank", std::int64_t{c.last_rank});
    number_or_null(j, "spread_us", c.spread_us);
    j.key("ranks");
    j.begin_array();
    for (const auto rank : c.ranks)
      j.integer(std::int64_t{rank});
    j.end_array();
    j.key("wait_us");
    j.begin_array();
    for (const auto w : c.wait_us)
      j.number(w);
    j.end_array();
    j.key("start_ns");
    j.begin_array();
    for (const auto t : c.start_ns)
      j.integer(t);
    j.end_array();
    write_cause(j, c.cause);
    j.end_object();
  }
  j.end_array();
  j.key("unmatched_collectives");
  j.begin_array();
  for (const auto& u : r.unmatched_collectives) {
    j.begin_object();
    j.member("rank", std::int64_t{u.rank});
    j.member("name", u.name);
    j.member("operation", u.operation);
    j.member("group", u.group);
    j.member("seq", u.seq);
    j.member("step", std::int64_t{u.step});
    j.member("start_ns", u.start_ns);
    j.member("end_ns", u.end_ns);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

void write_job_extras(json_out& j, const job_analysis_result& r) {
  j.key("clock_offsets_ns");
  j.begin_array();
  for (const auto o : r.clock_offsets_ns)
    j.integer(o);
  j.end_array();
  write_clocks(j, r.clocks);
  write_stragglers(j, r);
  j.key("steps");
  j.begin_array();
  for (const auto& s : r.steps) {
    j.begin_object();
    j.member("rank", std::int64_t{s.rank});
    j.member("step", std::int64_t{s.step});
    number_or_null(j, "step_us", s.step_us);
    number_or_null(j, "gpu_busy_us", s.gpu_busy_us);
    number_or_null(j, "gpu_idle_us", s.gpu_idle_us());
    number_or_null(j, "compute_us", s.compute_us);
    number_or_null(j, "communication_us", s.communication_us);
    number_or_null(j, "memory_us", s.memory_us);
    j.end_object();
  }
  j.end_array();
  j.key("rank_deviations");
  j.begin_array();
  for (const auto& d : r.deviations) {
    j.begin_object();
    j.member("rank", std::int64_t{d.rank});
    j.member("name", d.name);
    j.member("kernel_type", to_string(d.type));
    number_or_null(j, "sum_us", d.sum_us);
    number_or_null(j, "median_us", d.median_us);
    number_or_null(j, "delta_us", d.delta_us());
    j.end_object();
  }
  j.end_array();
}

} // namespace

std::string analysis_json(const job_analysis_result& result) {
  json_out j;
  j.begin_object();
  j.member("schema", "tensordiag.analysis/v1");
  j.key("hta_compat");
  j.boolean(result.options.hta_compat);
  j.key("thresholds");
  j.begin_object();
  number_or_null(j, "launch_runtime_cutoff_us", result.options.launch_runtime_cutoff_us);
  number_or_null(j, "launch_delay_cutoff_us", result.options.launch_delay_cutoff_us);
  number_or_null(j, "consecutive_kernel_delay_us", result.options.consecutive_kernel_delay_us);
  number_or_null(j, "kernel_breakdown_duration_ratio", result.options.top_duration_ratio);
  unsigned_member(j, "kernel_breakdown_num_kernels", result.options.top_num_kernels);
  j.end_object();
  write_types(j, "kernel_types_all_ranks", result.kernel_types);
  j.key("ranks");
  j.begin_array();
  for (const auto& r : result.ranks)
    write_rank(j, r);
  j.end_array();
  write_job_extras(j, result);
  j.end_object();
  return j.take();
}

} // namespace tdiag::trace
