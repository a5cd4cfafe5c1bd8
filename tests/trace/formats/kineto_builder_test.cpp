// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The event loop (kineto_builder.cpp): each traceEvents element into its store, lanes and
// thread names, flows paired by (cat, id), and the model held to the memory budget.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::test::as_bytes;

// Every phase and category to its store; an "s" without its "f" and an unknown phase are
// skipped (and counted), args before "ph" are read all the same.
TEST(KinetoBuilder, EventsGoToTheirStores) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10, "dur": 5,
     "args": {"device": 0, "stream": 7, "correlation": 3, "grid": [2, 1, 1]}},
    {"args": {"device": 0, "stream": 7, "bytes": 256}, "ph": "X", "cat": "gpu_memcpy",
     "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 20, "dur": 2},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 8,
     "dur": 1, "args": {"correlation": 3}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#4", "pid": 1, "tid": 1, "ts": 1,
     "dur": 40},
    {"ph": "i", "cat": "cpu_instant_event", "name": "mark", "pid": 1, "tid": 1, "ts": 3},
    {"ph": "C", "name": "queue", "pid": 1, "tid": 1, "ts": 4, "args": {"bytes": 9}},
    {"ph": "s", "cat": "ac2g", "id": 3, "pid": 1, "tid": 1, "ts": 8},
    {"ph": "f", "cat": "ac2g", "id": 3, "pid": 0, "tid": 7, "ts": 10},
    {"ph": "s", "cat": "ac2g", "id": 4, "pid": 1, "tid": 1, "ts": 9},
    {"ph": "Q", "name": "unknown phase", "pid": 1, "tid": 1, "ts": 9}]})json";
  kineto_stats stats;
  const auto r = import_kineto(as_bytes(json), "stores.json", {}, &stats);
  const auto& t = r.trace;
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.kernels.all()[0].start, 10'000);
  EXPECT_EQ(t.kernels.all()[0].end, 15'000);
  EXPECT_EQ(t.kernels.all()[0].correlation, 3u);
  EXPECT_EQ(t.kernels.all()[0].grid[0], 2u);
  ASSERT_EQ(t.copies.size(), 1u);
  EXPECT_EQ(t.copies.all()[0].bytes, 256u);
  EXPECT_EQ(t.copies.all()[0].kind, copy_kind::htod);
  EXPECT_EQ(t.copies.all()[0].src_kind, memory_kind::pageable);
  ASSERT_EQ(t.api_calls.size(), 1u);
  EXPECT_EQ(t.api_calls.all()[0].kind, api_kind::runtime);
  ASSERT_EQ(t.ranges.size(), 1u);
  EXPECT_EQ(t.ranges.all()[0].kind, range_kind::step);
  EXPECT_EQ(t.markers.size(), 1u);
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters.all()[0].value, 9.0);
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows.all()[0].kind, flow_kind::launch);
  EXPECT_EQ(t.flows.all()[0].target_lane, t.kernels.all()[0].lane);
  EXPECT_EQ(stats.events, 10u);
  EXPECT_EQ(stats.skipped_events, 2u); // the open flow and the unknown phase
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].code, "TDIAG-TR-124");
}

// "Bytes": INT64_MIN is a free of 2^63 bytes: negated as unsigned, never a signed overflow (the
// UBSan build runs this too); a size above INT64_MAX saturates instead of turning into a free.
TEST(KinetoBuilder, ExtremeMemoryBytesDoNotOverflow) {
  const std::string json = R"({"traceEvents": [
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 1, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 64, "Bytes": -9223372036854775808}},
    {"ph": "i", "name": "[memory]", "pid": 0, "tid": 0, "ts": 2, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 128, "Bytes": 18446744073709551615}}]})";
  const auto r = import_kineto(as_bytes(json), "bytes.json");
  ASSERT_EQ(r.trace.memory.size(), 2u);
  const auto& free = r.trace.memory.all()[0];
  EXPECT_EQ(free.action, memory_action::free_completed);
  EXPECT_EQ(free.size, std::uint64_t{1} << 63);
  const auto& alloc = r.trace.memory.all()[1];
  EXPECT_EQ(alloc.action, memory_action::alloc);
  EXPECT_EQ(alloc.size, std::uint64_t{INT64_MAX});
}

