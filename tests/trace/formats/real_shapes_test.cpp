// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What real writers put in Kineto traces and memory snapshots (issue 36), one small synthetic
// file per shape (tests/data/trace/make_real_shapes.py writes them; its docstring says which
// real artifact each stands for). Figures are counted by hand from the generator.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>

namespace {

using namespace tdiag::trace;

std::filesystem::path shape(const char* name) {
  return std::filesystem::path(TDIAG_SOURCE_DIR) / "tests" / "data" / "trace" / "real_shapes" /
         name;
}

const tdiag::diagnostic* find_code(const load_result& r, std::string_view code) {
  const auto it = std::find_if(r.warnings.begin(), r.warnings.end(),
                               [&](const tdiag::diagnostic& d) { return d.code == code; });
  return it == r.warnings.end() ? nullptr : &*it;
}

std::string property(const trace& t, std::string_view key) {
  const auto* v = t.metadata.property(key);
  return v ? *v : std::string("<absent>");
}

TEST(RealShapes, KinetoNumbersWrittenAsStrings) {
  kineto_stats stats;
  const auto r = import_kineto_file(shape("string_numbers.json"), {}, &stats);
  const auto& t = r.trace;
  ASSERT_EQ(t.copies.size(), 2u);
  const auto copies = t.copies.all();
  EXPECT_EQ(copies[0].bytes, 128u);
  EXPECT_EQ(copies[0].correlation, 31u);
  EXPECT_EQ(copies[0].stream, 7u);
  EXPECT_FLOAT_EQ(copies[0].bandwidth_gbps, 0.064f);
  EXPECT_EQ(copies[1].bytes, 4096u);
  EXPECT_EQ(copies[1].stream, 7u); // "0x7": ROCm's hex, not counted as a text number
  EXPECT_EQ(copies[1].end - copies[1].start, 2500);
  // stream, correlation, bytes, bandwidth of the first copy; dur and bytes of the second.
  EXPECT_EQ(stats.text_numbers, 6u);
  const auto* note = find_code(r, codes::kineto_text_numbers);
  ASSERT_NE(note, nullptr);
  EXPECT_EQ(note->level, tdiag::severity::note);
  EXPECT_NE(note->message.find("6 numbers written as JSON strings"), std::string::npos)
      << note->message;
  EXPECT_NE(note->message.find("traceEvents[8].args.stream"), std::string::npos) << note->message;
  EXPECT_EQ(r.warnings.size(), 1u);
}

// A string of digits past 64 bits saturates as the same JSON number would, never wraps to 0.
TEST(RealShapes, KinetoStringNumbersSaturate) {
  const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "gpu_memcpy", "name": "m",
    "pid": 0, "tid": 1, "ts": 1, "dur": 1, "args": {"bytes": "99999999999999999999999",
    "correlation": "-5", "device": "1e3"}}]})";
  const auto r = import_kineto(std::as_bytes(std::span(text)), "x.json");
  ASSERT_EQ(r.trace.copies.size(), 1u);
  const auto& c = r.trace.copies.all()[0];
  EXPECT_EQ(c.bytes, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(c.correlation, static_cast<std::uint32_t>(-5)); // as the number -5 would be
  EXPECT_EQ(c.device, 1000);
}

TEST(RealShapes, KinetoStringThatIsNotANumberIsStillRefused) {
  const std::string text = R"({"traceEvents": [{"ph": "X", "cat": "gpu_memcpy", "name": "m",
    "pid": 0, "tid": 1, "ts": 1, "dur": 1, "args": {"bytes": "128 B"}}]})";
  try {
    (void)import_kineto(std::as_bytes(std::span(text)), "x.json");
    FAIL() << "a string that is not a number was read";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("traceEvents[0].args.bytes: expected a JSON integer, "
                                         "got \"128 B\""),
              std::string::npos)
        << e.what();
  }
}

