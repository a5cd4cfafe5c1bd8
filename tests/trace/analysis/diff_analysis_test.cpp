// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Fixtures from benchmarks/trace/make_snapshot.py --leak: 4 and 8 iterations, so the leaking
// site train.py:42 holds 4 x 2 MiB and 8 x 2 MiB at the end. Kernel counts from Python
// (json + gzip): the 128x128 sm80 gemm runs 18 times in the small trace and 720 in the large.
#include <tensordiag/trace/diff_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

std::filesystem::path fixture(const char* name) {
  return std::filesystem::path(TDIAG_SOURCE_DIR) / "tests" / "data" / "trace" / name;
}

TEST(DiffAnalysis, LeakingSiteGrowsBetweenSnapshots) {
  const auto a = import_snapshot_file(fixture("leaking_train_snapshot_short.pickle")).trace;
  const auto b = import_snapshot_file(fixture("leaking_train_snapshot.pickle")).trace;
  const auto r = diff_traces(a, b);
  ASSERT_FALSE(r.sites.empty());
  EXPECT_EQ(r.sites[0].key, "train.py:42 (train_step)");
  EXPECT_EQ(r.sites[0].a, 4 * (2 << 20));
  EXPECT_EQ(r.sites[0].b, 8 * (2 << 20));
  EXPECT_EQ(r.sites[0].delta(), 4 * (2 << 20));
  EXPECT_EQ(r.sites.size(), 1u); // nothing else changed
  EXPECT_EQ(r.live_b - r.live_a, 4 * (2 << 20));
  const auto report = diff_report(a, b, r);
  EXPECT_EQ(report.diagnostics.at(1).code, "TDIAG-TR-231");
}

TEST(DiffAnalysis, KernelsBetweenTraces) {
  const auto small =
      std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "train_trace_small.json.gz";
  const auto large =
      std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "train_trace_large.json.gz";
  if (!std::filesystem::exists(small) || !std::filesystem::exists(large))
    GTEST_SKIP() << "shared data absent";
  const auto a = import_kineto_file(small).trace;
  const auto b = import_kineto_file(large).trace;
  const auto r = diff_traces(a, b);
  ASSERT_FALSE(r.kernels.empty());
  EXPECT_TRUE(
      r.kernels[0].key.starts_with("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8"));
  EXPECT_EQ(r.kernels[0].count_a, 18u);
  EXPECT_EQ(r.kernels[0].count_b, 720u);
  EXPECT_EQ(r.peak_allocated_b, 1221156352);
}

} // namespace

namespace {
// A snapshot whose dump holds none of the allocation its events leave open: diff's live figure
// follows the dump (0 B) and says so in the warning leaks gives (it said "0 B -> 0 B" alone).
TEST(DiffAnalysis, ADumpItsHistoryDisagreesWithIsSaid) {
  auto t = test::snapshot_with_open_allocation(false);
  t.metadata.source_path = "edited.pickle";
  const auto r = diff_traces(t, t);
  EXPECT_EQ(r.live_a, 0);
  EXPECT_EQ(r.disagree_a, (std::pair<std::size_t, std::uint64_t>{1, 1 << 20}));
  const auto report = diff_report(t, t, r);
  std::size_t said = 0;
  for (const auto& d : report.diagnostics)
    said += d.code == "TDIAG-TR-213" ? 1 : 0;
  EXPECT_EQ(said, 2u); // once for A, once for B
}
} // namespace
