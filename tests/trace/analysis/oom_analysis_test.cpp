// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// oom_snapshot.pickle (Python pickle): the 'oom' entry asks for 3,221,225,472 B with
// device_free = 147,642,777,600; the two entries before it are segment_free of 268,435,456 B;
// the dump holds 9 segments, 1,679,818,752 B reserved, one 1 MiB inactive block.
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using namespace tdiag::trace;

TEST(OomAnalysis, PerProcessLimitNotAFullDevice) {
  const auto path = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "oom_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto findings = find_ooms(t);
  ASSERT_EQ(findings.size(), 1u);
  const auto& f = findings[0];
  EXPECT_EQ(f.requested, 3221225472u);
  EXPECT_EQ(f.device_free, 147642777600u);
  EXPECT_EQ(f.released_before, (std::vector<std::uint64_t>{268435456u, 268435456u}));
  EXPECT_EQ(f.reserved, 1679818752u);
  EXPECT_EQ(f.free_in_reserved, 1048576u);
  EXPECT_EQ(f.largest_free_block, 1048576u);
  EXPECT_EQ(f.verdict, oom_verdict::process_limit);
  const auto r = oom_report(t, findings);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const auto& d = r.diagnostics[0];
  EXPECT_EQ(d.code, "TDIAG-TR-220");
  EXPECT_TRUE(r.has_errors());
  EXPECT_NE(d.message.find("3.00 GiB"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("137.50 GiB free"), std::string::npos) << d.message;
  EXPECT_NE(d.message.find("per-process memory limit"), std::string::npos) << d.message;
  EXPECT_EQ(d.message.find("genuinely out of memory"), std::string::npos) << d.message;
  EXPECT_EQ(d.location.line, 42u); // gen_gpu_traces.py:42, the innermost Python frame
  // The live sites are the finding's own, worded once for the report and the front ends.
  ASSERT_FALSE(f.sites.empty());
  const std::string first = describe_oom_site(t, f.sites[0]);
  EXPECT_NE(first.find(" allocation(s) at "), std::string::npos) << first;
  std::vector<std::string> live;
  for (const auto& note : d.notes)
    if (note.starts_with("live: "))
      live.push_back(note.substr(6));
  ASSERT_EQ(live.size(), std::min<std::size_t>(5, f.sites.size()));
  EXPECT_EQ(live[0], first);
}

// A finding keeps the oom_sites_kept largest sites and counts them all: a dump of many ooms
// over many sites held every site for every oom.
TEST(OomAnalysis, AFindingKeepsTheLargestSitesAndCountsThemAll) {
  trace t;
  const auto lane = t.lanes.memory(0);
  allocator_state state;
  segment seg;
  seg.address = 1 << 20;
  seg.total_size = 100 * 4096;
  for (std::uint64_t i = 0; i < 100; ++i) {
    block b;
    b.address = seg.address + i * 4096;
    b.size = b.requested_size = 4096 - i; // block i is site i: the first ones hold the most
    b.state = block_state::active_allocated;
    const std::vector<frame_id> frames{
        t.stacks.intern_frame({t.strings.intern("f" + std::to_string(i)), t.strings.intern("m.py"),
                               static_cast<std::uint32_t>(i + 1)})};
    b.stack = t.stacks.intern_stack(frames);
    seg.blocks.push_back(b);
  }
  state.segments.push_back(seg);
  t.final_allocator_state = state;
  memory_event oom;
  oom.action = memory_action::oom;
  oom.lane = lane;
  oom.size = 1 << 30;
  t.memory.push_back(oom);
  t.finalize();
  const auto findings = find_ooms(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].site_count, 100u);
  ASSERT_EQ(findings[0].sites.size(), oom_sites_kept);
  for (std::size_t i = 0; i < oom_sites_kept; ++i)
    EXPECT_EQ(findings[0].sites[i].bytes, 4096 - i);
  const auto r = oom_report(t, findings);
  ASSERT_NE(r.diagnostics.at(0).find_field("live_sites"), nullptr);
  EXPECT_EQ(*r.diagnostics.at(0).find_field("live_sites"), tdiag::field_value(100));
}

