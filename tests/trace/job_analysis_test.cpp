// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job analyses against Holistic Trace Analysis 0.6.1's figures on the shared traces
// (../shared/golden/hta/*.json, computed by HTA itself), field by field: counts exactly, times
// and statistics within 0.5% (or HTA's own rounding of the value), and against hand-built traces.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace {

using namespace tdiag::trace;
using nlohmann::json;

std::filesystem::path shared() {
  return std::filesystem::path(TDIAG_SHARED_DIR);
}

// Within 0.5% of HTA's value, or within `rounding` (HTA rounds some figures to 1 or 2 places).
void expect_near(double actual, const json& expected, const std::string& what,
                 double rounding = 0.5) {
  if (expected.is_null()) {
    ADD_FAILURE() << what << ": HTA has null, we have " << actual;
    return;
  }
  const double e = expected.get<double>();
  EXPECT_LE(std::fabs(actual - e), std::max(0.005 * std::fabs(e), rounding))
      << what << ": ours " << actual << ", HTA " << e;
}
void expect_near(const std::optional<double>& actual, const json& expected, const std::string& what,
                 double rounding = 0.5) {
  if (!actual) {
    EXPECT_TRUE(expected.is_null()) << what << ": ours null, HTA " << expected;
    return;
  }
  expect_near(*actual, expected, what, rounding);
}

void expect_describe(const describe_stats& d, const json& e, const std::string& what,
                     double rounding = 0.5) {
  EXPECT_EQ(d.count, e["count"].get<double>()) << what;
  expect_near(d.mean, e["mean"], what + ".mean", rounding);
  if (d.count > 1)
    expect_near(d.std, e["std"], what + ".std", rounding);
  expect_near(d.min, e["min"], what + ".min", rounding);
  expect_near(d.p25, e["25%"], what + ".25%", rounding);
  expect_near(d.p50, e["50%"], what + ".50%", rounding);
  expect_near(d.p75, e["75%"], what + ".75%", rounding);
  expect_near(d.max, e["max"], what + ".max", rounding);
  if (e.contains("sum"))
    expect_near(d.sum, e["sum"], what + ".sum");
}

struct golden_case {
  json hta;
  std::vector<job_member> job;
  job_analysis_result result;
};

golden_case run_case(const std::string& name) {
  golden_case c;
  std::ifstream in(shared() / "golden" / "hta" / (name + ".json"));
  c.hta = json::parse(in);
  const std::vector<std::string> inputs{(shared() / "traces" / "hta" / name).string()};
  c.job = load_job(inputs);
  std::vector<rank_trace> ranks;
  for (const auto& m : c.job)
    ranks.push_back({m.rank, &m.loaded.trace});
  analysis_options options;
  options.hta_compat = true;
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
  return hta["analyses"][analysis]["result"];
}

void check_temporal_and_overlap(const golden_case& c) {
  for (const auto& row : result_of(c.hta, "temporal_breakdown")) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    const auto tag = "rank " + std::to_string(r.rank) + " temporal ";
    expect_near(r.temporal.idle_us, row["idle_time(us)"], tag + "idle");
    expect_near(r.temporal.compute_us, row["compute_time(us)"], tag + "compute");
    expect_near(r.temporal.non_compute_us, row["non_compute_time(us)"], tag + "non_compute");
    expect_near(r.temporal.kernel_us, row["kernel_time(us)"], tag + "kernel");
    expect_near(r.temporal.pct(r.temporal.idle_us), row["idle_time_pctg"], tag + "idle%", 0.006);
  }
  for (const auto& row : result_of(c.hta, "comm_comp_overlap")) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    expect_near(r.comp_comm_overlap_pct, row["comp_comm_overlap_pctg"],
                "rank " + std::to_string(r.rank) + " comp_comm_overlap", 0.006);
  }
  const auto& steps = result_of(c.hta, "profiler_steps");
  EXPECT_EQ(c.result.ranks.front().steps, steps.get<std::vector<int>>());
}

