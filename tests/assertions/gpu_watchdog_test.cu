// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The watchdog reports a failure while its kernel is still running (label gpu): the kernel spins
// on a host-mapped flag that only the failure handler releases, so the test can only finish if
// the report arrived before the kernel ended.
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "gpu_support.h"

using namespace tdiag;
using tdiag::test::Gpu;
using ::testing::HasSubstr;

namespace {

// Thread 0 fails; thread 32 (another warp) spins until *release != 0, or 10 s of device time.
__global__ void gpu_spinning_kernel(const volatile int* release, int* timed_out) {
  if (threadIdx.x == 0)
    TDIAG_ASSERT(false, "failed while the kernel keeps running");
  if (threadIdx.x == 32) {
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      __nanosleep(1000);
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*release == 0 && now - start < 10'000'000'000ull);
    *timed_out = *release == 0 ? 1 : 0;
  }
}

} // namespace

TEST_F(Gpu, WatchdogReportsASpinningKernel) {
  int* host = nullptr; // [0] release, [1] timed out
  ASSERT_EQ(cudaHostAlloc(reinterpret_cast<void**>(&host), 2 * sizeof(int), cudaHostAllocMapped),
            cudaSuccess);
  host[0] = 0;
  host[1] = -1;
  int* dev = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev), host, 0), cudaSuccess);

  std::atomic<bool> reported{false};
  std::string message;
  auto config = quiet();
  config.watchdog_ms = 10;
  reset(config);
  assertions::set_failure_handler([&](const report& r) {
    message = r.diagnostics.empty() ? "" : r.diagnostics[0].message;
    reported = true;
    *static_cast<volatile int*>(&host[0]) = 1; // release the kernel only now
  });
  auto be = select_backend();
  const stream_handle stream = be->create_stream(0);
  const auto start = std::chrono::steady_clock::now();
  launch(gpu_spinning_kernel, 1, 64, 0, stream)(dev, dev + 1);
  while (!reported && std::chrono::steady_clock::now() - start < std::chrono::seconds(15))
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), cudaSuccess);
  EXPECT_TRUE(reported.load());
  EXPECT_EQ(host[1], 0) << "the kernel ended by timeout: the report came only after it finished";
  EXPECT_THAT(message, HasSubstr("failed while the kernel keeps running"));
  EXPECT_THAT(message, HasSubstr("gpu_spinning_kernel"));
  be->destroy_stream(0, stream);
  reset(quiet()); // stops the watchdog before the handler's captures go away
  cudaFreeHost(host);
}
