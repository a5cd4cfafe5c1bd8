// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "test_kernels.h"
#include "test_support.h"

using namespace tdiag;
using tdiag::test::field_of;
using tdiag::test::int_field;
using tdiag::test::string_field;
using tdiag::test::triple;
using ::testing::HasSubstr;

class Runtime : public tdiag::test::AssertionsFixture {};

TEST_F(Runtime, SingleFailingThreadIsReportedWithItsPlace) {
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 1u);
  const auto& d = r->diagnostics[0];
  EXPECT_EQ(d.code, "TDIAG-DSA-001");
  EXPECT_EQ(field_of(d, "block"), triple(0, 0, 0));
  EXPECT_EQ(field_of(d, "thread"), triple(0, 0, 0));
  EXPECT_EQ(string_field(d, "condition"), "threadIdx.x > 1000000u");
  EXPECT_EQ(string_field(d, "kernel"), "always_fail_kernel");
  EXPECT_EQ(int_field(d, "site_failures"), 1);
  EXPECT_EQ(int_field(d, "total_failures"), 1);
  EXPECT_EQ(d.location.line, always_fail_line);
  EXPECT_THAT(d.location.file, HasSubstr("test_kernels.h"));
  EXPECT_THAT(d.message,
              HasSubstr("assertion failed: threadIdx.x > 1000000u in always_fail_kernel"));
  EXPECT_THAT(d.message, HasSubstr("launched from"));
  EXPECT_THAT(d.message, HasSubstr("runtime_test.cpp"));
  EXPECT_FALSE(take_failures().has_value());
}

TEST_F(Runtime, OneChosenThreadInA1024By128Grid) {
  std::vector<int> done(1, 0);
  launch(fail_at_kernel, 1024, 128)(937u, 29u, done.data());
  EXPECT_EQ(done[0], 1024 * 128 - 1);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 1u);
  const auto& d = r->diagnostics[0];
  EXPECT_EQ(field_of(d, "block"), triple(937, 0, 0));
  EXPECT_EQ(field_of(d, "thread"), triple(29, 0, 0));
  EXPECT_EQ(int_field(d, "total_failures"), 1);
  EXPECT_EQ(field_of(d, "grid"), triple(1024, 1, 1));
  EXPECT_EQ(field_of(d, "block_dim"), triple(128, 1, 1));
  EXPECT_THAT(d.message, HasSubstr("thread 29 of block 937 is the chosen one"));
  EXPECT_THAT(d.message, HasSubstr("block (937,0,0) thread (29,0,0)"));
  EXPECT_FALSE(d.stack.empty());
}

TEST_F(Runtime, EveryThreadOfA1024By128GridFailsWithExactCounts) {
  launch(every_thread_fails_kernel, 1024, 128)(-1);
  const auto totals = assertions::pending();
  EXPECT_EQ(totals.total, 131072u);
  EXPECT_EQ(totals.records, 64u);
  EXPECT_EQ(totals.dropped, 131072u - 64u);
  EXPECT_EQ(totals.in_flight, 0u);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 1u);
  const auto& d = r->diagnostics[0];
  EXPECT_EQ(int_field(d, "site_failures"), 131072);
  EXPECT_EQ(int_field(d, "dropped_records"), 131072 - 64);
  EXPECT_THAT(d.message, HasSubstr("index 0 not below -1 (TDIAG_CHECK_INDEX(i, n))"));
  EXPECT_THAT(d.message, HasSubstr("and 131,071 more failures at this site"));
}

TEST_F(Runtime, ValuesAreCapturedTypedAndFormatted) {
  int target = 0;
  launch(values_kernel, 1, 1)(17, 16, 1.5f, -2.25, true, &target, 1ull << 40);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  const auto& d = r->diagnostics.at(0);
  EXPECT_EQ(int_field(d, "value i"), 17);
  EXPECT_EQ(int_field(d, "value n"), 16);
  EXPECT_EQ(std::get<double>(field_of(d, "value x").value), 1.5);
  EXPECT_EQ(std::get<double>(field_of(d, "value y").value), -2.25);
  EXPECT_EQ(std::get<bool>(field_of(d, "value flag").value), true);
  EXPECT_EQ(int_field(d, "value big"), 1ll << 40);
  EXPECT_EQ(string_field(d, "value p"),
            fmt::format("{:#x}", reinterpret_cast<std::uintptr_t>(&target)));
  EXPECT_THAT(d.message,
              HasSubstr(fmt::format(
                  "index 17 not below 16 (x=1.5, y=-2.25, flag=true, p={}, big={}) (i < n)",
                  static_cast<const void*>(&target), 1ull << 40)));
}

