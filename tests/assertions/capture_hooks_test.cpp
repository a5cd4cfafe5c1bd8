// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The assertion runtime feeds a running capture through the C hooks of
// capture/include/tensordiag/capture/hooks.h, found with dlsym. Here the test program itself
// defines them (exported: ENABLE_EXPORTS), standing in for libtdiag_capture.so.
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "test_kernels.h"
#include "test_support.h"

namespace {
struct seen_launch {
  std::uint64_t id;
  std::string kernel;
};
struct seen_assertion {
  std::uint64_t launch_id;
  std::int32_t device;
  std::string site, message;
  std::uint32_t block[3], thread[3];
};
std::vector<seen_launch> launches;
std::vector<seen_assertion> assertions_seen;
} // namespace

extern "C" __attribute__((visibility("default"))) void
tdiag_capture_record_launch(std::uint64_t launch_id, const char* kernel_name) {
  launches.push_back({launch_id, kernel_name});
}

extern "C" __attribute__((visibility("default"))) void
tdiag_capture_record_assertion(std::uint64_t launch_id, std::int32_t device, std::uint64_t,
                               const char* site, const char* message, const std::uint32_t block[3],
                               const std::uint32_t thread[3]) {
  assertions_seen.push_back({launch_id,
                             device,
                             site,
                             message ? message : "",
                             {block[0], block[1], block[2]},
                             {thread[0], thread[1], thread[2]}});
}

TEST(CaptureHooks, LaunchesAndFailuresReachARunningCapture) {
  tdiag::assertions::configure(tdiag::assertions::runtime_config{}); // looks the hooks up
  launches.clear();
  assertions_seen.clear();
  std::vector<int> done(1, 0);
  TDIAG_LAUNCH(fail_at_kernel, 4, 32, 0, nullptr, 2u, 7u, done.data());
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_NE(launches[0].id, 0u);
  EXPECT_EQ(launches[0].kernel, "fail_at_kernel");
  auto r = tdiag::take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(assertions_seen.size(), 1u);
  const auto& a = assertions_seen[0];
  EXPECT_EQ(a.launch_id, launches[0].id);
  EXPECT_EQ(a.device, 0);
  EXPECT_NE(a.site.find("test_kernels.h:"), std::string::npos) << a.site;
  EXPECT_EQ(a.block[0], 2u);
  EXPECT_EQ(a.thread[0], 7u);
  EXPECT_EQ(a.message, r->diagnostics.at(0).message);
}