memory_record ev(memory_action a, std::uint64_t addr, std::uint64_t size, std::int64_t time) {
  memory_record e;
  e.action = a;
  e.address = addr;
  e.size = size;
  e.time = time;
  return e;
}

// A trace of `events` on device 0's memory lane, finalized.
trace history(std::vector<memory_record> events) {
  trace t;
  const auto lane = t.lanes.memory(0);
  for (auto& e : events) {
    e.lane = lane;
    t.memory.push_back(t.event_of(e));
  }
  t.finalize();
  return t;
}

TEST(OomAnalysis, FragmentationAndFullDevice) {
  const std::uint64_t mib = 1 << 20;
  for (const bool fragmented : {true, false}) {
    std::vector<memory_record> es = {ev(memory_action::segment_alloc, 0x100000000, 64 * mib, 1)};
    // Eight 8 MiB blocks, every other one freed: 32 MiB free in 8 MiB pieces.
    for (std::uint64_t i = 0; i < 8; ++i)
      es.push_back(ev(memory_action::alloc, 0x100000000 + i * 8 * mib, 8 * mib,
                      2 + static_cast<std::int64_t>(i)));
    for (std::uint64_t i = 0; i < 8; i += 2)
      es.push_back(ev(memory_action::free_completed, 0x100000000 + i * 8 * mib, 8 * mib,
                      20 + static_cast<std::int64_t>(i)));
    auto oom = ev(memory_action::oom, 0, fragmented ? 16 * mib : 48 * mib, 40);
    oom.device_free = 2 * mib;
    es.push_back(oom);
    const auto findings = find_ooms(history(std::move(es)));
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].free_in_reserved, 32 * mib);
    EXPECT_EQ(findings[0].largest_free_block, 8 * mib);
    EXPECT_DOUBLE_EQ(findings[0].fragmentation, 0.75);
    EXPECT_EQ(findings[0].verdict,
              fragmented ? oom_verdict::fragmentation : oom_verdict::device_full);
  }
}

// The device's free memory is measured against the segment a request needs, not against the
// request less the free cached bytes (they do not add up): 1 MiB free and 1.5 MiB cached were
// reported as "enough for the 2.00 MiB request", a process limit (found by a hostile sweep).
TEST(OomAnalysis, FreeMemoryIsMeasuredAgainstTheSegmentARequestNeeds) {
  const std::uint64_t mib = 1 << 20;
  struct expectation {
    std::uint64_t device_free;
    oom_verdict verdict;
  };
  // A 2 MiB request takes a 20 MiB segment when no cached block fits it.
  for (const auto& [device_free, verdict] : {expectation{1 * mib, oom_verdict::device_full},
                                             expectation{10 * mib, oom_verdict::device_full},
                                             expectation{20 * mib, oom_verdict::process_limit}}) {
    SCOPED_TRACE(device_free);
    auto oom = ev(memory_action::oom, 0, 2 * mib, 3);
    oom.device_free = device_free;
    const auto t = history({ev(memory_action::segment_alloc, 0x100000000, 2 * mib, 1),
                            ev(memory_action::alloc, 0x100000000, mib / 2, 2), oom});
    const auto findings = find_ooms(t);
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].free_in_reserved, 3 * mib / 2);
    EXPECT_EQ(findings[0].segment, 20 * mib);
    EXPECT_EQ(findings[0].verdict, verdict);
    const auto message = oom_report(t, findings).diagnostics.at(0).message;
    EXPECT_NE(message.find("20.00 MiB segment"), std::string::npos) << message;
    EXPECT_NE(message.find("2.00 MiB request needs"), std::string::npos) << message;
  }
}

// An oom of 0 B with nothing reserved said "a free block of 0 B was large enough for the 0 B
// request": a 0 B request cannot fail, so it is the event's size that is off.
TEST(OomAnalysis, ARequestOfNothingIsSaidToBeDamage) {
  const auto t = history({ev(memory_action::oom, 0, 0, 1)});
  const auto findings = find_ooms(t);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].verdict, oom_verdict::unexplained);
  const auto message = oom_report(t, findings).diagnostics.at(0).message;
  EXPECT_NE(message.find("a request of 0 B cannot fail: the oom event's size is missing or "
                         "damaged"),
            std::string::npos)
      << message;
}

} // namespace
