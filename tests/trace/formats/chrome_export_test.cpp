// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/chrome_export.hpp>
#include <tensordiag/trace/event_fields.hpp>
#include <tensordiag/trace/synthetic.hpp>

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

tdiag::detail::json_value export_and_parse(const trace& t, const chrome_export_options& o,
                                           chrome_export_stats& stats, const std::string& name) {
  const auto path = test::temp_path(name);
  stats = write_chrome_trace(t, path, o);
  const auto bytes = test::read_file(path);
  // Throws on invalid JSON.
  return tdiag::detail::parse_json(std::string_view(bytes.data(), bytes.size()),
                                   {name, "TEST", "invalid Chrome trace JSON", ""});
}

TEST(ChromeExport, ValidJsonWithTheExpectedEventCounts) {
  const trace t = make_synthetic_trace({.kernels = 2000, .devices = 2});
  chrome_export_stats stats;
  const auto doc = export_and_parse(t, {}, stats, "export.json");
  ASSERT_NE(doc.find("traceEvents"), nullptr);
  const auto& events = doc["traceEvents"];
  EXPECT_EQ(events.size(), stats.trace_events());

  std::map<std::string, std::size_t> by_cat;
  std::map<std::string, std::size_t> by_ph;
  for (const auto& e : events) {
    ++by_ph[e["ph"].string];
    if (e.find("cat") != nullptr)
      ++by_cat[e["cat"].string];
  }
  EXPECT_EQ(by_cat["kernel"], t.kernels.size());
  EXPECT_EQ(by_cat["gpu_memcpy"], t.copies.size());
  EXPECT_EQ(by_cat["cuda_runtime"], t.api_calls.size());
  EXPECT_EQ(by_ph["s"], t.flows.size());
  EXPECT_EQ(by_ph["f"], t.flows.size());
  EXPECT_EQ(by_cat["assertion"], t.assertions.size());
  // One allocated/reserved sample per memory event, plus the plain counters.
  EXPECT_EQ(by_ph["C"], t.memory.size() + t.counters.size());
  EXPECT_EQ(stats.kernels, t.kernels.size());
  EXPECT_EQ(stats.flows, t.flows.size());
}

TEST(ChromeExport, KernelsSitOnDeviceStreamLanesAndFlowsMatchKernels) {
  const trace t = make_synthetic_trace({.kernels = 300, .devices = 2});
  chrome_export_stats stats;
  const auto doc = export_and_parse(t, {}, stats, "lanes.json");
  std::set<std::pair<std::int64_t, std::uint64_t>> named_threads;
  std::map<std::uint64_t, std::pair<std::int64_t, std::uint64_t>> flow_end; // id -> pid, tid
  std::map<std::pair<std::int64_t, std::uint64_t>, std::size_t> kernels_per_lane;
  std::set<std::pair<std::int64_t, std::uint64_t>> kernel_starts_with_flow;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"].string;
    if (ph == "M" && e["name"] == "thread_name")
      named_threads.insert({e["pid"].as_int(), e["tid"].as_uint()});
    if (ph == "X" && e["cat"] == "kernel") {
      const auto pid = e["pid"].as_int();
      const auto tid = e["tid"].as_uint();
      EXPECT_EQ(pid, e["args"]["device"].as_int());
      EXPECT_EQ(tid, e["args"]["stream"].as_uint());
      ++kernels_per_lane[{pid, tid}];
    }
    if (ph == "f")
      flow_end[e["id"].as_uint()] = {e["pid"].as_int(), e["tid"].as_uint()};
  }
  for (const auto& [lane, n] : kernels_per_lane)
    EXPECT_TRUE(named_threads.contains(lane)) << "unnamed lane " << lane.first;
  EXPECT_EQ(kernels_per_lane.size(), 8u); // 2 devices x 4 streams
  // Every flow ends on the lane of the kernel with its correlation id.
  for (const auto& k : t.kernels.all()) {
    auto it = flow_end.find(k.correlation);
    ASSERT_NE(it, flow_end.end());
    EXPECT_EQ(it->second.first, k.device);
    EXPECT_EQ(it->second.second, k.stream);
  }
}

TEST(ChromeExport, OptionsLeaveOutKinds) {
  const trace t = make_synthetic_trace({.kernels = 200});
  chrome_export_options o;
  o.api_calls = false;
  o.flows = false;
  o.memory_counters = false;
  chrome_export_stats stats;
  const auto doc = export_and_parse(t, o, stats, "options.json");
  for (const auto& e : doc["traceEvents"]) {
    EXPECT_NE(e["ph"], "s");
    if (e.find("cat") != nullptr) {
      EXPECT_NE(e["cat"], "cuda_runtime");
    }
  }
  EXPECT_EQ(stats.api_calls, 0u);
  EXPECT_EQ(stats.counters, t.counters.size());
}