TEST(RealShapes, KinetoLargeMetadataBeforeTraceEvents) {
  // 18 KiB of "metadata" first: the sniffer's 4 KiB hold none of a trace's keys.
  ASSERT_GT(std::filesystem::file_size(shape("metadata_first.json")), sniff_bytes * 4);
  const auto r = load_trace(shape("metadata_first.json"));
  EXPECT_EQ(r.trace.metadata.format, "kineto-json");
  EXPECT_EQ(r.trace.kernels.size(), 3u);
  EXPECT_EQ(r.trace.flows.size(), 3u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(RealShapes, KinetoTopLevelArrayAndComputeProperties) {
  const auto a = load_trace(shape("toplevel_array.json"));
  EXPECT_EQ(a.trace.kernels.size(), 3u);
  EXPECT_EQ(a.trace.api_calls.size(), 3u);
  EXPECT_EQ(a.trace.flows.size(), 3u);
  const auto c = load_trace(shape("compute_properties.json"));
  EXPECT_EQ(c.trace.kernels.size(), 2u);
  EXPECT_EQ(property(c.trace, "device.name"), "Synthetic GPU");
}

TEST(RealShapes, Kineto2021Categories) {
  const auto r = load_trace(shape("kineto_2021.json"));
  const auto& t = r.trace;
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.copies.size(), 1u);
  EXPECT_EQ(t.copies.all()[0].bytes, 640u);
  ASSERT_EQ(t.api_calls.size(), 2u); // the Operator and the Runtime call
  ASSERT_EQ(t.flows.size(), 1u);
  EXPECT_EQ(t.flows.all()[0].kind, flow_kind::launch);
  // The flow's end sits on the kernel's lane (device 0, stream 7), not on one of its own.
  EXPECT_EQ(t.flows.all()[0].target_lane, t.kernels.all()[0].lane);
  std::size_t gpu_lanes = 0;
  for (lane_id l = 0; l < t.lanes.size(); ++l)
    gpu_lanes += t.lanes.at(l).kind == lane_kind::gpu_stream ? 1 : 0;
  EXPECT_EQ(gpu_lanes, 1u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(RealShapes, KinetoRankOnlyAndFractionalTimes) {
  const auto r = load_trace(shape("rank_only.json"));
  const auto& t = r.trace;
  EXPECT_EQ(property(t, "distributed.rank"), "3");
  EXPECT_EQ(t.metadata.time_origin_ns, 1700000000000000000);
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels.all()[0].start, 105125); // ts 105.125 us
  EXPECT_EQ(t.kernels.all()[0].end, 109125);
}

TEST(RealShapes, KinetoGpuOnly) {
  const auto r = load_trace(shape("gpu_only.json"));
  EXPECT_EQ(r.trace.kernels.size(), 3u);
  EXPECT_EQ(r.trace.api_calls.size(), 3u);
  EXPECT_EQ(r.trace.flows.size(), 3u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(RealShapes, KinetoSkippedEventsByKindAndReason) {
  kineto_stats stats;
  const auto r = import_kineto_file(shape("skipped_kinds.json"), {}, &stats);
  EXPECT_EQ(stats.events, 15u);
  EXPECT_EQ(stats.unknown_phase_events, 2u);
  EXPECT_EQ(stats.unknown_phases, "'b', 'e'");
  EXPECT_EQ(stats.unpaired_flows, 3u);
  EXPECT_EQ(stats.skipped_events, 5u);
  EXPECT_EQ(stats.missing_durations, 1u);
  EXPECT_EQ(stats.negative_durations, 1u);
  EXPECT_EQ(property(r.trace, "kineto.unpaired_flows"), "3");
  // Lost: the async pair and two durations. A flow end without its partner carries nothing.
  ASSERT_EQ(r.warnings.size(), 2u);
  const auto* skipped = find_code(r, codes::kineto_skipped);
  ASSERT_NE(skipped, nullptr);
  EXPECT_EQ(skipped->level, tdiag::severity::warning);
  EXPECT_NE(skipped->message.find("2 of 15 events skipped: phases 'b', 'e' have no place"),
            std::string::npos)
      << skipped->message;
  const auto* durations = find_code(r, codes::kineto_bad_duration);
  ASSERT_NE(durations, nullptr);
  EXPECT_NE(durations->message.find("2 complete events (ph X) kept with duration 0: 1 without "
                                    "a dur, 1 with a negative one"),
            std::string::npos)
      << durations->message;
  EXPECT_EQ(r.trace.kernels.size(), 4u);
}

TEST(RealShapes, KinetoOnlyUnpairedFlowsSaysNothing) {
  const std::string text = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 4, "pid": 0, "tid": 7, "ts": 5}]})";
  kineto_stats stats;
  const auto r = import_kineto(std::as_bytes(std::span(text)), "x.json", {}, &stats);
  EXPECT_EQ(stats.unpaired_flows, 1u);
  EXPECT_TRUE(r.warnings.empty());
}

