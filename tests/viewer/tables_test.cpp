// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One answer per question: every viewer table and curve equals what `tdiag trace
// leaks/oom/summary/timeline --format json` reports, i.e. the reports of the trace library
// functions the CLI calls, on every fixture in tests/data/trace and every shared trace.
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>
#include <tensordiag/viewer/memory_curve.hpp>
#include <tensordiag/viewer/state_seeker.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace tdiag;
using tdiag::view::table_model;

std::vector<fs::path> traces() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(TDIAG_SOURCE_DIR) / "tests/data/trace")) {
    const auto ext = e.path().extension();
    if (ext == ".pickle" || ext == ".tdtrace" || ext == ".json")
      out.push_back(e.path());
  }
  for (const char* name : {"train_snapshot.pickle", "oom_snapshot.pickle",
                           "train_trace_small.json.gz", "train_trace_large.json.gz"})
    if (const auto p = fs::path(TDIAG_SHARED_DIR) / "traces" / name; fs::exists(p))
      out.push_back(p);
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t int_field(const diagnostic& d, std::string_view name) {
  const auto* v = d.find_field(name);
  return v != nullptr ? std::get<std::int64_t>(v->value) : -1;
}

std::string text_field(const diagnostic& d, std::string_view name) {
  const auto* v = d.find_field(name);
  return v != nullptr ? std::get<std::string>(v->value) : std::string();
}

double key(const view::table_row& r, std::size_t column) {
  return r.keys.at(column);
}

void expect_leaks_table_is_the_cli_report(const trace::trace& t) {
  const auto leaks = trace::find_leaks(t);
  const auto cli = trace::leak_report(t, leaks, std::numeric_limits<std::size_t>::max());
  const table_model table = view::leaks_table(t);
  ASSERT_EQ(table.rows().size() + 1, cli.diagnostics.size());
  EXPECT_EQ(int_field(cli.diagnostics[0], "live_allocations"),
            static_cast<std::int64_t>(leaks.live.size()));
  for (std::size_t i = 0; i < table.rows().size(); ++i) {
    const auto& row = table.rows()[i];
    const auto& d = cli.diagnostics[i + 1];
    EXPECT_EQ(row.cells[0], text_field(d, "site")) << i;
    EXPECT_EQ(key(row, 1), static_cast<double>(int_field(d, "live_allocations"))) << i;
    EXPECT_EQ(key(row, 2), static_cast<double>(int_field(d, "live_bytes"))) << i;
    EXPECT_EQ(key(row, 3), static_cast<double>(int_field(d, "growth_per_iteration_bytes"))) << i;
    EXPECT_EQ(row.cells[4] == "growing", d.code == "TDIAG-TR-210") << i;
  }
}

void expect_oom_table_is_the_cli_report(const trace::trace& t) {
  const auto cli = trace::oom_report(t, trace::find_ooms(t));
  const table_model table = view::oom_table(t);
  if (table.rows().empty()) {
    ASSERT_EQ(cli.diagnostics.size(), 1u);
    EXPECT_EQ(cli.diagnostics[0].code, "TDIAG-TR-221");
    return;
  }
  ASSERT_EQ(table.rows().size(), cli.diagnostics.size());
  for (std::size_t i = 0; i < table.rows().size(); ++i) {
    const auto& row = table.rows()[i];
    const auto& d = cli.diagnostics[i];
    EXPECT_EQ(d.code, "TDIAG-TR-220");
    EXPECT_EQ(key(row, 2), static_cast<double>(int_field(d, "requested_bytes")));
    EXPECT_EQ(key(row, 3), static_cast<double>(int_field(d, "device_free_bytes")));
    EXPECT_EQ(key(row, 4), static_cast<double>(int_field(d, "allocated_bytes")));
    EXPECT_EQ(key(row, 5), static_cast<double>(int_field(d, "reserved_bytes")));
    EXPECT_EQ(row.cells[6], text_field(d, "verdict"));
    ASSERT_EQ(row.target.kind, view::event_kind::memory);
    EXPECT_EQ(t.memory.all()[row.target.index].action, trace::memory_action::oom);
  }
}

void expect_sites_table_is_trace_allocation_sites(const trace::trace& t) {
  using row_key = std::tuple<std::string, double, double, double>;
  std::vector<row_key> want, got;
  std::size_t allocs = 0;
  for (const auto& s : trace::allocation_sites(t)) {
    want.emplace_back(trace::describe_frame(t, s.site), static_cast<double>(s.count),
                      static_cast<double>(s.bytes), static_cast<double>(s.largest));
    allocs += s.count;
  }
  const table_model table = view::allocation_sites_table(t);
  for (const auto& r : table.rows())
    got.emplace_back(r.cells[0], key(r, 1), key(r, 2), key(r, 3));
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(allocs, static_cast<std::size_t>(std::count_if(
                        t.memory.all().begin(), t.memory.all().end(),
                        [](const auto& e) { return e.action == trace::memory_action::alloc; })));
}

