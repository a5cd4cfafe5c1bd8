// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job analyses against Holistic Trace Analysis 0.6.1's figures on the shared traces
// (../shared/golden/hta/*.json, computed by HTA itself), field by field: counts exactly, times
// and statistics within 0.5% (or HTA's own rounding of the value), and against hand-built traces.
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace tdiag::trace;
using json = tdiag::detail::json_value;

std::filesystem::path shared() {
  return std::filesystem::path(TDIAG_SHARED_DIR);
}

// Strict access to the golden files: a member that is missing or of the wrong type throws (and
// fails the test), never reads as null, 0 or an empty list.
[[noreturn]] void bad_golden(const json& v, const std::string& what) {
  throw std::runtime_error("HTA golden, byte " + std::to_string(v.offset) + ": " + what +
                           ", found " + std::string(v.kind_name()));
}
const json& at(const json& v, const std::string& name) {
  if (!v.is_object())
    bad_golden(v, "expected an object with member \"" + name + "\"");
  const json* m = v.find(name);
  if (m == nullptr)
    bad_golden(v, "no member \"" + name + "\"");
  return *m;
}
const json& array(const json& v) {
  if (!v.is_array())
    bad_golden(v, "expected an array");
  return v;
}
const json& object(const json& v) {
  if (!v.is_object())
    bad_golden(v, "expected an object");
  return v;
}
bool is_number(const json& v) {
  return v.type == json::kind::integer || v.type == json::kind::unsigned_integer ||
         v.type == json::kind::floating;
}
double number(const json& v) {
  if (!is_number(v))
    bad_golden(v, "expected a number");
  return v.as_double();
}
std::int64_t integer(const json& v) {
  if (v.type != json::kind::integer)
    bad_golden(v, "expected an integer");
  return v.integer;
}
std::size_t count(const json& v) {
  const auto n = integer(v);
  if (n < 0)
    bad_golden(v, "expected a count, not " + std::to_string(n));
  return static_cast<std::size_t>(n);
}
std::string text(const json& v) {
  if (!v.is_string())
    bad_golden(v, "expected a string");
  return v.string;
}
// A golden value for a failure message.
std::string show(const json& v) {
  if (is_number(v)) {
    std::ostringstream out;
    out << v.as_double();
    return out.str();
  }
  return v.is_string() ? "\"" + v.string + "\"" : std::string(v.kind_name());
}

json read_golden(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot open " + path.string());
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return tdiag::detail::parse_json(bytes, {path.string(), "TEST", "invalid HTA golden JSON", ""});
}

// Within 0.5% of HTA's value, or within `rounding` (HTA rounds some figures to 1 or 2 places).
void expect_near(double actual, const json& expected, const std::string& what,
                 double rounding = 0.5) {
  if (expected.type == json::kind::null) {
    ADD_FAILURE() << what << ": HTA has null, we have " << actual;
    return;
  }
  const double e = number(expected);
  EXPECT_LE(std::fabs(actual - e), std::max(0.005 * std::fabs(e), rounding))
      << what << ": ours " << actual << ", HTA " << e;
}
void expect_near(const std::optional<double>& actual, const json& expected, const std::string& what,
                 double rounding = 0.5) {
  if (!actual) {
    EXPECT_TRUE(expected.type == json::kind::null) << what << ": ours null, HTA " << show(expected);
    return;
  }
  expect_near(*actual, expected, what, rounding);
}

void expect_describe(const describe_stats& d, const json& e, const std::string& what,
                     double rounding = 0.5) {
  EXPECT_EQ(d.count, number(at(e, "count"))) << what;
  expect_near(d.mean, at(e, "mean"), what + ".mean", rounding);
  if (d.count > 1)
    expect_near(d.std, at(e, "std"), what + ".std", rounding);
  expect_near(d.min, at(e, "min"), what + ".min", rounding);
  expect_near(d.p25, at(e, "25%"), what + ".25%", rounding);
  expect_near(d.p50, at(e, "50%"), what + ".50%", rounding);
  expect_near(d.p75, at(e, "75%"), what + ".75%", rounding);
  expect_near(d.max, at(e, "max"), what + ".max", rounding);
  if (object(e).find("sum") != nullptr)
    expect_near(d.sum, at(e, "sum"), what + ".sum");
}

