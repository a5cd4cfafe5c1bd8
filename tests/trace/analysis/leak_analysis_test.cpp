// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Fixtures: tests/data/trace/leaking_train_snapshot*.pickle, written by
// benchmarks/trace/make_snapshot.py --leak (a simulated training loop whose line
// `kept.append(out * 1.0)` at train.py:42 keeps a 2 MiB tensor per iteration): 8 iterations
// with Optimizer.step annotations; 6 iterations without annotations and with C++ frames.
// tests/data/trace/kineto_{no_,}leak.json, written by make_kineto_fixtures.py there: 20
// iterations of a torch.profiler-style trace without stacks, keeping a workspace (step 1),
// optimizer state (step 2) and the last loss; the second also keeps 1 MiB per iteration.
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

std::filesystem::path fixture(const char* name) {
  return std::filesystem::path(TDIAG_SOURCE_DIR) / "tests" / "data" / "trace" / name;
}

void expect_top_site_is_the_leak(const char* name, std::size_t iterations) {
  const auto t = import_snapshot_file(fixture(name)).trace;
  const auto r = find_leaks(t);
  ASSERT_FALSE(r.sites.empty());
  const auto& top = r.sites.front();
  EXPECT_TRUE(top.growing);
  EXPECT_EQ(describe_frame(t, top.site), "train.py:42 (train_step)");
  EXPECT_EQ(top.live_count, iterations);
  EXPECT_EQ(top.live_bytes, iterations * (2u << 20));
  EXPECT_EQ(top.growth_per_iteration, 2u << 20);
  EXPECT_EQ(top.iterations, iterations);
  // Nothing else grows: weights, gradients and optimizer state are made once.
  for (std::size_t i = 1; i < r.sites.size(); ++i)
    EXPECT_FALSE(r.sites[i].growing) << describe_frame(t, r.sites[i].site);
  const auto report = leak_report(t, r);
  ASSERT_GE(report.diagnostics.size(), 2u);
  const auto& d = report.diagnostics[1];
  EXPECT_EQ(d.code, "TDIAG-TR-210");
  EXPECT_EQ(d.level, tdiag::severity::warning);
  EXPECT_EQ(d.location.file, "train.py");
  EXPECT_EQ(d.location.line, 42u);
  const auto text = tdiag::to_text(report);
  EXPECT_NE(text.find("train.py:42"), std::string::npos);
}

TEST(LeakAnalysis, TopSiteIsTheLeakingLineWithAnnotations) {
  expect_top_site_is_the_leak("leaking_train_snapshot.pickle", 8);
}

TEST(LeakAnalysis, TopSiteIsTheLeakingLineWithoutMarkersAndWithCppFrames) {
  expect_top_site_is_the_leak("leaking_train_snapshot_cpp.pickle", 6);
}

TEST(LeakAnalysis, IterationsFromAnnotations) {
  const auto t = import_snapshot_file(fixture("leaking_train_snapshot.pickle")).trace;
  std::string source;
  EXPECT_EQ(iteration_starts(t, &source).size(), 8u);
  EXPECT_EQ(source, "annotation 'Optimizer.step#AdamW.step'");
}

TEST(LeakAnalysis, InternalFramesAreSkipped) {
  trace t;
  const frame torch_frame{t.strings.intern("forward"),
                          t.strings.intern("/x/site-packages/torch/nn/linear.py"), 125};
  const frame frozen{t.strings.intern("_run"), t.strings.intern("<frozen runpy>"), 88};
  const frame cpp{t.strings.intern("c10::alloc"), t.strings.intern("??"), 0};
  const frame user{t.strings.intern("main"), t.strings.intern("/home/me/train.py"), 42};
  EXPECT_TRUE(is_internal_frame(t, torch_frame));
  EXPECT_TRUE(is_internal_frame(t, frozen));
  EXPECT_TRUE(is_internal_frame(t, cpp));
  EXPECT_FALSE(is_internal_frame(t, user));
  const frame_id ids[] = {t.stacks.intern_frame(cpp), t.stacks.intern_frame(torch_frame),
                          t.stacks.intern_frame(user), t.stacks.intern_frame(frozen)};
  const auto stack = t.stacks.intern_stack(ids);
  EXPECT_EQ(user_frame(t, stack), ids[2]);
}

