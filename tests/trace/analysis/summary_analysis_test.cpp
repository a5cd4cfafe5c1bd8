// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures computed independently in Python (pickle / json + gzip): for the snapshot, a
// running sum of alloc minus free_requested sizes; for the Kineto trace, max 'Total Allocated'
// and 'Total Reserved' of Device Type 1 [memory] events and the union of kernel/memcpy/memset
// intervals on stream 7 (ts and dur rounded to ns).
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/summary_analysis.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <span>
#include <string>

namespace {

using namespace tdiag::trace;

std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

std::size_t count_of(const summary_result& s, std::string_view kind) {
  for (const auto& [name, n] : s.counts)
    if (name == kind)
      return n;
  return static_cast<std::size_t>(-1);
}

TEST(SummaryAnalysis, TrainingSnapshotPeaks) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto s = summarize(t);
  ASSERT_EQ(s.memory.size(), 1u);
  const auto& m = s.memory[0];
  // Requested bytes (Python: running sum of alloc - free_requested sizes) peak after entry
  // 1273; allocated counts block sizes, as torch.cuda.memory_allocated() does: the entries give
  // the request (114 of them below 512 B or not a multiple of it), the block is rounded to 512
  // (Python: the same running sum of rounded sizes from the dump's 222,617,600 back).
  EXPECT_EQ(m.peak_requested, 853600280); // after entry 1273, time_us 1796200897912847
  EXPECT_EQ(m.peak_requested_time, (1796200897912847 - 1796200892070881) * 1000);
  EXPECT_EQ(m.peak_allocated, 856747520);
  EXPECT_EQ(m.peak_reserved, 994050048); // all 45 segments, reached at time_us 1796200897920982
  EXPECT_EQ(m.peak_reserved_time, (1796200897920982 - 1796200892070881) * 1000);
  // At the end both equal the dump: 147 active_allocated blocks of 222,617,600 bytes
  // (requested 219,471,872).
  EXPECT_EQ(m.final_requested, 219471872);
  EXPECT_EQ(m.final_allocated, 222617600);
  EXPECT_EQ(m.final_allocated,
            static_cast<std::int64_t>(t.final_allocator_state->allocated_bytes()));
  EXPECT_EQ(count_of(s, "memory_events"), 5898u);
  EXPECT_EQ(count_of(s, "kernels"), 0u);
  EXPECT_EQ(s.span.duration(), (1796200897971579 - 1796200892070881) * 1000);
  const auto r = summary_report(t, s);
  EXPECT_FALSE(r.has_errors());
  EXPECT_EQ(r.diagnostics.at(1).code, "TDIAG-TR-201");
}

