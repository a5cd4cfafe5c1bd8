// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Replica hash of a 1 GiB device tensor (target >= 2 TB/s on an H200, < 1 ms per GiB), with the
// peer figure from the same run: a device-to-device cudaMemcpy of the same buffer (the copy
// ceiling, ~4.3 TB/s counting read + write). Also the NaN/Inf scan. `--small`: 64 MiB, few
// iterations (CTest); exit 77 without a GPU.
#include <tensordiag/dtensor_checks/runtime/element_hash.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gpu_kernels.hpp"

namespace {

#define BENCH_CHECK(expr)                                                                          \
  do {                                                                                             \
    const cudaError_t bench_e = (expr);                                                            \
    if (bench_e != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(bench_e));                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (false)

__global__ void fill(std::uint32_t* p, std::uint64_t words) {
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
       i < words; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    p[i] = static_cast<std::uint32_t>(i * 2654435761u) ^ 0x3f800000u;
  }
}

template <typename Fn> double median_ms(int iterations, Fn fn) {
  cudaEvent_t a, b;
  BENCH_CHECK(cudaEventCreate(&a));
  BENCH_CHECK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int i = 0; i < iterations; ++i) {
    BENCH_CHECK(cudaEventRecord(a));
    fn();
    BENCH_CHECK(cudaEventRecord(b));
    BENCH_CHECK(cudaEventSynchronize(b));
    float t = 0;
    BENCH_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms[ms.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  if (tdiag::dtensor::runtime::gpu_device_count() == 0) {
    std::printf("replica_hash_bench: no CUDA device, skipped\n");
    return 77;
  }
  const std::uint64_t bytes = small ? (64ull << 20) : (1ull << 30);
  const int iterations = small ? 3 : 20;
  cudaDeviceProp prop{};
  BENCH_CHECK(cudaGetDeviceProperties(&prop, 0));
  void* src = nullptr;
  void* dst = nullptr;
  BENCH_CHECK(cudaMalloc(&src, bytes));
  BENCH_CHECK(cudaMalloc(&dst, bytes));
  fill<<<prop.multiProcessorCount * 8, 256>>>(static_cast<std::uint32_t*>(src), bytes / 4);
  BENCH_CHECK(cudaDeviceSynchronize());

  auto backend = tdiag::dtensor::runtime::make_gpu_scan_backend();
  // Correctness first: the device hash equals the host hash of the same bytes.
  std::vector<unsigned char> host(bytes);
  BENCH_CHECK(cudaMemcpy(host.data(), src, bytes, cudaMemcpyDeviceToHost));
  const auto device_hash = backend->hash(src, static_cast<std::int64_t>(bytes));
  const bool match = device_hash == tdiag::dtensor::runtime::host_hash(
                                        host.data(), static_cast<std::int64_t>(bytes));

  unsigned long long* sum = nullptr;
  BENCH_CHECK(cudaMalloc(&sum, sizeof(unsigned long long)));
  const unsigned grid = static_cast<unsigned>(prop.multiProcessorCount * 8);
  for (int i = 0; i < 3; ++i)
    (void)backend->hash(src, static_cast<std::int64_t>(bytes));
  const double kernel_ms = median_ms(iterations, [&] {
    BENCH_CHECK(cudaMemsetAsync(sum, 0, sizeof(unsigned long long)));
    BENCH_CHECK(static_cast<cudaError_t>(tdiag::dtensor::runtime::gpu_kernels::launch_hash_words(
        src, bytes / 4, true, sum, grid, nullptr)));
  });
  const double call_ms =
      median_ms(iterations, [&] { (void)backend->hash(src, static_cast<std::int64_t>(bytes)); });
  const double scan_ms = median_ms(iterations, [&] {
    (void)backend->scan_nonfinite(src, static_cast<std::int64_t>(bytes / 4),
                                  tdiag::dtensor::dtype::float32);
  });
  const double copy_ms = median_ms(
      iterations, [&] { BENCH_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });

  const double gb = static_cast<double>(bytes) / 1e9;
  std::printf("device: %s, %d SMs; buffer %.3f GiB, median of %d\n", prop.name,
              prop.multiProcessorCount, static_cast<double>(bytes) / (1ull << 30), iterations);
  std::printf("replica hash kernel      : %8.3f ms  %8.1f GB/s read\n", kernel_ms,
              gb / (kernel_ms * 1e-3));
  std::printf("replica hash (API call)  : %8.3f ms  %8.1f GB/s read (incl. launch, 8-byte copy "
              "back, sync)\n",
              call_ms, gb / (call_ms * 1e-3));
  std::printf("NaN/Inf scan (float32)   : %8.3f ms  %8.1f GB/s read\n", scan_ms,
              gb / (scan_ms * 1e-3));
  std::printf("peer: cudaMemcpy D2D     : %8.3f ms  %8.1f GB/s read+write (%8.1f GB/s copied)\n",
              copy_ms, 2 * gb / (copy_ms * 1e-3), gb / (copy_ms * 1e-3));
  std::printf("device hash equals host hash: %s\n", match ? "yes" : "NO");
  cudaFree(sum);
  cudaFree(src);
  cudaFree(dst);
  return match ? 0 : 1;
}
