// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A CUDA program with a known amount of work, for checking capture end to end. It knows nothing
// of tensordiag: run it under `tdiag capture -o demo.tdtrace -- tdiag_capture_demo [N]`.
// Each of the N iterations does, on one stream: a host-to-device copy, a stream-ordered pool
// allocation (cudaMallocAsync), two kernels, a memset, a cudaFreeAsync and a device-to-host
// copy; one memset zeroes the accumulator first. The totals are printed on the last line for
// tests to compare with the trace.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define DEMO_CHECK(call)                                                                           \
  do {                                                                                             \
    const cudaError_t demo_e = (call);                                                             \
    if (demo_e != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                           \
                   cudaGetErrorString(demo_e));                                                    \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (false)

__global__ void scale_kernel(const float* in, float* out, float factor, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * factor;
}

__global__ void add_kernel(const float* a, float* b, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    b[i] += a[i];
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 10;
  const int n = 1 << 20;
  const std::size_t bytes = n * sizeof(float);
  const std::vector<float> input(n, 1.0f);
  std::vector<float> output(n, 0.0f);

  cudaStream_t stream;
  DEMO_CHECK(cudaStreamCreate(&stream));
  float* a = nullptr;
  float* b = nullptr;
  DEMO_CHECK(cudaMalloc(&a, bytes));
  DEMO_CHECK(cudaMalloc(&b, bytes));
  DEMO_CHECK(cudaMemsetAsync(b, 0, bytes, stream));
  const int threads = 256;
  const int blocks = (n + threads - 1) / threads;
  for (int it = 0; it < iterations; ++it) {
    DEMO_CHECK(cudaMemcpyAsync(a, input.data(), bytes, cudaMemcpyHostToDevice, stream));
    float* tmp = nullptr;
    DEMO_CHECK(cudaMallocAsync(&tmp, bytes, stream));
    scale_kernel<<<blocks, threads, 0, stream>>>(a, tmp, 2.0f, n);
    DEMO_CHECK(cudaGetLastError());
    add_kernel<<<blocks, threads, 0, stream>>>(tmp, b, n);
    DEMO_CHECK(cudaGetLastError());
    DEMO_CHECK(cudaMemsetAsync(tmp, 0, bytes, stream));
    DEMO_CHECK(cudaFreeAsync(tmp, stream));
    DEMO_CHECK(cudaMemcpyAsync(output.data(), b, bytes, cudaMemcpyDeviceToHost, stream));
  }
  DEMO_CHECK(cudaStreamSynchronize(stream));
  DEMO_CHECK(cudaFree(a));
  DEMO_CHECK(cudaFree(b));
  DEMO_CHECK(cudaStreamDestroy(stream));
  // b = sum over iterations of 2 * 1: a cheap check that the work really ran.
  const float expected = 2.0f * static_cast<float>(iterations);
  for (int i = 0; i < n; i += 4099)
    if (output[i] != expected) {
      std::fprintf(stderr, "wrong result %f at %d, expected %f\n", static_cast<double>(output[i]),
                   i, static_cast<double>(expected));
      return 1;
    }
  std::printf("expected kernels=%d memcpy=%d memset=%d pool_allocs=%d pool_frees=%d "
              "driver_allocs=2\n",
              2 * iterations, 2 * iterations, iterations + 1, iterations, iterations);
  return 0;
}
