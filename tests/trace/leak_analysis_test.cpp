// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Fixtures: tests/data/trace/leaking_train_snapshot*.pickle, written by
// benchmarks/trace/make_snapshot.py --leak (a simulated training loop whose line
// `kept.append(out * 1.0)` at train.py:42 keeps a 2 MiB tensor per iteration): 8 iterations
// with Optimizer.step annotations; 6 iterations without annotations and with C++ frames.
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>

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

} // namespace
