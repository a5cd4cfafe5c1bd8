// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A failing assertion inside a CUDA graph replay (label gpu): the captured launch keeps a launch
// slot of its own, so every replay is attributed to the captured kernel and marked as a replay,
// with the capture sequence and the graph it was captured into.
#include <tensordiag/assertions/launch.hpp>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "gpu_support.h"
#include "test_kernels.h"

using namespace tdiag;
using tdiag::test::field_of;
using tdiag::test::Gpu;
using tdiag::test::int_field;
using tdiag::test::string_field;
using ::testing::HasSubstr;

namespace {
__global__ void graph_fill_kernel(int* out, int n, int value) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    out[i] = value;
}
} // namespace

TEST_F(Gpu, GraphReplayNamesTheCapturedKernelNode) {
  auto be = select_backend();
  const stream_handle stream = be->create_stream(0);
  const auto s = static_cast<cudaStream_t>(stream);
  tdiag::test::device_array<int> out(256);
  // A normal launch first, so the failure buffer is bound before the capture starts.
  launch(graph_fill_kernel, 1, 256, 0, stream)(out.data, 256, 1);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
  TDIAG_LAUNCH(marker_kernel, 2, 1, 0, stream, 4242LL);
  launch(graph_fill_kernel, 1, 256, 0, stream)(out.data, 256, 7);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  EXPECT_FALSE(take_failures().has_value()) << "capturing runs nothing";

  for (int replay = 0; replay < 3; ++replay) {
    // Ordinary launches in between recycle the ordinary slots; the graph's slot must survive.
    for (int i = 0; i < 300; ++i)
      launch(graph_fill_kernel, 1, 256, 0, stream)(out.data, 256, i);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    auto r = take_failures();
    ASSERT_TRUE(r.has_value()) << "replay " << replay;
    const auto& d = r->diagnostics.at(0);
    EXPECT_EQ(string_field(d, "kernel"), "marker_kernel");
    EXPECT_EQ(int_field(d, "site_failures"), 2);
    EXPECT_NE(d.find_field("graph_replay"), nullptr);
    EXPECT_THAT(d.message, HasSubstr("CUDA graph replay"));
    EXPECT_THAT(d.message, HasSubstr("marker 4242"));
    EXPECT_EQ(out.get()[0], 7) << "the graph's other node ran";
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  be->destroy_stream(0, stream);
}

namespace {
__global__ void graph_gather_kernel(const int* index, int n, int* out) {
  const int i = index[threadIdx.x];
  TDIAG_CHECK_INDEX(i, n);
  out[threadIdx.x] = i;
}

// One graph_gather_kernel launch (16 entries) captured on `stream`, instantiated.
void capture_gather(stream_handle stream, int* index, int* out, cudaGraph_t* graph,
                    cudaGraphExec_t* exec) {
  const auto s = static_cast<cudaStream_t>(stream);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  TDIAG_LAUNCH(graph_gather_kernel, 1, 2, 0, stream, index, 16, out);
  ASSERT_EQ(cudaStreamEndCapture(s, graph), cudaSuccess) << "the capture stayed valid";
  ASSERT_EQ(cudaGraphInstantiate(exec, *graph, 0), cudaSuccess);
}
} // namespace

// Issue #24: one capture, two replays over different data; each replay's report has its own
// values and thread, the captured kernel and its launch site.
TEST_F(Gpu, TwoReplaysWithDifferentDataGiveTwoReports) {
  auto be = select_backend();
  const stream_handle stream = be->create_stream(0);
  const auto s = static_cast<cudaStream_t>(stream);
  tdiag::test::device_array<int> index(2), out(2);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_NO_FATAL_FAILURE(capture_gather(stream, index.data, out.data, &graph, &exec));

  const int data[2][2] = {{20, 1}, {2, 33}};
  for (int replay = 0; replay < 2; ++replay) {
    ASSERT_EQ(cudaMemcpy(index.data, data[replay], sizeof(data[0]), cudaMemcpyHostToDevice),
              cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess) << "the context stays usable";
    auto r = take_failures();
    ASSERT_TRUE(r.has_value()) << "replay " << replay;
    const auto& d = r->diagnostics.at(0);
    EXPECT_EQ(string_field(d, "kernel"), "graph_gather_kernel");
    EXPECT_NE(d.find_field("graph_replay"), nullptr);
    EXPECT_EQ(int_field(d, "site_failures"), 1);
    EXPECT_EQ(field_of(d, "thread"), tdiag::test::triple(replay, 0, 0));
    EXPECT_THAT(d.message, HasSubstr(replay == 0 ? "index 20" : "index 33"));
    EXPECT_THAT(d.message, HasSubstr("CUDA graph replay (capture #"));
    EXPECT_THAT(d.message, HasSubstr("gpu_graph_test.cu"));
    EXPECT_GT(int_field(d, "graph_capture_id"), 0) << "the capture sequence is named";
    char graph_text[32];
    std::snprintf(graph_text, sizeof(graph_text), "%p", static_cast<void*>(graph));
    EXPECT_EQ(string_field(d, "graph"), graph_text) << "the graph captured into";
    EXPECT_EQ(out.get()[replay == 0 ? 1 : 0], replay == 0 ? 1 : 2) << "the good thread ran";
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  be->destroy_stream(0, stream);
}

// The captured launch is kept for good: a replay long after capture, once the launch ring has gone
// round many times and configure() has started a new one, still names the kernel and launch site.
TEST_F(Gpu, LateReplayAfterTheRingWentRoundStillNamesTheKernel) {
  auto config = quiet();
  config.launches = 16;
  reset(config);
  auto be = select_backend();
  const stream_handle stream = be->create_stream(0);
  const auto s = static_cast<cudaStream_t>(stream);
  tdiag::test::device_array<int> index(2), out(2);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_NO_FATAL_FAILURE(capture_gather(stream, index.data, out.data, &graph, &exec));
  for (int i = 0; i < 200; ++i)
    launch(graph_fill_kernel, 1, 32, 0, stream)(out.data, 2, i);
  reset(config); // a new launch ring
  const int data[2] = {3, 99};
  ASSERT_EQ(cudaMemcpy(index.data, data, sizeof(data), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  auto r = take_failures();
  ASSERT_TRUE(r.has_value());
  const auto& d = r->diagnostics.at(0);
  EXPECT_EQ(string_field(d, "kernel"), "graph_gather_kernel");
  EXPECT_NE(d.find_field("graph_replay"), nullptr);
  EXPECT_THAT(d.message, HasSubstr("index 99"));
  EXPECT_THAT(d.message, HasSubstr("gpu_graph_test.cu"));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  be->destroy_stream(0, stream);
}