TEST(LeakAnalysis, SharedTrainingSnapshotHasNoGrowingSite) {
  const auto path = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "train_snapshot.pickle";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto r = find_leaks(t);
  // Python: 147 blocks in state active_allocated at the dump.
  EXPECT_EQ(r.live.size(), 147u);
}

// A snapshot whose events leave an allocation open that its dumped segments do not hold
// contradicts itself: leaks follows the dump (0 B live) and says so, where it was silent.
TEST(LeakAnalysis, EventsTheDumpDoesNotHoldAreAWarning) {
  const auto snapshot = [](bool dump_holds_it) {
    return test::snapshot_with_open_allocation(dump_holds_it);
  };
  const auto held = snapshot(true);
  const auto r = find_leaks(held);
  EXPECT_EQ(r.live_bytes, 1u << 20);
  EXPECT_EQ(r.open_not_in_dump, 0u);
  EXPECT_EQ(leak_report(held, r).count(tdiag::severity::warning), 0u);
  const auto contradicted = snapshot(false);
  const auto c = find_leaks(contradicted);
  EXPECT_EQ(c.live_bytes, 0u);
  EXPECT_EQ(c.open_not_in_dump, 1u);
  EXPECT_EQ(c.open_not_in_dump_bytes, 1u << 20);
  const auto report = leak_report(contradicted, c);
  ASSERT_EQ(report.count(tdiag::severity::warning), 1u);
  const auto text = tdiag::to_text(report);
  EXPECT_NE(text.find("1 allocation(s) (1.00 MiB) that the memory events leave open are not "
                      "allocated in the dumped segments"),
            std::string::npos)
      << text;
}

// Issue 18 item 12: a profiler trace of a loop that keeps nothing across steps was reported as
// "growing 23.77 MiB per iteration over 3 iterations": without stacks every allocation shares
// one site, and a workspace, the optimizer state and the last loss come from 3 iterations.
TEST(LeakAnalysis, StaticAllocationsFromThreeIterationsAreNotALeak) {
  const auto t = import_kineto_file(fixture("kineto_no_leak.json")).trace;
  const auto r = find_leaks(t);
  EXPECT_FALSE(r.from_dump);
  EXPECT_FALSE(r.has_stacks);
  EXPECT_EQ(r.iterations, 21u);
  ASSERT_EQ(r.sites.size(), 1u);
  const auto& s = r.sites.front();
  EXPECT_EQ(s.live_count, 4u);
  EXPECT_EQ(s.live_bytes, 38u * (1u << 20) + 512u);
  EXPECT_EQ(s.iterations, 3u);
  EXPECT_EQ(s.iteration_span, 21u);
  EXPECT_FALSE(s.growing);
  EXPECT_EQ(s.growth_per_iteration, 0u);
  const auto report = leak_report(t, r);
  EXPECT_EQ(report.count(tdiag::severity::warning), 0u);
  const auto text = tdiag::to_text(report);
  EXPECT_NE(text.find("no allocation stacks"), std::string::npos);
  EXPECT_NE(text.find("alive when the recording stopped"), std::string::npos);
}

TEST(LeakAnalysis, KeptEveryIterationIsALeakWithItsRealGrowth) {
  const auto t = import_kineto_file(fixture("kineto_leak.json")).trace;
  const auto r = find_leaks(t);
  ASSERT_EQ(r.sites.size(), 1u);
  const auto& s = r.sites.front();
  EXPECT_TRUE(s.growing);
  // The median step keeps 1 MiB; the workspace and optimizer state do not inflate it.
  EXPECT_EQ(s.growth_per_iteration, 1u << 20);
  EXPECT_GE(s.coverage, 0.95);
  const auto report = leak_report(t, r);
  ASSERT_EQ(report.diagnostics.size(), 2u);
  EXPECT_EQ(report.diagnostics[1].code, "TDIAG-TR-210");
  // Without stacks it says how unsure the site is.
  EXPECT_NE(tdiag::to_text(report).find("unsure"), std::string::npos);
}

} // namespace
