// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A CUDA program whose phases open the capture ranges, one kernel name per phase, for
// range_gpu_test. Launch numbers (from 0): phase 0 = 0-9, 1 = 10-29, 2 = 30-39, 3 = 40-45,
// 4 = 46-52, 5 = 53-62.
//   phase 0  10 launches
//   phase 1  cudaProfilerStart, 20 launches, cudaProfilerStop
//   phase 2  10 launches
//   phase 3  nvtxRangePushA("tdiag-step"), 5 launches, a nested "inner" push with 1, pops
//   phase 4  nvtxRangeStartA("tdiag-epoch"), 7 launches, nvtxRangeEnd
//   phase 5  10 launches
// With "timed": phase 0 (10), 2.5 s of sleep, phase 1 (10, no profiler calls), 2.5 s, phase 2 (10).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <nvtx3/nvToolsExt.h>
#include <thread>

template <int Phase> __global__ void phase_kernel(int* out) {
  if (threadIdx.x == 0)
    out[Phase] += 1;
}

template <int Phase> void launch(int* out, int n) {
  for (int i = 0; i < n; ++i)
    phase_kernel<Phase><<<1, 32>>>(out);
}

int main(int argc, char** argv) {
  int* out = nullptr;
  if (cudaMalloc(&out, 8 * sizeof(int)) != cudaSuccess) {
    std::fprintf(stderr, "range_app: no GPU\n");
    return 2;
  }
  cudaMemset(out, 0, 8 * sizeof(int));
  const bool timed = argc > 1 && std::strcmp(argv[1], "timed") == 0;
  launch<0>(out, 10);
  if (timed) {
    cudaDeviceSynchronize();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    launch<1>(out, 10);
    cudaDeviceSynchronize();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    launch<2>(out, 10);
  } else {
    cudaProfilerStart();
    launch<1>(out, 20);
    cudaDeviceSynchronize();
    cudaProfilerStop();
    launch<2>(out, 10);
    nvtxRangePushA("tdiag-step");
    launch<3>(out, 5);
    nvtxRangePushA("inner");
    launch<3>(out, 1);
    cudaDeviceSynchronize();
    nvtxRangePop();
    nvtxRangePop();
    const nvtxRangeId_t epoch = nvtxRangeStartA("tdiag-epoch");
    launch<4>(out, 7);
    cudaDeviceSynchronize();
    nvtxRangeEnd(epoch);
    launch<5>(out, 10);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  cudaFree(out);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "range_app: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("range_app: done\n");
  return 0;
}
