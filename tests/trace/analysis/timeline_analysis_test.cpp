// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>
#include <tensordiag/trace/units.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using namespace tdiag::trace;

TEST(TimelineAnalysis, OomSnapshotBeforeAndAfterTheReleases) {
  const auto path = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "oom_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  // time_us of the entries: the last alloc at +695 us, the frees at +743/+750, segment_free at
  // +998 and +1184, the oom at +1878 (origin = the first entry, 1796200898011448).
  const auto before = timeline_at(t, t.span().begin + 700'000);
  ASSERT_EQ(before.lanes.size(), 1u);
  EXPECT_EQ(before.lanes[0].event_index, 16u);
  EXPECT_EQ(before.lanes[0].state.segments.size(), 11u); // 3 older + 8 new
  const auto after = timeline_at(t, t.span().begin + 1'500'000);
  EXPECT_EQ(after.lanes[0].event_index, 22u);
  EXPECT_EQ(after.lanes[0].state.segments.size(), 9u);
  EXPECT_EQ(after.lanes[0].state.reserved_bytes(), 1679818752u);
  const auto by_event = timeline_after_events(t, 22);
  EXPECT_EQ(by_event.lanes[0].state, after.lanes[0].state);
  const auto r = timeline_report(t, after, 2);
  EXPECT_EQ(r.diagnostics.front().code, "TDIAG-TR-240");
  EXPECT_EQ(r.diagnostics.size(), 1u + 2u + 1u); // totals, 2 segments, "and 7 more"
}

TEST(TimelineAnalysis, ParseDuration) {
  EXPECT_EQ(parse_duration("1.5s"), 1'500'000'000);
  EXPECT_EQ(parse_duration("250ms"), 250'000'000);
  EXPECT_EQ(parse_duration("40us"), 40'000);
  EXPECT_EQ(parse_duration("12ns"), 12);
  EXPECT_EQ(parse_duration("2"), 2'000'000'000);
  EXPECT_FALSE(parse_duration("soon").has_value());
  EXPECT_FALSE(parse_duration("5 parsecs").has_value());
  EXPECT_EQ(format_bytes(3221225472u), "3.00 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
}

// A snapshot dumped without device_traces: summary, timeline and leaks all report the dump's
// memory (summary and timeline reported nothing while leaks listed the live block).
TEST(TimelineAnalysis, AStateOnlySnapshotIsOneAnswerEverywhere) {
  const auto path = std::filesystem::path(TDIAG_SOURCE_DIR) /
                    "tests/trace/fuzz/corpus/snapshot_import/state_only_no_device_traces.pickle";
  auto r = import_snapshot_file(path);
  const auto& t = r.trace;
  ASSERT_EQ(t.memory.size(), 0u);
  const auto peaks = summarize(t).memory;
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_EQ(peaks[0].device, 0);
  EXPECT_EQ(peaks[0].peak_allocated, 1 << 20);
  EXPECT_EQ(peaks[0].peak_reserved, 2 << 20);
  EXPECT_EQ(peaks[0].final_allocated, 1 << 20);
  const auto tl = timeline_at(t, 0);
  ASSERT_EQ(tl.lanes.size(), 1u);
  const auto f = tl.lanes[0].state.figures();
  EXPECT_EQ(f.allocated, std::uint64_t{1} << 20);
  EXPECT_EQ(f.reserved, std::uint64_t{2} << 20);
  EXPECT_EQ(find_leaks(t).live_bytes, std::uint64_t{1} << 20);
  // The segment's type ('large') is in the report's fields, as in its text.
  const auto rep = timeline_report(t, tl, 5);
  bool typed = false;
  for (const auto& d : rep.diagnostics)
    for (const auto& field : d.fields)
      typed = typed ||
              (field.name == "segment_type" && std::get<std::string>(field.value.value) == "large");
  EXPECT_TRUE(typed);
}

} // namespace
