// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Launches from several host threads at once: every failure must name its own launch exactly.
// Also built under -DTDIAG_SANITIZE=thread (see docs/assertions.md).
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/launch.hpp>

#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "test_kernels.h"
#include "test_support.h"

using namespace tdiag;

class Launch : public tdiag::test::AssertionsFixture {};

TEST_F(Launch, AttributionIsExactWithEightHostThreadsAndStreams) {
  auto config = quiet();
  config.records = 1024;
  reset(config);
  auto cpu = assertions::cpu_backend::shared();
  constexpr int threads = 8, launches = 8;
  std::vector<stream_handle> streams;
  for (int t = 0; t < threads; ++t)
    streams.push_back(cpu->create_stream(0));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < launches; ++i)
        launch(marker_kernel, i + 1, 1, static_cast<std::size_t>(16 * t),
               streams[t])(static_cast<long long>(100 * t + i));
    });
  for (auto& w : workers)
    w.join();

  const auto events = assertions::take_failure_events();
  ASSERT_EQ(events.size(), static_cast<std::size_t>(threads * launches * (launches + 1) / 2));
  std::map<int, std::uint64_t> host_thread_of;
  std::map<std::uint64_t, int> blocks_seen; // launch id -> failures
  for (const auto& e : events) {
    const auto marker = static_cast<long long>(e.record.values[0]);
    const int t = static_cast<int>(marker / 100), i = static_cast<int>(marker % 100);
    ASSERT_TRUE(e.launch.has_value());
    EXPECT_EQ(e.launch->launch_id, e.record.launch_id);
    EXPECT_EQ(e.launch->grid.x, static_cast<unsigned>(i + 1)) << marker;
    EXPECT_EQ(e.launch->shared_memory, static_cast<std::uint64_t>(16 * t)) << marker;
    EXPECT_EQ(e.launch->stream, reinterpret_cast<std::uintptr_t>(streams[t])) << marker;
    auto [it, inserted] = host_thread_of.emplace(t, e.launch->host_thread);
    EXPECT_EQ(it->second, e.launch->host_thread) << marker;
    ++blocks_seen[e.record.launch_id];
  }
  EXPECT_EQ(host_thread_of.size(), static_cast<std::size_t>(threads));
  EXPECT_EQ(blocks_seen.size(), static_cast<std::size_t>(threads * launches));
  for (auto s : streams)
    cpu->destroy_stream(0, s);
}

TEST_F(Launch, TemplateKernelsWithCommasAndDeviceFunctions) {
  TDIAG_LAUNCH((marker_kernel), dim3(2, 1, 1), dim3(1, 1, 1), 0, nullptr, 7LL);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(tdiag::test::string_field(r->diagnostics.at(0), "kernel"), "marker_kernel");
  EXPECT_EQ(tdiag::test::int_field(r->diagnostics.at(0), "site_failures"), 2);
}
