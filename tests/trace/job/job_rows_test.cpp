// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// HTA's kernel classes, its whole-us rounding and its last-step filtering, through the public
// API on hand-written Kineto JSON.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <gtest/gtest.h>

#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::test::as_bytes;

TEST(JobRows, KernelClassesFollowHta) {
  EXPECT_EQ(classify_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"), kernel_class::communication);
  EXPECT_EQ(classify_kernel("void foo<ncclKernel>()"), kernel_class::communication);
  EXPECT_EQ(classify_kernel("hipMemcpyWithStream"), kernel_class::communication); // ^hip first
  EXPECT_EQ(classify_kernel("Memcpy HtoD (Pageable -> Device)"), kernel_class::memory);
  EXPECT_EQ(classify_kernel("Memset (Device)"), kernel_class::memory);
  EXPECT_EQ(classify_kernel("ampere_sgemm_128x64_nn"), kernel_class::computation);
  EXPECT_EQ(classify_kernel("Stream Sync"), kernel_class::other);
  EXPECT_EQ(classify_kernel("cudaLaunchKernel"), kernel_class::other);
  EXPECT_EQ(classify_kernel("my_dma_kernel"), kernel_class::other); // .*dma is not computation
}

// Two steps; the second (last) is dropped with everything launched in it. A kernel of 0.4 us
// that crosses no whole us gets HTA's duration -1 us.
constexpr std::string_view two_steps = R"({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
  "ts": 100.5, "dur": 100},
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "pid": 1, "tid": 1,
  "ts": 200.5, "dur": 100},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 110.2, "dur": 3.1, "args": {"correlation": 5}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 120.0, "dur": 2.0, "args": {"correlation": 6}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 210.0, "dur": 2.0, "args": {"correlation": 7}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 130.25, "dur": 20.5,
  "args": {"stream": 7, "correlation": 5}},
 {"ph": "X", "cat": "kernel", "name": "tiny", "pid": 0, "tid": 7, "ts": 160.3, "dur": 0.4,
  "args": {"stream": 7, "correlation": 6}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 220.0, "dur": 10.0,
  "args": {"stream": 7, "correlation": 7}}
]})";

TEST(JobRows, HtaCompatRoundsAndDropsTheLastStep) {
  const auto loaded = import_kineto(as_bytes(two_steps), "two_steps.json");
  analysis_options compat;
  compat.hta_compat = true;
  const auto hta = analyze_rank(loaded.trace, 0, compat);
  EXPECT_EQ(hta.steps, std::vector<int>{1});
  EXPECT_EQ(hta.gpu_rows, 2u);
  // gemm: ceil(130.25) = 131, floor(150.75) = 150 -> 19 us; tiny: 161 .. 160 -> -1 us.
  ASSERT_EQ(hta.kernels.size(), 2u);
  double gemm = 0, tiny = 0;
  for (const auto& k : hta.kernels)
    (k.name == "gemm" ? gemm : tiny) = k.sum_us;
  EXPECT_DOUBLE_EQ(gemm, 19);
  EXPECT_DOUBLE_EQ(tiny, -1);

  const auto exact = analyze_rank(loaded.trace, 0);
  EXPECT_EQ(exact.steps, (std::vector<int>{1, 2}));
  EXPECT_EQ(exact.gpu_rows, 3u);
  for (const auto& k : exact.kernels) {
    if (k.name == "gemm") {
      EXPECT_DOUBLE_EQ(k.sum_us, 30.5);
    } else {
      EXPECT_DOUBLE_EQ(k.sum_us, 0.4);
    }
  }
}

TEST(JobRows, EpochMicrosecondsKeepTheirNanoseconds) {
  // 1.7e15 us does not fit the model's 2^60 ns; the importer rebases and keeps exact ns.
  constexpr std::string_view epoch = R"({"traceEvents": [
   {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1694039994071317.125,
    "dur": 3.5, "args": {"stream": 7, "correlation": 1}}]})";
  const auto loaded = import_kineto(as_bytes(epoch), "epoch.json");
  ASSERT_EQ(loaded.trace.kernels.size(), 1u);
  const auto& k = loaded.trace.kernels.all().front();
  EXPECT_EQ(k.end - k.start, 3500);
  EXPECT_EQ(loaded.trace.metadata.time_origin_ns + k.start, 1694039994071317125);
}

} // namespace