TEST(SummaryAnalysis, OomSnapshotStartsFromDerivedState) {
  const auto path = shared("oom_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto s = summarize(t);
  ASSERT_EQ(s.memory.size(), 1u);
  // 3 segments (69,206,016 B reserved, 68,157,440 B allocated) predate the history; then eight
  // 256 MiB tensors: peak reserved = 69,206,016 + 8 * 268,435,456.
  EXPECT_EQ(s.memory[0].peak_reserved, 69206016 + 8 * 268435456LL);
  EXPECT_EQ(s.memory[0].peak_allocated, 68157440 + 8 * 268435456LL);
  EXPECT_EQ(s.memory[0].final_reserved, 1679818752);
  EXPECT_EQ(s.memory[0].oom_events, 1u);
}

TEST(SummaryAnalysis, KinetoKernelsStreamsAndMemory) {
  const auto path = shared("train_trace_large.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_kineto_file(path).trace;
  const auto s = summarize(t);
  EXPECT_EQ(count_of(s, "kernels"), 15000u);
  EXPECT_EQ(count_of(s, "memcpy"), 760u);
  EXPECT_EQ(count_of(s, "memset"), 1000u);
  EXPECT_EQ(count_of(s, "cpu_ops"), 132680u);
  ASSERT_EQ(s.kernels.size(), 36u);
  // Longest total: the 128x128 sm80 gemm, 720 launches, 102,114.177 us, max 188.352 us.
  EXPECT_EQ(s.kernels[0].count, 720u);
  EXPECT_EQ(s.kernels[0].total_ns, 102114177);
  EXPECT_EQ(s.kernels[0].max_ns, 188352);
  EXPECT_TRUE(t.name(s.kernels[0].name)
                  .starts_with("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8"));
  // The group's longest kernel, for the front ends that jump to it.
  const auto& longest = t.kernels.all()[s.kernels[0].longest];
  EXPECT_EQ(longest.name, s.kernels[0].name);
  EXPECT_EQ(longest.end - longest.start, 188352);
  EXPECT_EQ(s.kernels[1].count, 480u);
  EXPECT_EQ(s.kernels[1].total_ns, 76144162);
  ASSERT_EQ(s.streams.size(), 1u);
  EXPECT_EQ(s.streams[0].stream, 7u);
  EXPECT_NEAR(static_cast<double>(s.streams[0].busy_ns), 588583167.0, 2000.0);
  EXPECT_NEAR(s.streams[0].busy_fraction, 0.4724, 0.0005);
  const memory_peak* gpu = nullptr;
  for (const auto& m : s.memory)
    if (m.device == 0)
      gpu = &m;
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->peak_allocated, 1221156352);
  EXPECT_EQ(gpu->peak_reserved, 1386217472);
}

// A report lists summary_lanes_listed streams at most, the busiest in their own order, and says
// how many it leaves out (100,000 streams made a report of 100,000 notes and 200 MB).
TEST(SummaryAnalysis, ManyStreamsListTheBusiestAndCountTheRest) {
  trace t;
  constexpr std::uint64_t streams = summary_lanes_listed + 36;
  for (std::uint64_t s = 0; s < streams; ++s) {
    kernel_event k;
    k.stream = s;
    k.lane = t.lanes.gpu(0, s);
    k.name = t.strings.intern("k");
    k.start = 0;
    k.end = static_cast<std::int64_t>((s * 37) % streams + 1) * 1000; // busy times all differ
    t.kernels.push_back(k);
  }
  t.finalize();
  const auto s = summarize(t);
  ASSERT_EQ(s.streams.size(), streams);
  const auto r = summary_report(t, s);
  std::vector<std::int64_t> busy;
  std::size_t unlisted = 0, unlisted_notes = 0;
  for (const auto& d : r.diagnostics) {
    if (d.code == "TDIAG-TR-204") { // its own code: every TR-203 is one stream
      ++unlisted_notes;
      unlisted = static_cast<std::size_t>(std::get<std::int64_t>(d.find_field("unlisted")->value));
      EXPECT_EQ(std::get<std::string>(d.find_field("what")->value), "streams");
      EXPECT_NE(d.message.find("36 more streams are not listed"), std::string::npos) << d.message;
    }
    if (d.code == "TDIAG-TR-203")
      busy.push_back(std::get<std::int64_t>(d.find_field("busy_ns")->value));
  }
  EXPECT_EQ(unlisted_notes, 1u);
  EXPECT_EQ(unlisted, 36u);
  ASSERT_EQ(busy.size(), summary_lanes_listed);
  // The busiest 64 of busy times 1..100 us: 37..100 us each once.
  std::sort(busy.begin(), busy.end());
  for (std::size_t i = 0; i < busy.size(); ++i)
    EXPECT_EQ(busy[i], static_cast<std::int64_t>(streams - summary_lanes_listed + 1 + i) * 1000);
}

} // namespace

namespace {
// Kineto [memory] events whose "Total Allocated" does not move by their "Bytes": the peaks are
// the reported totals, and the disagreement is counted and said (leaks, which pairs the events,
// gave 250 B live beside summary's 999 B peak with nothing said).
TEST(SummaryAnalysis, ReportedTotalsThatDisagreeWithTheBytesAreSaid) {
  const auto memory = [](int ts, long total, long bytes, int addr) {
    return fmt::format(R"({{"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": {}, )"
                       R"("args": {{"Total Reserved": 2097152, "Total Allocated": {}, "Bytes": {},)"
                       R"( "Device Id": 0, "Device Type": 1, "Addr": {}}}}})",
                       ts, total, bytes, addr);
  };
  const auto json = [&](bool agree) {
    return R"({"traceEvents": [)" + memory(10, 100, 100, 4096) + "," +
           memory(20, agree ? 300 : 5, 200, 8192) + "," + memory(30, agree ? 200 : 7, -100, 4096) +
           "]}";
  };
  for (const bool agree : {true, false}) {
    const auto text = json(agree);
    const auto t =
        import_kineto(std::as_bytes(std::span(text.data(), text.size())), "m.json").trace;
    const auto s = summarize(t);
    ASSERT_EQ(s.memory.size(), 1u);
    EXPECT_TRUE(s.memory[0].reported);
    EXPECT_EQ(s.memory[0].mismatched_events, agree ? 0u : 2u);
    const auto r = summary_report(t, s);
    const auto said = tdiag::to_text(r).find("report an allocated total that does not move");
    EXPECT_EQ(said != std::string::npos, !agree);
  }
}
} // namespace