TEST(RealShapes, SnapshotPyTorch20HistoryBlocksWithoutAddresses) {
  const auto r = load_trace(shape("pt20_history_blocks_p2.pickle"));
  const auto& t = r.trace;
  EXPECT_EQ(t.metadata.format, "torch-snapshot");
  EXPECT_EQ(t.memory.size(), 3u);
  ASSERT_TRUE(t.final_allocator_state.has_value());
  const auto& segments = t.final_allocator_state->segments;
  ASSERT_EQ(segments.size(), 1u);
  const auto& blocks = segments[0].blocks;
  ASSERT_EQ(blocks.size(), 3u);
  constexpr std::uint64_t base = 0x7F0000000000, mib = 1 << 20;
  // Placed from the segment's address and the blocks' order and sizes.
  EXPECT_EQ(blocks[0].address, base);
  EXPECT_EQ(blocks[1].address, base + mib);
  EXPECT_EQ(blocks[2].address, base + mib + mib / 2);
  EXPECT_EQ(blocks[0].requested_size, 1000000u); // the history's real_size
  EXPECT_EQ(blocks[1].requested_size, 500000u);
  EXPECT_EQ(blocks[2].requested_size, mib / 2); // empty history: the block's size
  EXPECT_NE(blocks[0].stack, no_stack);
  EXPECT_EQ(t.final_allocator_state->allocated_bytes(), mib + mib / 2);
}

TEST(RealShapes, SnapshotPyTorch21NoTimeUnusedDevices) {
  const auto r = load_trace(shape("pt21_no_time_us_p3.pickle"));
  const auto& t = r.trace;
  EXPECT_EQ(t.memory.size(), 5u);
  EXPECT_EQ(t.metadata.time_origin_ns, 0);
  ASSERT_TRUE(t.final_allocator_state.has_value());
  EXPECT_EQ(t.final_allocator_state->segments.size(), 1u);
  EXPECT_EQ(t.final_allocator_state->allocated_bytes(), 1u << 20);
}

TEST(RealShapes, SnapshotSegmentsOnSeveralDevicesAndStreams) {
  const auto r = load_trace(shape("multi_device_p5.pickle"));
  const auto& t = r.trace;
  EXPECT_EQ(t.memory.size(), 10u);
  ASSERT_TRUE(t.final_allocator_state.has_value());
  const auto& state = *t.final_allocator_state;
  ASSERT_EQ(state.segments.size(), 5u);
  EXPECT_EQ(state.reserved_bytes(0), 4u << 20);
  EXPECT_EQ(state.reserved_bytes(1), 6u << 20);
  EXPECT_EQ(state.segments[4].stream, 22u);
  EXPECT_EQ(state.segments[4].pool, (std::uint64_t{1} << 32) | 22u); // the tuple (1, 22)
}

// Inductor's cpu_op for each Triton launch writes its grid as Python; the kernel's grid is read.
TEST(RealShapes, KinetoTritonGridWrittenAsPython) {
  const auto r = load_trace(shape("triton_compile.json"));
  const auto& t = r.trace;
  ASSERT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.kernels[1].grid[0], 2u);
  EXPECT_EQ(t.kernels[1].block[0], 128u);
  EXPECT_TRUE(r.warnings.empty());
  // Both launches go through the driver: counted, except as HTA counts.
  EXPECT_EQ(analyze_rank(t, 0).launches.num_launches, 2u);
  analysis_options hta;
  hta.hta_compat = true;
  EXPECT_EQ(analyze_rank(t, 0, hta).launches.num_launches, 0u);
}