// A thread_name names the host thread and the GPU stream with its (pid, tid), and only those;
// the last name given wins.
TEST(KinetoBuilder, ThreadNamesNameTheirLanes) {
  std::string json = R"({"traceEvents": [)";
  for (int tid = 0; tid < 50; ++tid) {
    json += fmt::format(R"({{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 1, "tid": {0},)"
                        R"( "ts": {0}, "dur": 1}},)",
                        tid);
    json += fmt::format(R"({{"ph": "M", "name": "thread_name", "pid": 1, "tid": {0},)"
                        R"( "args": {{"name": "worker {0}"}}}},)",
                        tid);
  }
  json += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "old"}},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    {"ph": "M", "name": "thread_name", "pid": 5, "tid": 5, "args": {"name": "no such lane"}}]})";
  const auto r = import_kineto(as_bytes(json), "names.json");
  const auto& lanes = r.trace.lanes;
  for (std::uint64_t tid = 0; tid < 50; ++tid) {
    const auto l = lanes.find_host(1, tid);
    ASSERT_NE(l, no_lane) << tid;
    EXPECT_EQ(r.trace.name(lanes.at(l).name), fmt::format("worker {}", tid));
  }
  const auto gpu = lanes.find_gpu(0, 7);
  ASSERT_NE(gpu, no_lane);
  EXPECT_EQ(r.trace.name(lanes.at(gpu).name), "stream 7");
  EXPECT_EQ(lanes.find_host(5, 5), no_lane);
}

// Many small events (a 62 MB gzip can inflate to 20 GiB of them): the model the whole input
// will need, extrapolated from the share read, is held to the memory budget, one line naming the
// file, the events counted and estimated, the memory and what to do, instead of bad_alloc.
TEST(KinetoBuilder, ModelGrowsWithinTheMemoryBudget) {
  std::string json = R"({"traceEvents": [)";
  for (int i = 0; i < 140000; ++i)
    json += fmt::format(
        R"({{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":{},"dur":1}},)", i);
  json.back() = ']';
  json += "}";
  const auto bytes = as_bytes(json);
  const std::size_t needed = import_kineto(bytes, "many.json").trace.memory_bytes();
  setenv("TDIAG_MEMORY_LIMIT", std::to_string(needed * 3 / 4).c_str(), 1);
  try {
    (void)import_kineto(bytes, "many.json");
    ADD_FAILURE() << "140000 events within 3/4 of the memory they need";
  } catch (const tdiag::input_error& e) {
    const auto& d = e.report().diagnostics.front();
    EXPECT_EQ(d.code, "TDIAG-TR-126");
    // Stopped at the first check (65536 events, under half the input), from the estimate.
    EXPECT_NE(d.message.find("many.json: about 1"), std::string::npos) << d.message;
    EXPECT_NE(d.message.find(" events (65536 counted in the first 4"), std::string::npos)
        << d.message;
    EXPECT_NE(d.message.find("--window A:B"), std::string::npos) << d.message;
    const auto estimated = std::stoll(d.message.substr(d.message.find("about ") + 6));
    EXPECT_NEAR(static_cast<double>(estimated), 140000.0, 140000.0 * 0.05) << d.message;
  }
  setenv("TDIAG_MEMORY_LIMIT", std::to_string(needed * 5 / 4).c_str(), 1);
  EXPECT_EQ(import_kineto(bytes, "many.json").trace.api_calls.size(), 140000u);
  unsetenv("TDIAG_MEMORY_LIMIT");
}

// An NCCL kernel's process group and sequence number (record_param_comms' args) are kept by
// correlation id; "Process Group Ranks" may be a string or an array; a kernel without them
// has no entry.
TEST(KinetoBuilder, KeepsTheProcessGroupOfNcclKernels) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, "ts": 1,
     "dur": 1, "args": {"correlation": 9, "Collective name": "allreduce", "Group size": 2,
     "Process Group Name": "1", "Process Group Ranks": "[0, 1]", "Seq": 4}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllGather", "pid": 0, "tid": 7, "ts": 3,
     "dur": 1, "args": {"correlation": 5, "Process Group Name": "0",
     "Process Group Ranks": [0, 1, 2, 3]}},
    {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 1,
     "args": {"correlation": 6}}]})json";
  const auto t = import_kineto(as_bytes(json), "groups.json").trace;
  ASSERT_EQ(t.collectives.size(), 2u);
  const auto* ar = t.collective_of(9);
  ASSERT_NE(ar, nullptr);
  EXPECT_EQ(t.name(ar->group), "1");
  EXPECT_EQ(t.name(ar->group_ranks), "[0, 1]");
  EXPECT_EQ(t.name(ar->collective), "allreduce");
  EXPECT_EQ(ar->group_size, 2);
  EXPECT_EQ(ar->seq, 4);
  const auto* ag = t.collective_of(5);
  ASSERT_NE(ag, nullptr);
  EXPECT_EQ(t.name(ag->group_ranks), "[0, 1, 2, 3]");
  EXPECT_EQ(ag->seq, -1);
  EXPECT_EQ(t.collective_of(6), nullptr);
  EXPECT_EQ(t.collective_of(0), nullptr);

  const std::string bad = R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
    "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"Process Group Name": 3}}]})";
  try {
    (void)import_kineto(as_bytes(bad), "bad.json");
    ADD_FAILURE() << "a number as the group name";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(e.report().diagnostics.front().message.find(
                  "bad.json: traceEvents[0].args.Process Group Name: expected a JSON string"),
              std::string::npos)
        << e.report().diagnostics.front().message;
  }
}