void expect_curves_are_the_summary(const trace::trace& t) {
  const auto cli = trace::summary_report(t, trace::summarize(t));
  std::size_t lanes = 0;
  for (const auto& d : cli.diagnostics) {
    if (d.code != "TDIAG-TR-201")
      continue;
    ++lanes;
    const auto device = static_cast<std::int32_t>(int_field(d, "device"));
    const auto curve = view::memory_curve::build(t, device);
    ASSERT_FALSE(curve.empty()) << "device " << device;
    EXPECT_EQ(curve.peak_allocated(), int_field(d, "peak_allocated_bytes")) << device;
    EXPECT_EQ(curve.peak_reserved(), int_field(d, "peak_reserved_bytes")) << device;
    EXPECT_EQ(curve.allocated(curve.size() - 1), int_field(d, "final_allocated_bytes"));
    EXPECT_EQ(curve.reserved(curve.size() - 1), int_field(d, "final_reserved_bytes"));
  }
  EXPECT_EQ(lanes, view::memory_curve::devices(t).size());
}

// The allocator view's state (the document's replay: budgeted keyframes, the seeker's worker)
// at event n equals `tdiag trace timeline --event n`.
void expect_allocator_state_is_the_timeline(const trace::trace& t) {
  for (const auto device : view::memory_curve::devices(t)) {
    const trace::allocator_replay replay(t, trace::memory_lane_of(t, device),
                                         trace::replay_options{});
    view::state_seeker seeker(replay);
    for (const std::size_t n :
         {std::size_t{0}, replay.size() / 3, replay.size() / 2 + 1, replay.size()}) {
      const auto r = trace::timeline_after_events(t, n);
      const auto lane = std::find_if(r.lanes.begin(), r.lanes.end(),
                                     [&](const auto& l) { return l.device == device; });
      ASSERT_NE(lane, r.lanes.end());
      seeker.request(n);
      seeker.wait();
      const auto shown = seeker.latest();
      ASSERT_EQ(shown->index, n);
      const auto& state = shown->state;
      ASSERT_EQ(state, lane->state) << "device " << device << " after " << n << " events";
      EXPECT_EQ(shown->figures, state.figures());
      const auto cli = trace::timeline_report(t, r, 0);
      const auto d = std::find_if(cli.diagnostics.begin(), cli.diagnostics.end(), [&](auto& x) {
        return x.code == "TDIAG-TR-240" && int_field(x, "device") == device;
      });
      ASSERT_NE(d, cli.diagnostics.end());
      EXPECT_EQ(int_field(*d, "reserved_bytes"), static_cast<std::int64_t>(state.reserved_bytes()));
      EXPECT_EQ(int_field(*d, "allocated_bytes"),
                static_cast<std::int64_t>(state.allocated_bytes()));
    }
  }
}

TEST(Tables, EveryTableEqualsTheCliOnEveryTrace) {
  const auto files = traces();
  ASSERT_GE(files.size(), 6u); // the fixtures are part of the tree
  std::size_t memory_events = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    const auto loaded = trace::load_trace(path);
    const auto& t = loaded.trace;
    expect_leaks_table_is_the_cli_report(t);
    expect_oom_table_is_the_cli_report(t);
    expect_sites_table_is_trace_allocation_sites(t);
    expect_curves_are_the_summary(t);
    expect_allocator_state_is_the_timeline(t);
    memory_events += t.memory.size();
  }
  // The shared traces alone hold 5,898 + 23 + 1,020 + 38,880 memory events.
  if (fs::exists(fs::path(TDIAG_SHARED_DIR) / "traces")) {
    EXPECT_GE(memory_events, 45'821u);
  }
  RecordProperty("memory_events", static_cast<int>(memory_events));
}

TEST(Tables, OomSnapshotLeaksAreTheDumpsLiveBlocks) {
  const auto path = fs::path(TDIAG_SHARED_DIR) / "traces" / "oom_snapshot.pickle";
  if (!fs::exists(path))
    GTEST_SKIP() << "shared trace not found: " << path;
  const auto t = trace::load_trace(path).trace;
  // Python: the dump holds 9 active_allocated blocks of 1,678,770,176 bytes; 3 predate the
  // history, which an alloc/free pairing of the history alone misses.
  const auto table = view::leaks_table(t);
  double count = 0, bytes = 0;
  for (const auto& r : table.rows())
    count += key(r, 1), bytes += key(r, 2);
  EXPECT_EQ(count, 9.0);
  EXPECT_EQ(bytes, 1678770176.0);
  const auto ooms = view::oom_table(t);
  ASSERT_EQ(ooms.rows().size(), 1u);
  EXPECT_EQ(ooms.rows()[0].cells[6], "process_limit");
}

} // namespace
