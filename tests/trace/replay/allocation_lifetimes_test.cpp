// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected figures from Python (pickle / json + gzip): pairing each alloc with the next
// free_completed (snapshot) or negative-Bytes [memory] event (Kineto) of its address.
#include <tensordiag/trace/allocation_lifetimes.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>

namespace {

using namespace tdiag::trace;

std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

TEST(AllocationLifetimes, SnapshotAllocsEndAtFreeCompleted) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const auto lifetimes = allocation_lifetimes(t, 0);
  ASSERT_EQ(lifetimes.size(), 2049u);
  std::size_t alive = 0;
  for (const auto& a : lifetimes) {
    ASSERT_LE(a.begin, a.end);
    ASSERT_EQ(t.memory.all()[a.alloc_event].action, memory_action::alloc);
    if (a.alive_at_end) {
      ++alive;
      EXPECT_FALSE(a.freed_by_user);
      EXPECT_EQ(a.end, t.span().end);
    } else {
      EXPECT_TRUE(a.freed_by_user);
      EXPECT_EQ(t.memory.all()[a.free_event].action, memory_action::free_completed);
      EXPECT_EQ(t.memory.all()[a.free_event].address, a.address);
    }
  }
  // The dump's 147 active_allocated blocks, all allocated inside the history.
  EXPECT_EQ(alive, 147u);
}

TEST(AllocationLifetimes, KinetoPlainFreesEndThem) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_kineto_file(path).trace;
  const auto lifetimes = allocation_lifetimes(t, 0);
  ASSERT_EQ(lifetimes.size(), 489u);
  for (const auto& a : lifetimes)
    ASSERT_FALSE(a.alive_at_end) << a.address; // every alloc of the window is freed in it
  EXPECT_TRUE(allocation_lifetimes(t, 5).empty());
}

} // namespace