struct golden_case {
  json hta;
  std::vector<job_member> job;
  job_analysis_result result;
};

// The critical-path arguments the golden harness used (../shared/golden/hta/README.md).
void critical_path_arguments(const std::string& name, analysis_options& options) {
  if (name == "critical_path_simple_add") {
    options.critical_path_annotation = "[param|pytorch.model.alex_net|0|0|0|measure|forward]";
    options.critical_path_instance = 1;
  } else if (name == "rocm_mi250") {
    options.critical_path_annotation = "ProfilerStep";
    options.critical_path_instance = 1;
  }
}

golden_case run_case(const std::string& name) {
  golden_case c;
  c.hta = read_golden(shared() / "golden" / "hta" / (name + ".json"));
  const std::vector<std::string> inputs{(shared() / "traces" / "hta" / name).string()};
  c.job = load_job(inputs);
  std::vector<rank_trace> ranks;
  for (const auto& m : c.job)
    ranks.push_back({m.rank, &m.loaded.trace});
  analysis_options options;
  options.hta_compat = true;
  critical_path_arguments(name, options);
  c.result = analyze_job(ranks, options, 2);
  return c;
}

const rank_analysis& rank_of(const job_analysis_result& r, int rank) {
  for (const auto& x : r.ranks)
    if (x.rank == rank)
      return x;
  throw std::runtime_error("no rank " + std::to_string(rank));
}

const json& result_of(const json& hta, const char* analysis) {
  return at(at(at(hta, "analyses"), analysis), "result");
}

void check_temporal_and_overlap(const golden_case& c) {
  for (const auto& row : array(result_of(c.hta, "temporal_breakdown"))) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    const auto tag = "rank " + std::to_string(r.rank) + " temporal ";
    expect_near(r.temporal.idle_us, at(row, "idle_time(us)"), tag + "idle");
    expect_near(r.temporal.compute_us, at(row, "compute_time(us)"), tag + "compute");
    expect_near(r.temporal.non_compute_us, at(row, "non_compute_time(us)"), tag + "non_compute");
    expect_near(r.temporal.kernel_us, at(row, "kernel_time(us)"), tag + "kernel");
    expect_near(r.temporal.pct(r.temporal.idle_us), at(row, "idle_time_pctg"), tag + "idle%",
                0.006);
  }
  for (const auto& row : array(result_of(c.hta, "comm_comp_overlap"))) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    expect_near(r.comp_comm_overlap_pct, at(row, "comp_comm_overlap_pctg"),
                "rank " + std::to_string(r.rank) + " comp_comm_overlap", 0.006);
  }
  const auto& steps = result_of(c.hta, "profiler_steps");
  std::vector<int> hta_steps;
  for (const auto& step : array(steps))
    hta_steps.push_back(static_cast<int>(integer(step)));
  EXPECT_EQ(c.result.ranks.front().steps, hta_steps);
}

void check_idle(const golden_case& c) {
  const auto& idle = result_of(c.hta, "idle_time_breakdown");
  std::size_t rows = 0;
  for (const auto& row : array(at(idle, "per_rank_stream"))) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    const auto stream = static_cast<std::uint64_t>(integer(at(row, "stream")));
    const auto cat = text(at(row, "idle_category"));
    const auto tag =
        "rank " + std::to_string(r.rank) + " stream " + std::to_string(stream) + " " + cat;
    const stream_idle* s = nullptr;
    for (const auto& x : r.idle)
      s = x.stream == stream ? &x : s;
    ASSERT_NE(s, nullptr) << tag;
    const int i = cat == "host_wait" ? 0 : cat == "kernel_wait" ? 1 : 2;
    EXPECT_TRUE(s->by_category[i].present) << tag;
    expect_near(s->by_category[i].time_us, at(row, "idle_time"), tag);
    expect_near(s->by_category[i].ratio, at(row, "idle_time_ratio"), tag + " ratio", 0.006);
    ++rows;
  }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    for (const auto& s : r.idle)
      for (const auto& share : s.by_category)
        ours += share.present ? 1 : 0;
  EXPECT_EQ(ours, rows);
  for (const auto& row : array(at(idle, "interval_stats"))) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    const auto stream = static_cast<std::uint64_t>(integer(at(row, "stream")));
    const auto cat = text(at(row, "idle_category"));
    for (const auto& s : r.idle)
      if (s.stream == stream) {
        const int i = cat == "host_wait" ? 0 : cat == "kernel_wait" ? 1 : 2;
        // HTA rounds these statistics to 2 places.
        expect_describe(s.by_category[i].gaps, row,
                        "gaps rank " + std::to_string(r.rank) + " stream " +
                            std::to_string(stream) + " " + cat,
                        0.006);
      }
  }
}

