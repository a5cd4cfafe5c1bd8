// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag_assert_fresh_child <scenario>: what a new user's program does, in a process of its own
// (gpu_fresh_process_test.cu runs it), so that its first launch really is the process's first.
// No tensordiag call comes before the scenario's first launch.
//   plain:   a failing kernel launched with <<<>>>, then with cudaLaunchKernel and
//            cudaLaunchKernelEx; each failure is reported by tdiag::check() and the context
//            stays usable.
//   capture: the first tensordiag call is a TDIAG_LAUNCH inside a global-mode stream capture;
//            the graph is replayed twice with different data and each replay is reported.
//   bound:   (run with TDIAG_BIND=cupti) plain launches and graph replays on a user stream,
//            each reported with grid, block, stream and launch line.
//   trap:    (run with TDIAG_ASSERT_POLICY=trap) a trapping TDIAG_LAUNCH; the error reaches the
//            caller as tdiag::device_assertion_error with its values, and so does the next launch.
// Prints "fresh child: <what>" lines and each report's message; exit status 0 when every step
// behaved, 1 at the first that did not, 77 without a CUDA device.
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

__global__ void fresh_gather_kernel(const int* index, int n, int* out) {
  const int i = index[threadIdx.x];
  TDIAG_CHECK_INDEX(i, n);
  out[threadIdx.x] = i;
}

int failed(const char* what) {
  std::printf("fresh child: FAILED: %s\n", what);
  std::fflush(stdout);
  std::_Exit(1);
}

void expect_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("fresh child: %s: %s\n", what, cudaGetErrorName(e));
    failed(what);
  }
}

// tdiag::check() must throw a report naming the site and the values; returns its message.
std::string expect_report(const char* what) {
  try {
    tdiag::check();
  } catch (const tdiag::device_assertion_error& e) {
    std::printf("fresh child: %s: %s\n", what, e.what());
    return e.what();
  }
  failed(what);
  return {};
}

