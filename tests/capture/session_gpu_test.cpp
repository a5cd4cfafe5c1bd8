// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// GPU: the linked capture session (tdiag::capture::start/stop) in this process. CUPTI kernel
// durations against cudaEvent timings, the assertion-runtime hooks, and tracing_pool events.
#include <tensordiag/capture/capture.hpp>
#include <tensordiag/capture/tracing_pool.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

// spin_kernel.cu: a kernel that runs `ns` nanoseconds (globaltimer), kept out of this file so
// that nvcc never parses the C++20 trace headers.
extern "C" cudaError_t tdiag_test_spin(unsigned long long ns, cudaStream_t stream);
extern "C" cudaError_t tdiag_test_gate(unsigned long long ns, cudaStream_t stream);

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

fs::path temp_trace(const std::string& name) {
  return fs::temp_directory_path() / (name + "." + std::to_string(getpid()) + ".tdtrace");
}

options test_options(const fs::path& out, bool stacks) {
  options o;
  o.output = out.string();
  o.stacks = stacks;
  return o;
}

TEST(SessionGpu, KernelDurationsMatchCudaEvents) {
  if (!have_gpu())
    GTEST_SKIP() << "no CUDA device";
  const auto out = temp_trace("durations");
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_EQ(tdiag_test_spin(1000, stream), cudaSuccess); // warm-up, before capture
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  ASSERT_TRUE(start(test_options(out, false)));
  const std::vector<unsigned long long> targets_us = {100, 250, 500, 1000, 2000};
  std::vector<double> event_ns;
  for (auto us : targets_us)
    for (int rep = 0; rep < 4; ++rep) {
      cudaEvent_t before, after;
      cudaEventCreate(&before);
      cudaEventCreate(&after);
      // The gate keeps the GPU busy while the events and the kernel are queued behind it, so the
      // events time the kernel and not the host's launch latency (tens of us under CUPTI).
      tdiag_test_gate(200 * 1000, stream);
      cudaEventRecord(before, stream);
      tdiag_test_spin(us * 1000, stream);
      cudaEventRecord(after, stream);
      ASSERT_EQ(cudaEventSynchronize(after), cudaSuccess);
      float ms = 0;
      cudaEventElapsedTime(&ms, before, after);
      event_ns.push_back(ms * 1e6);
      cudaEventDestroy(before);
      cudaEventDestroy(after);
    }
  stop();
  const auto back = trace::read_tdtrace(out);
  const trace::trace& t = back.loaded.trace;
  std::vector<trace::kernel_event> spins;
  for (const auto& k : t.kernels.all())
    if (t.name(k.name).find("spin_kernel") != std::string_view::npos)
      spins.push_back(k);
  std::sort(spins.begin(), spins.end(),
            [](const auto& a, const auto& b) { return a.start < b.start; });
  ASSERT_EQ(spins.size(), event_ns.size());
  double worst = 0;
  for (std::size_t i = 0; i < spins.size(); ++i) {
    const double cupti = static_cast<double>(spins[i].end - spins[i].start);
    const double deviation = std::abs(cupti - event_ns[i]) / event_ns[i];
    worst = std::max(worst, deviation);
    EXPECT_LE(deviation, 0.05) << "kernel " << i << ": CUPTI " << cupti << " ns, cudaEvent "
                               << event_ns[i] << " ns";
  }
  std::printf("CUPTI vs cudaEvent: worst deviation %.2f%% over %zu kernels of 100 us - 2 ms\n",
              worst * 100, spins.size());
  cudaStreamDestroy(stream);
  fs::remove(out);
}

TEST(SessionGpu, AssertionHooksReachTheTrace) {
  if (!have_gpu())
    GTEST_SKIP() << "no CUDA device";
  const auto out = temp_trace("hooks");
  ASSERT_TRUE(start(test_options(out, false)));
  EXPECT_FALSE(start(test_options(out, false))); // a second start changes nothing
  record_launch(4242, "spin_kernel");
  tdiag_test_spin(1000, nullptr);
  tdiag_test_spin(1000, nullptr); // not registered: launch id 0
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::uint32_t block[3] = {1, 0, 0}, thread[3] = {2, 0, 0};
  record_assertion(4242, 0, 0, "k.cu:7: i < n", "i = 9", block, thread);
  stop();
  EXPECT_FALSE(active());
  const auto back = trace::read_tdtrace(out);
  const trace::trace& t = back.loaded.trace;
  std::vector<std::uint64_t> ids;
  for (const auto& k : t.kernels.all())
    if (t.name(k.name).find("spin_kernel") != std::string_view::npos)
      ids.push_back(k.launch_id);
  ASSERT_EQ(ids.size(), 2u);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids[0], 0u);
  EXPECT_EQ(ids[1], 4242u);
  ASSERT_EQ(t.assertions.size(), 1u);
  EXPECT_EQ(t.assertions[0].launch_id, 4242u);
  EXPECT_EQ(t.name(t.assertions[0].site), "k.cu:7: i < n");
  ASSERT_EQ(t.markers.size(), 1u);
  EXPECT_EQ(t.name(t.markers[0].category), "tdiag.launch");
  fs::remove(out);
}

TEST(SessionGpu, TracingPoolRecordsEveryAllocationWithItsStack) {
  if (!have_gpu())
    GTEST_SKIP() << "no CUDA device";
  const auto out = temp_trace("tracing_pool");
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  ASSERT_TRUE(start(test_options(out, true)));
  tracing_pool pool;
  constexpr int n = 16;
  std::vector<void*> blocks;
  for (int i = 0; i < n; ++i)
    blocks.push_back(pool.allocate(std::size_t{1} << (12 + i % 8), stream));
  EXPECT_EQ(pool.stats().allocations, std::uint64_t{n});
  for (int i = 0; i < n; ++i)
    pool.deallocate(blocks[i], std::size_t{1} << (12 + i % 8), stream);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(pool.stats().live_bytes, 0u);
  stop();
  const auto back = trace::read_tdtrace(out);
  const trace::trace& t = back.loaded.trace;
  int tagged_allocs = 0, tagged_frees = 0, with_stack = 0, cupti_allocs = 0;
  for (const auto& m : t.memory.all()) {
    if (t.name(t.detail_of(m).user_metadata) == "tracing_pool") {
      tagged_allocs += m.action == trace::memory_action::alloc;
      tagged_frees += m.action == trace::memory_action::free_requested;
      with_stack += m.stack != trace::no_stack;
    } else {
      cupti_allocs += m.action == trace::memory_action::alloc;
    }
  }
  EXPECT_EQ(tagged_allocs, n);
  EXPECT_EQ(tagged_frees, n);
  EXPECT_EQ(with_stack, 2 * n);
  EXPECT_EQ(cupti_allocs, n); // CUPTI sees the same stream-ordered allocations
  cudaStreamDestroy(stream);
  fs::remove(out);
}

} // namespace
} // namespace tdiag::capture