void check_kernel_types(const golden_case& c) {
  const auto& per_rank = object(result_of(c.hta, "kernel_type_per_rank"));
  for (std::size_t m = 0; m < per_rank.size(); ++m) {
    const auto& rank = per_rank.names[m];
    const auto& rows = per_rank.items[m];
    const auto& r = rank_of(c.result, std::stoi(rank));
    std::map<std::string, double> ours;
    for (const auto& k : r.kernel_types)
      ours[k.type] = k.sum_us;
    for (const auto& row : array(rows))
      expect_near(ours[text(at(row, "kernel_type"))], at(row, "sum"),
                  "rank " + rank + " " + text(at(row, "kernel_type")));
  }
  std::map<std::string, double> all;
  for (const auto& k : c.result.kernel_types)
    all[k.type] = k.sum_us;
  const auto& breakdown = result_of(c.hta, "kernel_breakdown");
  for (const auto& row : array(at(breakdown, "kernel_type_all_ranks")))
    expect_near(all[text(at(row, "kernel_type"))], at(row, "sum"),
                "all ranks " + text(at(row, "kernel_type")));
}

void check_kernel_rows(const golden_case& c, const json& rows,
                       std::vector<kernel_summary> rank_analysis::*table, const char* label) {
  std::size_t expected = 0;
  for (const auto& row : array(rows)) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    const auto name = text(at(row, "name"));
    const auto type = text(at(row, "kernel_type"));
    const kernel_summary* k = nullptr;
    for (const auto& x : r.*table)
      k = x.name == name && to_string(x.type) == type ? &x : k;
    const auto tag = std::string(label) + " rank " + std::to_string(r.rank) + " " + type + " " +
                     name.substr(0, 60);
    ASSERT_NE(k, nullptr) << tag;
    expect_near(k->sum_us, at(row, "sum (us)"), tag + " sum");
    expect_near(k->max_us, at(row, "max (us)"), tag + " max");
    expect_near(k->min_us, at(row, "min (us)"), tag + " min");
    expect_near(k->mean_us, at(row, "mean (us)"), tag + " mean");
    expect_near(k->std_us, at(row, "stddev"), tag + " std");
    ++expected;
  }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    ours += (r.*table).size();
  EXPECT_EQ(ours, expected) << label;
}

void check_launches(const golden_case& c) {
  const auto& per_rank = object(result_of(c.hta, "cuda_kernel_launch_stats"));
  for (std::size_t m = 0; m < per_rank.size(); ++m) {
    const auto& rank = per_rank.names[m];
    const auto& row = per_rank.items[m];
    const auto& l = rank_of(c.result, std::stoi(rank)).launches;
    const auto tag = "rank " + rank + " launches ";
    EXPECT_EQ(l.num_launches, count(at(row, "num_launches"))) << tag;
    EXPECT_EQ(
        l.short_kernels,
        count(at(row,
                 "short_gpu_kernels (cpu_duration<=runtime_cutoff and gpu_duration<cpu_duration)")))
        << tag;
    EXPECT_EQ(l.runtime_outliers, count(at(row, "runtime_outliers (cpu_duration>runtime_cutoff)")))
        << tag;
    EXPECT_EQ(l.launch_delay_outliers,
              count(at(row, "launch_delay_outliers (launch_delay>launch_delay_cutoff)")))
        << tag;
    expect_describe(l.cpu_duration, at(row, "cpu_duration"), tag + "cpu_duration");
    expect_describe(l.gpu_duration, at(row, "gpu_duration"), tag + "gpu_duration");
    expect_describe(l.launch_delay, at(row, "launch_delay"), tag + "launch_delay");
  }
}