TEST(RealShapes, KinetoKernelGridWrittenAsTextIsStillRefused) {
  const std::string text = R"json({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k",
    "pid": 0, "tid": 7, "ts": 1, "dur": 1, "args": {"grid": "grid(100,)", "device": 0,
    "stream": 7}}]})json";
  try {
    (void)import_kineto(std::as_bytes(std::span(text)), "x.json");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).message,
              "x.json: traceEvents[0].args.grid: expected an array of integers, got "
              "\"grid(100,)\"");
  }
}

// A ROCm trace's launches are HIP's: two kernels and a copy, each with its delay.
TEST(RealShapes, KinetoHipLaunches) {
  const auto r = load_trace(shape("hip_launches.json"));
  const auto& t = r.trace;
  EXPECT_EQ(t.kernels.size(), 2u);
  EXPECT_EQ(t.copies.size(), 1u);
  const auto a = analyze_rank(t, 0);
  EXPECT_EQ(a.launches.num_launches, 3u);
  EXPECT_EQ(a.launches.launch_delay.mean, 5.0); // each row 5 us after its call ends
  analysis_options hta;
  hta.hta_compat = true;
  EXPECT_EQ(analyze_rank(t, 0, hta).launches.num_launches, 0u);
}

// torch.cuda.memory_snapshot() pickled: the list of segments alone, a dump without history.
TEST(RealShapes, SnapshotSegmentListAlone) {
  const auto t = load_trace(shape("segment_list_p2.pickle")).trace;
  EXPECT_EQ(t.memory.size(), 0u);
  const auto state = t.final_allocator_state.value_or(allocator_state{});
  EXPECT_EQ(state.segments.size(), 2u);
  EXPECT_EQ(state.allocated_bytes(), 2u << 20);
  EXPECT_EQ(state.reserved_bytes(), 4u << 20);
  EXPECT_EQ(t.metadata.format, "torch-snapshot");
  const auto tl = timeline_after_events(t, 0);
  ASSERT_EQ(tl.lanes.size(), 1u);
  EXPECT_EQ(tl.lanes[0].state.segments.size(), 2u);
}

// A snapshot without time_us: every event at one instant. A share of the span is a share of
// the events (the state half-way through the history), and a time names nothing.
TEST(RealShapes, SnapshotWithoutTimesTimelineAtAShareOfTheEvents) {
  const auto t = load_trace(shape("pt21_no_time_us_p3.pickle")).trace;
  std::string why;
  const auto half = timeline_at_text(t, "40%", &why); // 2 of the 5 events
  ASSERT_TRUE(half) << why;
  ASSERT_EQ(half->lanes.size(), 1u);
  EXPECT_EQ(half->lanes[0].event_index, 2u);
  EXPECT_EQ(half->lanes[0].state.allocated_bytes(), 1u << 20);
  const auto all = timeline_at_text(t, "100%", &why);
  ASSERT_TRUE(all) << why;
  EXPECT_EQ(all->lanes[0].event_index, 5u);
  EXPECT_FALSE(timeline_at_text(t, "2ms", &why));
  EXPECT_EQ(why, "the trace's 5 memory events carry no times (all at one instant, as in a "
                 "snapshot without time_us): give a share of them (50%) or --event N");
  EXPECT_FALSE(timeline_at_text(t, "150%", &why));
}

TEST(RealShapes, SnapshotWithNoDevices) {
  const auto r = load_trace(shape("empty_devices_p4.pickle"));
  EXPECT_EQ(r.trace.memory.size(), 0u);
  EXPECT_EQ(r.trace.metadata.format, "torch-snapshot");
}

} // namespace