TEST_F(Runtime, ComparisonFormsReportBothSides) {
  const char* expected[] = {"expected a == b, got 3 vs 4 (TDIAG_ASSERT_EQ(a, b))",
                            "expected a != b, got 4 vs 4 (TDIAG_ASSERT_NE(a, b))",
                            "expected a < b, got 5 vs 4 (TDIAG_ASSERT_LT(a, b))",
                            "expected a <= b, got 5 vs 4 (TDIAG_ASSERT_LE(a, b))",
                            "expected a > b, got 3 vs 4 (TDIAG_ASSERT_GT(a, b))",
                            "expected a >= b, got 3 vs 4 (TDIAG_ASSERT_GE(a, b))",
                            "index -3 is negative (TDIAG_CHECK_INDEX(a, b))"};
  const int a[] = {3, 4, 5, 5, 3, 3, -3};
  for (int which = 0; which < 7; ++which) {
    launch(compare_kernel, 1, 1)(which, a[which], 4);
    auto r = take_failures();
    ASSERT_TRUE(r.has_value()) << which;
    EXPECT_THAT(r->diagnostics.at(0).message, HasSubstr(expected[which]));
  }
}

TEST_F(Runtime, FailuresAreDeduplicatedPerSite) {
  launch(two_sites_kernel, 2, 32)();
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 2u);
  // Even threads fail at the first site (16 per block); odd threads >= 10 at the second (11).
  EXPECT_EQ(int_field(r->diagnostics[0], "site_failures"), 32);
  EXPECT_EQ(int_field(r->diagnostics[1], "site_failures"), 22);
  EXPECT_EQ(int_field(r->diagnostics[0], "total_failures"), 54);
  EXPECT_THAT(r->diagnostics[0].message, HasSubstr("and 31 more failures at this site"));
  EXPECT_THAT(r->diagnostics[1].message, HasSubstr("expected threadIdx.x < 10u, got 11 vs 10"));
}

TEST_F(Runtime, AcknowledgedFailuresAreNotReportedAgainButNewOnesAre) {
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  EXPECT_THROW(check(), device_assertion_error);
  EXPECT_NO_THROW(check());
  TDIAG_LAUNCH(always_fail_kernel, 1, 2, 0, nullptr);
  try {
    synchronize_and_check();
    FAIL() << "expected a device_assertion_error";
  } catch (const device_assertion_error& e) {
    ASSERT_EQ(e.report().diagnostics.size(), 1u);
    EXPECT_EQ(int_field(e.report().diagnostics[0], "site_failures"), 2);
    EXPECT_EQ(field_of(e.report().diagnostics[0], "block_dim"), triple(2, 1, 1));
  }
  EXPECT_NO_THROW(check());
}

TEST_F(Runtime, RingIsReusedAfterAcknowledgement) {
  for (int round = 0; round < 5; ++round) {
    launch(every_thread_fails_kernel, 1, 50)(0);
    const auto events = assertions::take_failure_events();
    ASSERT_EQ(events.size(), 50u) << round;
    for (const auto& e : events)
      EXPECT_EQ(e.record.thread[0], e.claim % 50);
  }
}

TEST_F(Runtime, HandlerReplacesTheException) {
  int calls = 0;
  assertions::set_failure_handler([&](const report& r) {
    ++calls;
    EXPECT_EQ(r.diagnostics.size(), 1u);
  });
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  EXPECT_NO_THROW(check());
  EXPECT_EQ(calls, 1);
}

TEST_F(Runtime, BarrierAfterAStoppedThreadDoesNotDeadlock) {
  for (unsigned victim : {0u, 5u, 31u, 32u, 255u}) {
    std::vector<int> out(256, 0);
    launch(barrier_kernel, 1, 256)(victim, out.data());
    EXPECT_EQ(out[victim], 0);
    tdiag::test::expect_barrier_output(out, victim);
    auto r = take_failures();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(field_of(r->diagnostics.at(0), "thread"), triple(victim, 0, 0));
  }
}