void check_queues(const golden_case& c) {
  const auto& rows = at(result_of(c.hta, "queue_length"), "summary_per_rank_stream");
  std::size_t expected = 0;
  for (const auto& row : array(rows)) {
    const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
    const auto stream = static_cast<std::uint64_t>(integer(at(row, "stream")));
    const stream_queue* q = nullptr;
    for (const auto& x : r.queues)
      q = x.stream == stream ? &x : q;
    const auto tag = "rank " + std::to_string(r.rank) + " queue stream " + std::to_string(stream);
    ASSERT_NE(q, nullptr) << tag;
    expect_describe(q->length, row, tag, 0.01);
    ++expected;
  }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    ours += r.queues.size();
  EXPECT_EQ(ours, expected);
}

// HTA's critical path of the first rank: the same graph (edge count), the same path (edge count
// and length) and the same split of its time (bound_by_us, HTA's CPGraph.summary()).
void check_critical_path(const golden_case& c) {
  const auto& hta = result_of(c.hta, "critical_path");
  const auto& r = rank_of(c.result, static_cast<int>(integer(at(hta, "rank"))));
  const auto& cp = r.critical_path;
  ASSERT_TRUE(cp.computed) << cp.reason;
  EXPECT_EQ(cp.annotation, text(at(hta, "annotation")));
  EXPECT_EQ(cp.instance, integer(at(hta, "instance_id")));
  const auto& w = at(hta, "window");
  EXPECT_EQ(cp.instance_name, text(at(w, "instance_name")));
  expect_near(cp.window_end_us - cp.window_start_us, at(w, "dur"), "critical path window");
  EXPECT_EQ(cp.graph_edges, count(at(hta, "graph_edges")));
  EXPECT_EQ(cp.path_edges, count(at(hta, "path_edges")));
  expect_near(cp.total_us, at(hta, "total_length_us"), "critical path length");
  expect_near(cp.path_end_us - cp.path_start_us, at(hta, "path_span_us"), "critical path span");
  const auto& bound = object(at(hta, "bound_by_us"));
  double ours_total = 0, hta_total = 0;
  for (std::size_t b = 0; b < path_bound_count; ++b) {
    const auto name = std::string(to_string(static_cast<path_bound>(b)));
    const auto* e = bound.find(name == "none" ? "(none: dependency/sync edges)" : name);
    if (e != nullptr) {
      expect_near(cp.bound_by_us[b], *e, "critical path " + name);
      hta_total += number(*e);
    } else {
      EXPECT_EQ(cp.bound_by_us[b], 0) << "critical path " << name << ": HTA has none";
    }
    ours_total += cp.bound_by_us[b];
  }
  expect_near(ours_total, at(hta, "sum_edge_weights_us (CPEdge.weight, as in breakdown)"),
              "critical path breakdown sum");
  EXPECT_GT(hta_total, 0);
  EXPECT_EQ(cp.path_edges + 1, count(at(hta, "path_nodes")));
  // HTA's edge_type: the kinds of edge on the path, their time and count.
  const auto& types = object(at(hta, "edge_type"));
  for (std::size_t k = 0; k < path_edge_kind_count; ++k) {
    const auto name = std::string(to_string(static_cast<path_edge_kind>(k)));
    const auto* e = types.find(name);
    if (e == nullptr) {
      EXPECT_EQ(cp.edges_by_type[k], 0u) << "critical path " << name << ": HTA has none";
      continue;
    }
    EXPECT_EQ(static_cast<double>(cp.edges_by_type[k]), number(at(*e, "count")))
        << "critical path " << name; // HTA writes the count as a float
    expect_near(cp.edge_type_us[k], at(*e, "sum_us"), "critical path " + name);
  }
}