void check_idle(const golden_case& c) {
  const auto& idle = result_of(c.hta, "idle_time_breakdown");
  std::size_t rows = 0;
  for (const auto& row : idle["per_rank_stream"]) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    const auto stream = row["stream"].get<std::uint64_t>();
    const auto cat = row["idle_category"].get<std::string>();
    const auto tag =
        "rank " + std::to_string(r.rank) + " stream " + std::to_string(stream) + " " + cat;
    const stream_idle* s = nullptr;
    for (const auto& x : r.idle)
      s = x.stream == stream ? &x : s;
    ASSERT_NE(s, nullptr) << tag;
    const int i = cat == "host_wait" ? 0 : cat == "kernel_wait" ? 1 : 2;
    EXPECT_TRUE(s->by_category[i].present) << tag;
    expect_near(s->by_category[i].time_us, row["idle_time"], tag);
    expect_near(s->by_category[i].ratio, row["idle_time_ratio"], tag + " ratio", 0.006);
    ++rows;
  }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    for (const auto& s : r.idle)
      for (const auto& share : s.by_category)
        ours += share.present ? 1 : 0;
  EXPECT_EQ(ours, rows);
  for (const auto& row : idle["interval_stats"]) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    const auto stream = row["stream"].get<std::uint64_t>();
    const auto cat = row["idle_category"].get<std::string>();
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
  for (const auto& [rank, rows] : result_of(c.hta, "kernel_type_per_rank").items()) {
    const auto& r = rank_of(c.result, std::stoi(rank));
    std::map<std::string, double> ours;
    for (const auto& k : r.kernel_types)
      ours[k.type] = k.sum_us;
    for (const auto& row : rows)
      expect_near(ours[row["kernel_type"].get<std::string>()], row["sum"],
                  "rank " + rank + " " + row["kernel_type"].get<std::string>());
  }
  std::map<std::string, double> all;
  for (const auto& k : c.result.kernel_types)
    all[k.type] = k.sum_us;
  const auto& breakdown = result_of(c.hta, "kernel_breakdown");
  for (const auto& row : breakdown["kernel_type_all_ranks"])
    expect_near(all[row["kernel_type"].get<std::string>()], row["sum"],
                "all ranks " + row["kernel_type"].get<std::string>());
}

void check_kernel_rows(const golden_case& c, const json& rows,
                       std::vector<kernel_summary> rank_analysis::*table, const char* label) {
  std::size_t expected = 0;
  for (const auto& row : rows) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    const auto name = row["name"].get<std::string>();
    const auto type = row["kernel_type"].get<std::string>();
    const kernel_summary* k = nullptr;
    for (const auto& x : r.*table)
      k = x.name == name && to_string(x.type) == type ? &x : k;
    const auto tag = std::string(label) + " rank " + std::to_string(r.rank) + " " + type + " " +
                     name.substr(0, 60);
    ASSERT_NE(k, nullptr) << tag;
    expect_near(k->sum_us, row["sum (us)"], tag + " sum");
    expect_near(k->max_us, row["max (us)"], tag + " max");
    expect_near(k->min_us, row["min (us)"], tag + " min");
    expect_near(k->mean_us, row["mean (us)"], tag + " mean");
    expect_near(k->std_us, row["stddev"], tag + " std");
    ++expected;
  }
  std::size_t ours = 0;
  for (const auto& r : c.result.ranks)
    ours += (r.*table).size();
  EXPECT_EQ(ours, expected) << label;
}

void check_launches(const golden_case& c) {
  for (const auto& [rank, row] : result_of(c.hta, "cuda_kernel_launch_stats").items()) {
    const auto& l = rank_of(c.result, std::stoi(rank)).launches;
    const auto tag = "rank " + rank + " launches ";
    EXPECT_EQ(l.num_launches, row["num_launches"].get<std::size_t>()) << tag;
    EXPECT_EQ(l.short_kernels,
              row["short_gpu_kernels (cpu_duration<=runtime_cutoff and gpu_duration<cpu_duration)"]
                  .get<std::size_t>())
        << tag;
    EXPECT_EQ(l.runtime_outliers,
              row["runtime_outliers (cpu_duration>runtime_cutoff)"].get<std::size_t>())
        << tag;
    EXPECT_EQ(l.launch_delay_outliers,
              row["launch_delay_outliers (launch_delay>launch_delay_cutoff)"].get<std::size_t>())
        << tag;
    expect_describe(l.cpu_duration, row["cpu_duration"], tag + "cpu_duration");
    expect_describe(l.gpu_duration, row["gpu_duration"], tag + "gpu_duration");
    expect_describe(l.launch_delay, row["launch_delay"], tag + "launch_delay");
  }
}

void check_queues(const golden_case& c) {
  const auto& rows = result_of(c.hta, "queue_length")["summary_per_rank_stream"];
  std::size_t expected = 0;
  for (const auto& row : rows) {
    const auto& r = rank_of(c.result, row["rank"].get<int>());
    const auto stream = row["stream"].get<std::uint64_t>();
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

void check_all(const std::string& name) {
  if (!std::filesystem::exists(shared() / "golden" / "hta" / (name + ".json")))
    GTEST_SKIP() << "shared data absent: " << shared();
  const auto c = run_case(name);
  ASSERT_EQ(c.result.ranks.size(), c.hta["load"]["info"]["ranks"].size());
  for (const auto& [rank, info] : c.hta["load"]["info"]["per_rank"].items())
    EXPECT_EQ(rank_of(c.result, std::stoi(rank)).gpu_rows,
              info["gpu_events (stream != -1)"].get<std::size_t>())
        << "rank " << rank;
  check_temporal_and_overlap(c);
  check_idle(c);
  check_kernel_types(c);
  const auto& breakdown = result_of(c.hta, "kernel_breakdown");
  check_kernel_rows(c, breakdown["top_kernels_hta_default"], &rank_analysis::top_kernels, "top");
  check_kernel_rows(c, result_of(c.hta, "kernel_table_full")["all_kernels"],
                    &rank_analysis::kernels, "all");
  check_launches(c);
  check_queues(c);
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

} // namespace
