// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CPU back-end's scenarios on a CUDA GPU (label gpu). Skipped with a reason when no device.
#include <tensordiag/assertions/cuda_backend.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "gpu_support.h"
#include "test_kernels.h"
#include "test_support.h"

using namespace tdiag;
using tdiag::test::device_array;
using tdiag::test::field_of;
using tdiag::test::Gpu;
using tdiag::test::int_field;
using tdiag::test::string_field;
using tdiag::test::triple;
using ::testing::HasSubstr;

namespace {

__global__ void square_kernel(const int* in, int* out, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    out[i] = in[i] * in[i];
}

} // namespace

TEST_F(Gpu, SingleFailingThread) {
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  try {
    synchronize_and_check();
    FAIL() << "expected a device_assertion_error";
  } catch (const device_assertion_error& e) {
    const auto& d = e.report().diagnostics.at(0);
    EXPECT_EQ(field_of(d, "thread"), triple(0, 0, 0));
    EXPECT_EQ(string_field(d, "backend"), "cuda");
    EXPECT_EQ(string_field(d, "kernel"), "always_fail_kernel");
    EXPECT_THAT(d.message, HasSubstr("launch #"));
  }
}

TEST_F(Gpu, OneChosenThreadInA1024By128Grid) {
  device_array<int> done(1);
  launch(fail_at_kernel, 1024, 128)(937u, 29u, done.data);
  cudaDeviceSynchronize();
  EXPECT_EQ(done.get()[0], 1024 * 128 - 1);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  const auto& d = r->diagnostics.at(0);
  EXPECT_EQ(field_of(d, "block"), triple(937, 0, 0));
  EXPECT_EQ(field_of(d, "thread"), triple(29, 0, 0));
  EXPECT_EQ(int_field(d, "total_failures"), 1);
  EXPECT_EQ(int_field(d, "lane"), 29);
}

TEST_F(Gpu, EveryThreadFailsWithExactTotals) {
  launch(every_thread_fails_kernel, 1024, 128)(-1);
  cudaDeviceSynchronize();
  const auto totals = assertions::pending();
  EXPECT_EQ(totals.total, 131072u);
  EXPECT_EQ(totals.records + totals.dropped, 131072u);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(int_field(r->diagnostics.at(0), "site_failures"), 131072);
}

TEST_F(Gpu, ValuesAndDedup) {
  launch(values_kernel, 1, 1)(17, 16, 1.5f, -2.25, true, nullptr, 1ull << 40);
  launch(two_sites_kernel, 2, 32)();
  cudaDeviceSynchronize();
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->diagnostics.size(), 3u);
  EXPECT_THAT(r->diagnostics[0].message,
              HasSubstr("index 17 not below 16 (x=1.5, y=-2.25, flag=true"));
  EXPECT_EQ(int_field(r->diagnostics[1], "site_failures"), 32);
  EXPECT_EQ(int_field(r->diagnostics[2], "site_failures"), 22);
}

TEST_F(Gpu, AcknowledgeAndFailAgainWithAUsableContext) {
  TDIAG_LAUNCH(always_fail_kernel, 1, 1, 0, nullptr);
  EXPECT_THROW(synchronize_and_check(), device_assertion_error);
  device_array<int> in(1000, 7), out(1000);
  launch(square_kernel, 4, 256)(in.data, out.data, 1000);
  EXPECT_NO_THROW(synchronize_and_check());
  for (int v : out.get())
    ASSERT_EQ(v, 49);
  TDIAG_LAUNCH(always_fail_kernel, 1, 3, 0, nullptr);
  EXPECT_THROW(synchronize_and_check(), device_assertion_error);
}

TEST_F(Gpu, BarrierAfterAStoppedThread) {
  for (unsigned victim : {0u, 5u, 31u, 32u, 255u}) {
    device_array<int> out(256);
    launch(barrier_kernel, 1, 256)(victim, out.data);
    cudaDeviceSynchronize();
    tdiag::test::expect_barrier_output(out.get(), victim);
    auto r = take_failures();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(field_of(r->diagnostics.at(0), "thread"), triple(victim, 0, 0));
  }
}