// HTA's memory bandwidth summary, every statistic: both take each copy's bandwidth from
// Kineto's "memory bandwidth (GB/s)" argument (computed from the true ns duration; bytes over
// a whole-us duration would be up to 50% off for the shortest copies). GB/s figures are small,
// so the comparison is relative only.
void check_memory_bw(const golden_case& c) {
  const auto& bw = at(at(c.hta, "analyses"), "memory_bw_summary");
  std::size_t expected = 0;
  if (text(at(bw, "status")) == "ok")
    for (const auto& row : array(at(bw, "result"))) {
      const auto& r = rank_of(c.result, static_cast<int>(integer(at(row, "rank"))));
      const auto name = text(at(row, "name"));
      const memory_bandwidth* m = nullptr;
      for (const auto& x : r.memory_bw)
        m = x.name == name ? &x : m;
      ASSERT_NE(m, nullptr) << "rank " << r.rank << " memory bandwidth " << name;
      expect_describe(m->gbps, row, "rank " + std::to_string(r.rank) + " memory bandwidth " + name,
                      1e-12);
      ++expected;
    }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    ours += r.memory_bw.size();
  EXPECT_EQ(ours, expected);
}

void check_all(const std::string& name) {
  if (!std::filesystem::exists(shared() / "golden" / "hta" / (name + ".json")))
    GTEST_SKIP() << "shared data absent: " << shared();
  const auto c = run_case(name);
  const auto& load_info = at(at(c.hta, "load"), "info");
  ASSERT_EQ(c.result.ranks.size(), array(at(load_info, "ranks")).size());
  const auto& per_rank = object(at(load_info, "per_rank"));
  for (std::size_t m = 0; m < per_rank.size(); ++m)
    EXPECT_EQ(rank_of(c.result, std::stoi(per_rank.names[m])).gpu_rows,
              count(at(per_rank.items[m], "gpu_events (stream != -1)")))
        << "rank " << per_rank.names[m];
  check_temporal_and_overlap(c);
  check_idle(c);
  check_kernel_types(c);
  const auto& breakdown = result_of(c.hta, "kernel_breakdown");
  check_kernel_rows(c, at(breakdown, "top_kernels_hta_default"), &rank_analysis::top_kernels,
                    "top");
  check_kernel_rows(c, at(result_of(c.hta, "kernel_table_full"), "all_kernels"),
                    &rank_analysis::kernels, "all");
  check_launches(c);
  check_queues(c);
  check_memory_bw(c);
  check_critical_path(c);
}

TEST(JobAnalysisHta, TwoRanksAgreeWithHta) {
  check_all("two_ranks");
}
TEST(JobAnalysisHta, CriticalPathSimpleAddAgreesWithHta) {
  check_all("critical_path_simple_add");
}
TEST(JobAnalysisHta, RocmMi250AgreesWithHta) {
  check_all("rocm_mi250");
}

// The large H200 trace has no golden file; these are HTA 0.6.1's critical_path_analysis(rank=0,
// annotation="", instance_id=None) figures on it, run live (22.7 s; docs/analysis.md).
TEST(JobAnalysisHta, CriticalPathOfTheLargeTraceIsHtas) {
  const auto path = shared() / "traces" / "train_trace_large.json.gz";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const auto loaded = load_trace(path);
  analysis_options options;
  options.hta_compat = true;
  const auto cp = analyze_rank(loaded.trace, 0, options).critical_path;
  ASSERT_TRUE(cp.computed) << cp.reason;
  EXPECT_EQ(cp.annotation, "");
  EXPECT_EQ(cp.graph_edges, 279437u);
  EXPECT_EQ(cp.path_edges, 245913u);
  EXPECT_DOUBLE_EQ(cp.total_us, 920523);
  EXPECT_DOUBLE_EQ(cp.bound_by_us[static_cast<std::size_t>(path_bound::cpu)], 920421);
  EXPECT_DOUBLE_EQ(cp.bound_by_us[static_cast<std::size_t>(path_bound::gpu_compute)], 87);
  EXPECT_DOUBLE_EQ(cp.bound_by_us[static_cast<std::size_t>(path_bound::kernel_kernel_overhead)], 2);
  EXPECT_DOUBLE_EQ(cp.bound_by_us[static_cast<std::size_t>(path_bound::kernel_launch_overhead)],
                   13);
}

} // namespace