TEST_F(Runtime, LaunchRegistryWrapAroundIsReported) {
  auto config = quiet();
  config.launches = 4;
  reset(config);
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  for (int i = 0; i < 8; ++i)
    launch(every_thread_fails_kernel, 1, 1)(1); // no failure
  launch(every_thread_fails_kernel, 1, 1)(0);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 2u);
  EXPECT_THAT(r->diagnostics[0].message, HasSubstr("no longer in the launch registry"));
  EXPECT_THAT(r->diagnostics[0].message, HasSubstr("TDIAG_LAUNCH_RECORDS"));
  EXPECT_THAT(r->diagnostics[1].message, HasSubstr("of every_thread_fails_kernel"));
}

TEST_F(Runtime, WatchdogReportsWhileTheKernelStillSpins) {
  spin_release = false;
  std::atomic<int> reports{0};
  assertions::set_failure_handler([&](const report& r) {
    if (!r.diagnostics.empty() &&
        r.diagnostics[0].message.find("failed while the kernel keeps running") != std::string::npos)
      ++reports;
    spin_release = true;
  });
  assertions::start_watchdog(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  launch(spinning_kernel, 1, 2)();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  assertions::stop_watchdog();
  EXPECT_EQ(reports.load(), 1);
  EXPECT_LT(elapsed, std::chrono::seconds(5)); // released by the watchdog, not by the time-out
}

TEST_F(Runtime, BadLaunchConfigurationIsADiagnostic) {
  struct bad {
    unsigned grid, block;
    std::size_t smem;
    const char* text;
  } cases[] = {{1, 2048, 0, "block.x = 2048 exceeds the limit 1024"},
               {0, 32, 0, "grid.x is 0"},
               {1, 32, 1u << 20, "1048576 bytes of dynamic shared memory exceed the limit 49152"}};
  for (const auto& c : cases) {
    try {
      launch(always_fail_kernel, c.grid, c.block, c.smem)();
      FAIL() << c.text;
    } catch (const error& e) {
      ASSERT_EQ(e.report().diagnostics.size(), 1u);
      EXPECT_EQ(e.report().diagnostics[0].code, "TDIAG-DSA-101");
      EXPECT_THAT(e.report().diagnostics[0].message, HasSubstr(c.text));
    }
  }
  EXPECT_FALSE(take_failures().has_value()); // nothing ran
}

TEST_F(Runtime, TrapPolicyAbortsTheLaunchWithTheFullReport) {
  auto config = quiet();
  config.failure_policy = assertions::policy::trap;
  reset(config);
  std::vector<int> blocks(1, 0);
  try {
    launch(multi_block_trap_kernel, 4, 8)(blocks.data());
    FAIL() << "expected a device_assertion_error";
  } catch (const device_assertion_error& e) {
    const auto& d = e.report().diagnostics.at(0);
    EXPECT_EQ(field_of(d, "block"), triple(1, 0, 0));
    EXPECT_EQ(string_field(d, "policy"), "trap");
    EXPECT_THAT(d.message, HasSubstr("block 1 traps"));
  }
  EXPECT_EQ(blocks[0], 2); // blocks 2 and 3 never ran
}

TEST_F(Runtime, FailureWithTheRuntimeDisabledIsStillLoud) {
  auto config = quiet();
  config.enabled = false;
  reset(config);
  try {
    launch(always_fail_kernel, 1, 1)();
    FAIL() << "expected a device_assertion_error";
  } catch (const device_assertion_error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-DSA-002");
  }
}

TEST_F(Runtime, ReportIsAlsoWrittenAsJsonWithEveryField) {
  const std::string path = std::string(TDIAG_BINARY_DIR) + "/assertions_runtime_report.json";
  auto config = quiet();
  config.report_path = path;
  reset(config);
  TDIAG_LAUNCH(every_thread_fails_kernel, 2, 8, 0, nullptr, 3);
  EXPECT_THROW(check(), device_assertion_error);
  const report r = read_report_file(path);
  ASSERT_EQ(r.diagnostics.size(), 1u);
  const auto& d = r.diagnostics[0];
  for (const char* name : {"condition",      "function",        "file",
                           "line",           "value i",         "value n",
                           "block",          "thread",          "sm",
                           "lane",           "launch_id",       "kernel",
                           "grid",           "block_dim",       "shared_memory",
                           "stream",         "device",          "launch_site",
                           "backend",        "site_failures",   "more_failures_at_site",
                           "total_failures", "dropped_records", "policy",
                           "runtime_enabled"})
    EXPECT_NE(d.find_field(name), nullptr) << name;
  EXPECT_EQ(int_field(d, "site_failures"), 13);
  EXPECT_FALSE(d.stack.empty());
  EXPECT_FALSE(d.related.empty());
  std::remove(path.c_str());
}
