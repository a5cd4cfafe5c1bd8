// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/selection_options.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <unistd.h>
#include <vector>

#include "replay/src/replay_state.hpp"
#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

allocator_state normalized(allocator_state s) {
  normalize(s, false);
  s.time = 0;
  return s;
}

std::string code_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const tdiag::input_error& e) {
    return e.report().diagnostics.at(0).code + ": " + e.report().diagnostics.at(0).message;
  }
  return "no error";
}

TEST(SelectionOptions, TimeOptionsShareOneGrammarCheckedAtParseTime) {
  CLI::App app;
  std::string time, span;
  add_time_offset_option(app, "--time", time, "instant");
  add_time_offset_option(app, "--span", span, "width");
  app.parse(std::vector<std::string>{"4", "--span", "2", "--time"}); // CLI11 takes it reversed
  // A bare number is seconds in both (tdiag-view once read --span 4 as 4 ms).
  EXPECT_EQ(parse_time_offset(time, 0), 2'000'000'000);
  EXPECT_EQ(parse_time_offset(span, 0), 4'000'000'000);
  CLI::App bad;
  std::string at;
  add_time_offset_option(bad, "--at", at, "instant");
  try {
    bad.parse(std::vector<std::string>{"1h", "--at"});
    FAIL() << "1h parsed";
  } catch (const CLI::ValidationError& e) {
    EXPECT_EQ(std::string(e.what()), "--at: " + bad_time_message("1h"));
  }
}

TEST(TraceSelect, ParsesWindows) {
  EXPECT_EQ(parse_time_window("1s:2s"), (time_window{"1s", "2s"}));
  EXPECT_EQ(parse_time_window(":40%"), (time_window{"", "40%"}));
  EXPECT_EQ(parse_time_window("250ms:"), (time_window{"250ms", ""}));
  EXPECT_EQ(parse_time_window("1s"), std::nullopt);
  EXPECT_EQ(parse_time_window("1s:2s:3s"), std::nullopt);
  EXPECT_EQ(parse_time_window("soon:2s"), std::nullopt);

  const time_span span{1000, 2000};
  EXPECT_EQ(resolve_window({"100ns", "50%"}, span), (time_span{1100, 1500}));
  EXPECT_EQ(resolve_window({"", ""}, span), span);
  EXPECT_EQ(resolve_window({"-10%", "500ns"}, span), (time_span{1000, 1500})); // cut at the start
  EXPECT_EQ(resolve_window({"50%", "2s"}, span), (time_span{1500, 2000}));     // and at the end
  EXPECT_EQ(resolve_window({"100%", ""}, span), (time_span{2000, 2000}));
  std::string why;
  EXPECT_EQ(resolve_window({"60%", "40%"}, span, &why), std::nullopt);
  EXPECT_EQ(why, "the start is after the end (the trace spans 1 us)");
  // Wholly past the end (a window in the wrong unit, say), or before the start: said, not cut
  // down to an empty instant.
  EXPECT_EQ(resolve_window({"2s", "3s"}, span, &why), std::nullopt);
  EXPECT_EQ(why, "+2 s..+3 s lies outside the trace, which spans 1 us");
  EXPECT_EQ(resolve_window({"5s", ""}, span, &why), std::nullopt);
  EXPECT_EQ(resolve_window({"", "-1ns"}, span, &why), std::nullopt);
  EXPECT_EQ(why, "+0 ns..-1 ns lies outside the trace, which spans 1 us");
}

TEST(TraceSelect, DeviceKeepsItsLanesAndTheHost) {
  const trace full = make_synthetic_trace({.kernels = 3000, .devices = 3});
  trace t = full;
  const auto r = select_part(t, {.device = 1, .window = {}}, "synthetic");
  ASSERT_TRUE(t.finalized());
  EXPECT_EQ(r.events_kept, t.event_count());
  EXPECT_LT(r.events_kept, r.events_before);

  std::size_t device1_kernels = 0;
  for (const auto& k : full.kernels.all())
    device1_kernels += k.device == 1 ? 1 : 0;
  ASSERT_GT(device1_kernels, 0u);
  EXPECT_EQ(t.kernels.size(), device1_kernels);
  EXPECT_EQ(t.api_calls.size(), full.api_calls.size()); // host lanes are kept whole
  for (const auto& l : t.lanes.lanes())
    EXPECT_TRUE(l.kind == lane_kind::host_thread || l.group == 1);
  for (const auto& k : t.kernels.all()) {
    EXPECT_EQ(k.device, 1);
    EXPECT_EQ(t.lanes.at(k.lane).group, 1);
  }
  for (const auto& m : t.memory.all())
    EXPECT_EQ(t.lanes.at(m.lane).group, m.device);
  for (const auto& f : t.flows.all()) {
    ASSERT_LT(f.target_lane, t.lanes.size());
    EXPECT_EQ(t.lanes.at(f.target_lane).group, 1);
  }
  ASSERT_TRUE(t.final_allocator_state.has_value());
  for (const auto& s : t.final_allocator_state->segments)
    EXPECT_EQ(s.device, 1);
  // The allocator of device 1 replays exactly as it did in the whole trace.
  const allocator_replay whole(full, memory_lane_of(full, 1));
  const allocator_replay part(t, memory_lane_of(t, 1));
  EXPECT_EQ(part.size(), whole.size());
  EXPECT_EQ(normalized(part.initial_state()), normalized(whole.initial_state()));
  EXPECT_EQ(*t.metadata.property("tensordiag.selection"), "device 1");
}

TEST(TraceSelect, WindowReplaysTheAllocatorToBothEnds) {
  const auto path = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "train_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent: " << path;
  const trace full = import_snapshot_file(path).trace;
  const lane_id lane = full.memory.all().front().lane;
  const allocator_replay whole(full, lane);
  ASSERT_GT(whole.size(), 100u);
  ASSERT_TRUE(whole.two_step_frees());

  // From the third to the two-thirds event of the history, in ns since the trace's start.
  const auto since_start = [&](std::size_t i) {
    return std::to_string(whole.events()[i].time - full.span().begin) + "ns";
  };
  trace t = full;
  const auto r = select_part(
      t,
      {.device = {},
       .window = time_window{since_start(whole.size() / 3), since_start(2 * whole.size() / 3)}},
      "train_snapshot.pickle");
  EXPECT_EQ(r.undo_mismatches, 0u);
  EXPECT_GT(t.memory.size(), 0u);
  EXPECT_LT(t.memory.size(), full.memory.size());
  for (const auto& e : t.memory.all()) {
    EXPECT_GE(e.time, r.window.begin);
    EXPECT_LE(e.time, r.window.end);
  }
  // The state the part carries is the whole replay's at the window's end; the part's own replay
  // starts from the segments the whole one had at the window's start (blocks are derived
  // backwards, which PyTorch's rounded event sizes make inexact: trace_select.cpp).
  EXPECT_EQ(normalized(*t.final_allocator_state),
            normalized(whole.state_at(whole.index_at_time(r.window.end))));
  EXPECT_EQ(t.final_allocator_state->time, r.window.end);
  const allocator_replay part(t, memory_lane_of(t, full.lanes.at(lane).group));
  EXPECT_EQ(part.mismatches(), 0u);
  const auto at_begin = whole.state_at(whole.index_at_time(r.window.begin - 1)).figures();
  EXPECT_EQ(part.initial_state().figures().reserved, at_begin.reserved);
  EXPECT_EQ(part.initial_state().figures().segments, at_begin.segments);

  // The device the history is on, and the same window: the same part.
  trace on_device = full;
  (void)select_part(
      on_device,
      {.device = static_cast<std::int32_t>(full.lanes.at(lane).group),
       .window = time_window{since_start(whole.size() / 3), since_start(2 * whole.size() / 3)}},
      "train_snapshot.pickle");
  EXPECT_EQ(test::canonical_events(on_device), test::canonical_events(t));
  EXPECT_EQ(normalized(*on_device.final_allocator_state), normalized(*t.final_allocator_state));
}

// A window's memory is replayed in replay_state, a segment of many blocks as fragments (here
// of 2 blocks, to cut this small one): the part's state at the window's end is the plain
// vector replay's from the start.
TEST(TraceSelect, WindowOverOneSegmentOfManyBlocksEndsInTheReplaysState) {
  const auto was = detail::replay_fragment_blocks.exchange(2);
  trace t;
  const lane_id lane = t.lanes.memory(0);
  const std::uint64_t base = std::uint64_t{1} << 40, page = 4096;
  const auto push = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    t.memory.push_back({.time = static_cast<std::int64_t>(t.memory.size()) * 10,
                        .lane = lane,
                        .action = action,
                        .address = address,
                        .size = size});
  };
  push(memory_action::segment_alloc, base, std::uint64_t{1} << 30);
  for (std::uint64_t i = 0; i < 600; ++i)
    push(memory_action::alloc, base + i * page, page);
  for (std::uint64_t i = 0; i < 300; ++i) // the oldest first: each merges with the one before
    push(memory_action::free_completed, base + i * page, page);
  allocator_state end;
  for (const auto& e : t.memory.all())
    ASSERT_TRUE(apply_memory_event(end, e));
  t.final_allocator_state = end;
  t.finalize();

  (void)select_part(t, {.device = {}, .window = time_window{"0ns", "6020ns"}}, "made");
  detail::replay_fragment_blocks = was;
  // Events at 0, 10, ..., 6020: the segment, 600 allocations and the first two frees.
  ASSERT_EQ(t.memory.size(), 603u);
  allocator_state expected;
  for (const auto& e : t.memory.all())
    ASSERT_TRUE(apply_memory_event(expected, e));
  ASSERT_TRUE(t.final_allocator_state);
  ASSERT_EQ(t.final_allocator_state->segments.size(), 1u);
  // The two freed pages merged, 598 live, the free tail.
  EXPECT_EQ(t.final_allocator_state->segments[0].blocks.size(), 600u);
  EXPECT_EQ(normalized(*t.final_allocator_state), normalized(expected));
}

TEST(TraceSelect, WindowKeepsOverlappingRowsAndTheirSyncWaits) {
  trace t;
  const lane_id gpu = t.lanes.gpu(0, 7);
  const lane_id host = t.lanes.host(1, 1);
  for (std::int64_t i = 0; i < 10; ++i) {
    t.kernels.push_back({.start = i * 100, .end = i * 100 + 150, .lane = gpu, .correlation = 0});
    t.ranges.push_back(
        {.start = i * 100, .end = i * 100 + 10, .lane = host, .kind = range_kind::gpu_sync});
    t.sync_waits.push_back({.range_index = static_cast<std::uint32_t>(i),
                            .record_correlation = static_cast<std::uint32_t>(100 + i)});
  }
  t.counters.push_back({.time = 0, .lane = host, .value = 1});
  t.counters.push_back({.time = 250, .lane = host, .value = 2});
  t.counters.push_back({.time = 900, .lane = host, .value = 3});
  t.finalize();
  // [400, 600] on a span of [0, 1050].
  (void)select_part(t, {.device = {}, .window = time_window{"400ns", "600ns"}}, "made");
  // Kernels starting at 300 (ends 450) to 600 overlap; ranges 400..600.
  ASSERT_EQ(t.kernels.size(), 4u);
  EXPECT_EQ(t.kernels[0].start, 300);
  ASSERT_EQ(t.ranges.size(), 3u);
  ASSERT_EQ(t.sync_waits.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(t.sync_waits[i].range_index, i);
    EXPECT_EQ(t.sync_wait_of(i)->record_correlation, 104 + i); // the row's own entry
    EXPECT_EQ(t.ranges[i].start, 400 + 100 * i);
  }
  // The sample at 250 holds the counter's value at the window's start.
  ASSERT_EQ(t.counters.size(), 1u);
  EXPECT_EQ(t.counters[0].value, 2);
}

TEST(TraceSelect, BadSelectionsSayWhatTheTraceHas) {
  trace t = make_synthetic_trace({.kernels = 100, .devices = 2});
  const auto no_device =
      code_of([&] { (void)select_part(t, {.device = 5, .window = {}}, "a.json"); });
  EXPECT_NE(no_device.find(codes::no_such_device), std::string::npos) << no_device;
  EXPECT_NE(no_device.find("a.json: --device 5: the trace has no device 5 (it has devices 0, 1)"),
            std::string::npos)
      << no_device;
  const auto reversed = code_of([&] {
    (void)select_part(t, {.device = {}, .window = time_window{"80%", "20%"}}, "a.json");
  });
  EXPECT_NE(reversed.find(codes::bad_window), std::string::npos) << reversed;
}

TEST(TraceSelect, LoadTraceAppliesTheSelectionToAnyFormat) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("trace_select_" + std::to_string(::getpid()) + ".tdtrace");
  const trace full = make_synthetic_trace({.kernels = 150'000, .devices = 2});
  write_tdtrace(path, full); // large enough for a mapped row image
  load_options options;
  options.select = {.device = 0, .window = time_window{"25%", "75%"}};
  const auto loaded = load_trace(path, options);
  std::filesystem::remove(path);
  trace expected = full;
  (void)select_part(expected, options.select, "x");
  EXPECT_EQ(test::canonical_events(loaded.trace), test::canonical_events(expected));
  ASSERT_TRUE(loaded.trace.final_allocator_state.has_value());
  EXPECT_EQ(loaded.trace.final_allocator_state->figures(),
            expected.final_allocator_state->figures());
  EXPECT_TRUE(loaded.warnings.empty());
}

// A report on a part says which part; a part of a part (a .tdtrace written from a selection,
// opened with another) says both.
TEST(TraceSelect, TheSummarySaysWhichPartItIs) {
  trace t = make_synthetic_trace({.kernels = 2000, .devices = 2});
  t.metadata.source_path = "run.tdtrace";
  (void)select_part(t, {.device = 1, .window = {}}, "run.tdtrace");
  (void)select_part(t, {.device = {}, .window = time_window{"", "50%"}}, "run.tdtrace");
  const auto r = summary_report(t, summarize(t));
  const auto& note = r.diagnostics.at(0);
  const auto* field = note.find_field("selection");
  ASSERT_NE(field, nullptr);
  // The window on the whole's axis: from its start to half of the device-1 part's span.
  const auto& said = std::get<std::string>(field->value);
  EXPECT_TRUE(said.starts_with("device 1; window :50% = +0 ns..+")) << said;
  EXPECT_NE(note.message.find("; only " + said + ")"), std::string::npos) << note.message;

  trace whole = make_synthetic_trace({.kernels = 2000, .devices = 2});
  EXPECT_EQ(summary_report(whole, summarize(whole)).diagnostics.at(0).find_field("selection"),
            nullptr);
}

} // namespace