TEST(ChromeExport, EscapesHostileNamesAndReplaysMemoryWithoutTotals) {
  trace t;
  const lane_id gpu = t.lanes.gpu(0, 1);
  const lane_id mem = t.lanes.memory(0);
  kernel_event k;
  k.lane = gpu;
  k.start = 1500;
  k.end = 2500;
  static constexpr char hostile[] = "quote\" backslash\\ newline\n bad\xff\x01";
  k.name = t.strings.intern(std::string(hostile, sizeof hostile - 1));
  t.kernels.push_back(k);
  auto mem_event = [&](memory_action a, std::int64_t time, std::uint64_t addr, std::uint64_t size) {
    memory_event m;
    m.lane = mem;
    m.action = a;
    m.time = time;
    m.address = addr;
    m.size = size;
    t.memory.push_back(m);
  };
  mem_event(memory_action::segment_alloc, 10, 0x1000, 4096);
  mem_event(memory_action::alloc, 20, 0x1000, 1024);
  mem_event(memory_action::free_completed, 30, 0x1000, 0); // size found from the alloc
  mem_event(memory_action::oom, 40, 0, 1 << 30);
  t.finalize();
  chrome_export_stats stats;
  const auto doc = export_and_parse(t, {}, stats, "hostile.json");
  std::vector<std::pair<std::int64_t, std::int64_t>> samples;
  bool saw_oom = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      EXPECT_EQ(e["ts"].as_double(), 1.5);
    }
    if (e["ph"] == "C" && e["name"] == "Memory")
      samples.emplace_back(e["args"]["allocated"].as_int(), e["args"]["reserved"].as_int());
    saw_oom |= e["ph"] == "i" && e["name"] == "out of memory";
  }
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected{
      {0, 4096}, {1024, 4096}, {0, 4096}, {0, 4096}};
  EXPECT_EQ(samples, expected);
  EXPECT_TRUE(saw_oom);
}

// The arguments a kind's table marks for Chrome, plus those the export derives.
template <typename Record> std::set<std::string> table_args(std::set<std::string> derived = {}) {
  for (const auto& f : event_fields<Record>)
    if (f.chrome != chrome_arg::none)
      derived.emplace(f.chrome_name);
  return derived;
}

std::set<std::string> arg_names(const tdiag::detail::json_value& event) {
  const auto* args = event.find("args");
  return args ? std::set<std::string>(args->names.begin(), args->names.end())
              : std::set<std::string>{};
}

TEST(ChromeExport, ArgumentsAreTheFieldTables) {
  trace t;
  const lane_id gpu = t.lanes.gpu(0, 7);
  const lane_id host = t.lanes.host(0, 1);
  kernel_event k;
  k.lane = gpu, k.start = 10, k.end = 20, k.name = t.strings.intern("k");
  k.device = 1, k.context = 2, k.stream = 7, k.correlation = 3, k.registers = 32;
  k.shared_static = 128, k.shared_dynamic = 256, k.launch_id = 9;
  k.grid[0] = 4, k.block[0] = 128;
  t.kernels.push_back(k);
  copy_event c;
  c.lane = gpu, c.start = 30, c.end = 40, c.bytes = 4096, c.kind = copy_kind::htod;
  c.bandwidth_gbps = 12.5F;
  t.copies.push_back(c);
  api_event plain, linked;
  plain.lane = linked.lane = host;
  plain.start = 1, plain.end = 2, linked.start = 3, linked.end = 4, linked.correlation = 3;
  t.api_calls.push_back(plain);
  t.api_calls.push_back(linked);
  marker_event m;
  m.lane = host, m.time = 5, m.name = t.strings.intern("mark"), m.category = t.strings.intern("c");
  t.markers.push_back(m);
  assertion_event a;
  a.lane = gpu, a.time = 15, a.site = t.strings.intern("x.cu:1: i < n");
  t.assertions.push_back(a);
  t.finalize();
  chrome_export_stats stats;
  const auto doc = export_and_parse(t, {}, stats, "fields.json");
  std::map<std::string, std::vector<std::set<std::string>>> by_cat;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] != "M")
      by_cat[e["cat"].string].push_back(arg_names(e));
  // A field marked `nonzero` or `positive` is left out when it is 0.
  EXPECT_EQ(by_cat["kernel"].at(0), table_args<kernel_event>({"shared memory"}));
  EXPECT_EQ(by_cat["gpu_memcpy"].at(0), table_args<copy_event>({"kind"}));
  EXPECT_EQ(by_cat["cuda_runtime"].at(0), std::set<std::string>{});
  EXPECT_EQ(by_cat["cuda_runtime"].at(1), std::set<std::string>{"correlation"});
  EXPECT_EQ(by_cat["marker"].at(0), table_args<marker_event>());
  auto assertion_args = table_args<assertion_event>();
  assertion_args.erase("message"); // no_string
  EXPECT_EQ(by_cat["assertion"].at(0), assertion_args);
  for (const auto& e : doc["traceEvents"])
    if (e["cat"] == "kernel") {
      EXPECT_EQ(e["args"]["registers per thread"].as_int(), 32);
      EXPECT_EQ(e["args"]["shared memory"].as_int(), 384);
      EXPECT_EQ(e["args"]["grid"][0].as_int(), 4);
      EXPECT_EQ(e["args"]["tensordiag launch id"].as_int(), 9);
    } else if (e["cat"] == "gpu_memcpy") {
      EXPECT_EQ(e["args"]["memory bandwidth (GB/s)"].as_double(), 12.5);
      EXPECT_EQ(e["args"]["kind"].string, "HtoD");
    }
}

TEST(ChromeExport, UnwritablePathThrowsWithCode) {
  try {
    (void)write_chrome_trace(trace{}, std::filesystem::path("/nonexistent-dir/x.json"));
    FAIL();
  } catch (const tdiag::error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-TR-330");
  }
}

} // namespace
} // namespace tdiag::trace