// The warning or note of `code` among the import's, or a failure.
const tdiag::diagnostic* said(const load_result& r, std::string_view code) {
  for (const auto& d : r.warnings)
    if (d.code == code)
      return &d;
  ADD_FAILURE() << "no " << code;
  return nullptr;
}

// Events without a ts and GPU rows or [memory] events whose device does not fit 32 bits are
// skipped and counted in the one TDIAG-TR-124 warning, by reason: none is put at time 0 or
// truncated onto another device. Metadata (ph M) needs no ts.
TEST(KinetoBuilder, EventsWithoutATimeOrADeviceAreSkippedAndCounted) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
    {"ph": "X", "cat": "cpu_op", "name": "kept", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "no ts", "pid": 1, "tid": 1, "dur": 1},
    {"ph": "i", "cat": "cpu_instant_event", "name": "no ts", "pid": 1, "tid": 1},
    {"ph": "C", "name": "no ts", "pid": 1, "tid": 1, "args": {"v": 1}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 6, "dur": 1,
     "args": {"device": 1099511627776, "stream": 7}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD", "pid": 0, "tid": 7, "ts": 6,
     "dur": 1, "args": {"device": 18446744073709551615, "stream": 7}},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 7, "args": {"Device Type": 1,
     "Device Id": -4294967296, "Addr": 64, "Bytes": 8}},
    {"ph": "Q", "name": "unknown phase", "pid": 1, "tid": 1, "ts": 9}]})json";
  kineto_stats stats;
  const auto r = import_kineto(as_bytes(json), "skips.json", {}, &stats);
  EXPECT_EQ(r.trace.api_calls.size(), 1u);
  EXPECT_EQ(r.trace.api_calls.all()[0].start, 5'000);
  EXPECT_EQ(r.trace.markers.size() + r.trace.counters.size() + r.trace.kernels.size() +
                r.trace.copies.size() + r.trace.memory.size(),
            0u);
  EXPECT_EQ(stats.missing_ts_events, 3u);
  EXPECT_EQ(stats.bad_device_events, 3u);
  EXPECT_EQ(stats.unknown_phase_events, 1u);
  const auto* d = said(r, "TDIAG-TR-124");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->message, "skips.json: 7 of 9 events skipped: 3 without a ts, 3 with a device "
                        "number that does not fit 32 bits, 1 of an unknown phase (phase 'Q' has "
                        "no place in the trace model)");
}