TEST_F(Gpu, EightHostThreadsTimesEightStreamsAttribution) {
  auto config = quiet();
  config.records = 1024;
  reset(config);
  auto be = select_backend();
  std::vector<stream_handle> streams;
  for (int t = 0; t < 8; ++t)
    streams.push_back(be->create_stream(0));
  std::vector<std::thread> workers;
  for (int t = 0; t < 8; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 8; ++i)
        launch(marker_kernel, i + 1, 1, static_cast<std::size_t>(16 * t),
               streams[t])(static_cast<long long>(100 * t + i));
    });
  for (auto& w : workers)
    w.join();
  cudaDeviceSynchronize();
  const auto events = assertions::take_failure_events();
  ASSERT_EQ(events.size(), 8u * 36u);
  for (const auto& e : events) {
    const auto marker = static_cast<long long>(e.record.values[0]);
    ASSERT_TRUE(e.launch.has_value()) << marker;
    EXPECT_EQ(e.launch->grid.x, static_cast<unsigned>(marker % 100 + 1)) << marker;
    EXPECT_EQ(e.launch->stream, reinterpret_cast<std::uintptr_t>(streams[marker / 100])) << marker;
  }
  for (auto s : streams)
    be->destroy_stream(0, s);
}

// Host threads sharing one stream take launch ids in one order and may launch in the other; the
// slots go round many times (1,200 launches, 223 normal slots), and each failure must still name
// its own launch (grid.x = thread + 1, the marker names the thread).
TEST_F(Gpu, FourHostThreadsOnOneStreamAttribution) {
  auto config = quiet();
  config.records = 256;
  reset(config);
  auto be = select_backend();
  const stream_handle stream = be->create_stream(0);
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        const bool fail = i % 50 == 49;
        launch(marker_kernel, t + 1, 1, 0,
               stream)(fail ? static_cast<long long>(1000 * t + i) : -1LL);
      }
    });
  for (auto& w : workers)
    w.join();
  cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  const auto events = assertions::take_failure_events();
  ASSERT_EQ(events.size(), 6u * (1 + 2 + 3 + 4)); // 6 failing launches a thread, t + 1 blocks
  for (const auto& e : events) {
    const auto marker = static_cast<long long>(e.record.values[0]);
    ASSERT_TRUE(e.launch.has_value()) << marker;
    EXPECT_EQ(e.launch->grid.x, static_cast<unsigned>(marker / 1000 + 1)) << marker;
    EXPECT_EQ(e.launch->stream, reinterpret_cast<std::uintptr_t>(stream)) << marker;
  }
  be->destroy_stream(0, stream);
}

// A plain launch whose dynamic shared memory size decodes as a slot is not taken for that slot's
// tensordiag launch: tdiag::launch recorded a different size with the slot (here the tdiag
// launches use no shared memory, so their sizes are the slot numbers themselves).
TEST_F(Gpu, PlainLaunchWithAnOddSharedSizeIsNotCreditedToASlot) {
  for (int i = 0; i < 300; ++i)
    TDIAG_LAUNCH(marker_kernel, 1, 1, 0, nullptr, -1LL); // every slot
  ASSERT_NO_THROW(synchronize_and_check());
  for (unsigned bytes : {256u + 1, 1024u + 7, 2048u + 100}) {
    always_fail_kernel<<<1, 2, bytes>>>();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    auto r = take_failures();
    ASSERT_TRUE(r.has_value()) << bytes;
    EXPECT_THAT(r->diagnostics.at(0).message, HasSubstr("unregistered launch")) << bytes;
  }
}

TEST_F(Gpu, PlainTripleChevronLaunchStillRecords) {
  // Into the bound buffer (gpu_fresh_process_test.cu covers the process's very first launch, which
  // records into the module's fallback storage).
  TDIAG_LAUNCH(marker_kernel, 1, 1, 0, nullptr, -1LL);
  ASSERT_NO_THROW(synchronize_and_check());
  always_fail_kernel<<<1, 2>>>();
  cudaDeviceSynchronize();
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(int_field(r->diagnostics.at(0), "site_failures"), 2);
  EXPECT_THAT(r->diagnostics[0].message, HasSubstr("unregistered launch"));
}