int* device_ints(const int* values, int n) {
  int* p = nullptr;
  expect_cuda(cudaMalloc(&p, n * sizeof(int)), "cudaMalloc");
  expect_cuda(cudaMemcpy(p, values, n * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
  return p;
}

int plain() {
  const int bad[2] = {1, 17};
  int* index = device_ints(bad, 2);
  int* out = device_ints(bad, 2);
  int n = 16;
  fresh_gather_kernel<<<1, 2>>>(index, n, out);
  expect_cuda(cudaDeviceSynchronize(), "<<<>>> launch: the context stays usable");
  expect_report("<<<>>>");
  void* args[] = {&index, &n, &out};
  expect_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(&fresh_gather_kernel), dim3(1),
                               dim3(2), args, 0, nullptr),
              "cudaLaunchKernel");
  expect_cuda(cudaDeviceSynchronize(), "cudaLaunchKernel: the context stays usable");
  expect_report("cudaLaunchKernel");
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(2);
  expect_cuda(
      cudaLaunchKernelEx(&config, fresh_gather_kernel, static_cast<const int*>(index), n, out),
      "cudaLaunchKernelEx");
  expect_cuda(cudaDeviceSynchronize(), "cudaLaunchKernelEx: the context stays usable");
  expect_report("cudaLaunchKernelEx");
  const int good[2] = {3, 4};
  expect_cuda(cudaMemcpy(index, good, sizeof(good), cudaMemcpyHostToDevice), "cudaMemcpy");
  fresh_gather_kernel<<<1, 2>>>(index, n, out);
  expect_cuda(cudaDeviceSynchronize(), "a good launch after the failures");
  int back[2] = {};
  expect_cuda(cudaMemcpy(back, out, sizeof(back), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (back[0] != 3 || back[1] != 4)
    failed("the good launch computed its result");
  if (tdiag::take_failures())
    failed("nothing is left pending");
  std::printf("fresh child: plain ok\n");
  return 0;
}

int capture() {
  cudaStream_t stream = nullptr;
  expect_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const int first[2] = {20, 1};
  int* index = device_ints(first, 2);
  int* out = device_ints(first, 2);
  expect_cuda(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "BeginCapture");
  TDIAG_LAUNCH(fresh_gather_kernel, 1, 2, 0, stream, index, 16, out);
  cudaGraph_t graph = nullptr;
  expect_cuda(cudaStreamEndCapture(stream, &graph), "EndCapture: the capture stayed valid");
  cudaGraphExec_t exec = nullptr;
  expect_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  if (tdiag::take_failures())
    failed("capturing runs nothing");
  const int second[2] = {2, 33};
  const int* data[2] = {first, second};
  for (int replay = 0; replay < 2; ++replay) {
    expect_cuda(cudaMemcpy(index, data[replay], sizeof(first), cudaMemcpyHostToDevice), "copy");
    expect_cuda(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    expect_cuda(cudaStreamSynchronize(stream), "replay: the context stays usable");
    expect_report(replay == 0 ? "replay 1" : "replay 2");
  }
  std::printf("fresh child: capture ok\n");
  return 0;
}

// The report of a plain launch bound through CUPTI names the configuration, the stream and the
// line that launched it.
void expect_bound(const std::string& report, const char* what, int line, cudaStream_t stream,
                  bool graph) {
  char stream_text[32];
  std::snprintf(stream_text, sizeof(stream_text), "%p", static_cast<void*>(stream));
  const std::string expected[] = {
      graph ? "kernel node of CUDA graph" : "plain launch #",
      "fresh_gather_kernel",
      "grid (1,1,1) block (2,1,1)",
      std::string("stream ") + stream_text,
      ", launched from ",
      "fresh_child.cu:" + std::to_string(line) + " ",
  };
  for (const auto& e : expected)
    if (report.find(e) == std::string::npos) {
      std::printf("fresh child: %s: the report lacks \"%s\"\n", what, e.c_str());
      failed(what);
    }
}

// Run with TDIAG_BIND=cupti: plain launches on a user stream, each reported with its grid, stream
// and launch site, and a graph captured from a plain launch, whose two replays are told apart by
// their graph launch's line.
[[gnu::noinline]] int bound() { // its own frame: the reports name its lines
  cudaStream_t s = nullptr;
  expect_cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  const int bad[2] = {1, 17};
  int* index = device_ints(bad, 2);
  int* out = device_ints(bad, 2);
  int n = 16;
  int line = __LINE__ + 1;
  fresh_gather_kernel<<<1, 2, 0, s>>>(index, n, out);
  expect_cuda(cudaStreamSynchronize(s), "<<<>>>: the context stays usable");
  expect_bound(expect_report("bound <<<>>>"), "<<<>>>", line, s, false);
  void* args[] = {&index, &n, &out};
  const void* kernel = reinterpret_cast<const void*>(&fresh_gather_kernel);
  line = __LINE__ + 1;
  expect_cuda(cudaLaunchKernel(kernel, dim3(1), dim3(2), args, 0, s), "cudaLaunchKernel");
  expect_cuda(cudaStreamSynchronize(s), "cudaLaunchKernel: the context stays usable");
  expect_bound(expect_report("bound cudaLaunchKernel"), "cudaLaunchKernel", line, s, false);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(1);
  config.blockDim = dim3(2);
  config.stream = s;
  line = __LINE__ + 1;
  expect_cuda(cudaLaunchKernelEx(&config, fresh_gather_kernel, index, n, out), "LaunchKernelEx");
  expect_cuda(cudaStreamSynchronize(s), "cudaLaunchKernelEx: the context stays usable");
  expect_bound(expect_report("bound cudaLaunchKernelEx"), "cudaLaunchKernelEx", line, s, false);
  expect_cuda(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "BeginCapture");
  fresh_gather_kernel<<<1, 2, 0, s>>>(index, n, out);
  cudaGraph_t graph = nullptr;
  expect_cuda(cudaStreamEndCapture(s, &graph), "EndCapture");
  cudaGraphExec_t exec = nullptr;
  expect_cuda(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  line = __LINE__ + 1;
  expect_cuda(cudaGraphLaunch(exec, s), "cudaGraphLaunch 1");
  expect_cuda(cudaStreamSynchronize(s), "replay 1: the context stays usable");
  expect_bound(expect_report("bound replay 1"), "replay 1", line, s, true);
  line = __LINE__ + 1;
  expect_cuda(cudaGraphLaunch(exec, s), "cudaGraphLaunch 2");
  expect_cuda(cudaStreamSynchronize(s), "replay 2: the context stays usable");
  expect_bound(expect_report("bound replay 2"), "replay 2", line, s, true);
  std::printf("fresh child: bound ok\n");
  return 0;
}

int trap() {
  const int bad[1] = {17};
  int* index = device_ints(bad, 1);
  int* out = device_ints(bad, 1);
  try {
    TDIAG_LAUNCH(fresh_gather_kernel, 1, 1, 0, nullptr, index, 16, out);
    tdiag::synchronize_and_check();
    failed("the trap is reported");
  } catch (const tdiag::device_assertion_error& e) {
    std::printf("fresh child: trapped: %s\n", e.what());
  }
  try {
    TDIAG_LAUNCH(fresh_gather_kernel, 1, 1, 0, nullptr, index, 16, out);
    tdiag::synchronize_and_check();
    failed("a launch after the trap fails");
  } catch (const tdiag::device_assertion_error& e) {
    failed("the trap was reported twice");
  } catch (const tdiag::error& e) {
    std::printf("fresh child: after the trap: %s\n", e.what());
  }
  std::printf("fresh child: trap ok\n");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("fresh child: no CUDA device\n");
    return 77;
  }
  const std::string scenario = argc > 1 ? argv[1] : "";
  int status = 2;
  if (scenario == "plain")
    status = plain();
  else if (scenario == "capture")
    status = capture();
  else if (scenario == "trap")
    status = trap();
  else if (scenario == "bound")
    status = bound();
  else
    std::printf("fresh child: usage: %s plain|capture|trap|bound\n", argv[0]);
  std::fflush(stdout);
  std::_Exit(status); // after a trap the context is dead: no static destructors
}
