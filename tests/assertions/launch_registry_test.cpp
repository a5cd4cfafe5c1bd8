// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/assertions/launch_registry.hpp>

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using tdiag::assertions::launch_info;
using tdiag::assertions::launch_registry;

TEST(LaunchRegistry, IdsStartAtOneAndEntriesRoundTrip) {
  launch_registry registry(8);
  launch_info info;
  info.kernel_name = "k";
  info.grid = {3, 2, 1};
  info.stack.size = 2;
  info.stack.frames[0] = 0x1234;
  info.stack.frames[1] = 0x5678;
  const auto id = registry.record(info);
  EXPECT_EQ(id, 1u);
  const auto found = registry.find(id);
  ASSERT_TRUE(found.has_value());
  EXPECT_STREQ(found->kernel_name, "k");
  EXPECT_EQ(found->grid, (tdiag::extent3{3, 2, 1}));
  EXPECT_EQ(found->stack.size, 2u);
  EXPECT_EQ(found->stack.frames[1], 0x5678u);
  EXPECT_FALSE(registry.find(0).has_value());
  EXPECT_FALSE(registry.find(2).has_value());
}

TEST(LaunchRegistry, WrapsAroundKeepingTheNewestLaunches) {
  launch_registry registry(5); // rounded up to 8
  EXPECT_EQ(registry.capacity(), 8u);
  for (int i = 0; i < 20; ++i) {
    launch_info info;
    info.line = static_cast<std::uint32_t>(i);
    registry.record(info);
  }
  for (std::uint64_t id = 1; id <= 12; ++id)
    EXPECT_FALSE(registry.find(id).has_value()) << id;
  for (std::uint64_t id = 13; id <= 20; ++id) {
    const auto found = registry.find(id);
    ASSERT_TRUE(found.has_value()) << id;
    EXPECT_EQ(found->line, id - 1);
  }
}

TEST(LaunchRegistry, ConcurrentWritersGetDistinctIds) {
  launch_registry registry(1024);
  std::vector<std::thread> threads;
  std::vector<std::vector<std::uint64_t>> ids(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        launch_info info;
        info.device = t;
        ids[t].push_back(registry.record(info));
      }
    });
  for (auto& th : threads)
    th.join();
  std::vector<bool> seen(801, false);
  for (int t = 0; t < 8; ++t)
    for (auto id : ids[t]) {
      ASSERT_LE(id, 800u);
      EXPECT_FALSE(seen[id]);
      seen[id] = true;
      EXPECT_EQ(registry.find(id)->device, t);
    }
}