// Past 2^48 us the axis starts at the first such ts; a later ts more than 2^60 ns (36 years)
// from it is skipped and counted, not clamped onto the axis' edge (a span of 36 years).
TEST(KinetoBuilder, TimesPastTheAxisAreSkippedAndCounted) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1700000000000000,
     "dur": 1, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1700000000000010,
     "dur": 1, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 1,
     "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 9000000000000000,
     "dur": 1, "args": {"device": 0, "stream": 7}}]})json";
  kineto_stats stats;
  const auto r = import_kineto(as_bytes(json), "far.json", {}, &stats);
  ASSERT_EQ(r.trace.kernels.size(), 2u);
  EXPECT_EQ(r.trace.kernels.all()[1].start, 10'000);
  EXPECT_EQ(stats.ts_out_of_range_events, 2u);
  const auto* d = said(r, "TDIAG-TR-124");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->message, "far.json: 2 of 4 events skipped: 2 with a ts more than 2^60 ns from the "
                        "trace's axis");
  // The same events with the ts-0 kernel first: placed before the axis moved to the first
  // epoch-like ts, it moves with the axis and is skipped all the same (it was kept at the
  // trace's start, counted as GPU time). Where an event sits does not decide its fate.
  const std::string first = R"json({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 0, "dur": 1,
     "args": {"device": 0, "stream": 7}},
    {"ph": "s", "id": 3, "cat": "ac2g", "name": "ac2g", "pid": 0, "tid": 7, "ts": 0},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 0,
     "dur": 1, "args": {"device": 0, "stream": 7, "wait_on_cuda_event_record_corr_id": 4,
     "wait_on_stream": 9}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1700000000000000,
     "dur": 1, "args": {"device": 0, "stream": 7}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7,
     "ts": 1700000000000005, "dur": 1, "args": {"device": 0, "stream": 7,
     "wait_on_cuda_event_record_corr_id": 5, "wait_on_stream": 8}},
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1700000000000010,
     "dur": 1, "args": {"device": 0, "stream": 7}}]})json";
  kineto_stats first_stats;
  const auto f = import_kineto(as_bytes(first), "first.json", {}, &first_stats);
  ASSERT_EQ(f.trace.kernels.size(), 2u);
  EXPECT_EQ(f.trace.kernels.all()[0].start, 0);
  EXPECT_EQ(f.trace.kernels.all()[1].start, 10'000);
  EXPECT_EQ(first_stats.ts_out_of_range_events, 3u); // the kernel, the flow's start, the wait
  // The wait that stays names its own range, renumbered; the dropped one's wait went with it.
  ASSERT_EQ(f.trace.ranges.size(), 1u);
  ASSERT_EQ(f.trace.sync_waits.size(), 1u);
  EXPECT_EQ(f.trace.sync_waits[0].range_index, 0u);
  EXPECT_EQ(f.trace.sync_waits[0].record_correlation, 5u);
  EXPECT_EQ(f.trace.metadata.property("kineto.ts_rebase_us") != nullptr, true);
}

// A counter's args are its series: one keeps the counter's name, several are "name.series";
// what is not a number (and a counter without args) is counted in one note, never kept as 0.
// [memory] totals below 0 are unknown (-1), counted in the same note.
TEST(KinetoBuilder, CounterSeriesAndMemoryTotalsAreReadOrSaidUnknown) {
  const std::string json = R"json({"traceEvents": [
    {"ph": "C", "name": "queue", "pid": 1, "tid": 1, "ts": 1, "args": {"v": 5}},
    {"ph": "C", "name": "mem", "pid": 1, "tid": 1, "ts": 2, "args": {"a": 1.5, "b\"q": "2"}},
    {"ph": "C", "name": "bad", "pid": 1, "tid": 1, "ts": 3, "args": {"x": "abc", "y": null}},
    {"ph": "C", "name": "empty", "pid": 1, "tid": 1, "ts": 4},
    {"args": {"late": 7}, "ph": "C", "name": "late", "pid": 1, "tid": 1, "ts": 5},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 6, "args": {"Device Type": 1,
     "Device Id": 0, "Addr": 64, "Bytes": 8, "Total Allocated": -5, "Total Reserved": 64}}]})json";
  kineto_stats stats;
  const auto r = import_kineto(as_bytes(json), "counters.json", {}, &stats);
  const auto& t = r.trace;
  ASSERT_EQ(t.counters.size(), 4u);
  const auto counter = [&](std::size_t i) {
    const auto& c = t.counters.all()[i];
    return std::pair{std::string(t.name(c.name)), c.value};
  };
  EXPECT_EQ(counter(0), (std::pair<std::string, double>{"queue", 5.0}));
  EXPECT_EQ(counter(1), (std::pair<std::string, double>{"mem.a", 1.5}));
  // A key with an escaped quote is named as written (it was cut at the quote: "mem.b\").
  EXPECT_EQ(counter(2), (std::pair<std::string, double>{"mem.b\\\"q", 2.0}));
  EXPECT_EQ(counter(3), (std::pair<std::string, double>{"late", 7.0}));
  ASSERT_EQ(t.memory.size(), 1u);
  EXPECT_EQ(t.detail_of(t.memory.all()[0]).total_allocated, -1);
  EXPECT_EQ(t.detail_of(t.memory.all()[0]).total_reserved, 64);
  EXPECT_EQ(stats.unreadable_counter_values, 3u); // "abc", null, no args
  EXPECT_EQ(stats.unreadable_memory_values, 1u);
  const auto* d = said(r, "TDIAG-TR-129");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->level, tdiag::severity::note);
  EXPECT_EQ(d->message, "counters.json: 4 values left unknown, not read as 0: 3 counter (ph C) "
                        "args that are not numbers (or counters without one), 1 [memory] totals "
                        "below 0");
}

} // namespace
