// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag_bench_assertions_gpu_gather: a gather y[i] = x[idx[i]] (2^27 elements: 512 MiB each of x,
// idx and y, 1.5 GiB moved per launch) with two index patterns: a shuffle within each group of 32
// (every warp reads whole cache lines: memory-bound, the case the goal is about) and uniformly
// random indices (latency-bound: each load its own sector). Four variants each, in one run:
// unchecked, CUDA assert(), TDIAG_CHECK_INDEX (record policy, launched with tdiag::launch) and a
// PyTorch-DSA-style check (CUDA_KERNEL_ASSERT2: a record with 512-byte strings in host memory).
// Median of 25 timed launches each (cudaEvent), GB/s and % over unchecked. `--quick`: 2^22.
#undef NDEBUG // the assert() variant must keep its check in a Release build
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr int block_size = 256;

__global__ void init_kernel(float* x, int* idx, long long n, bool random) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    x[i] = static_cast<float>(i & 1023);
    unsigned long long h = static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
    // i * 13 + 5 (mod 32) is a permutation of each aligned group of 32 (n is a multiple of 32).
    idx[i] = random ? static_cast<int>(h % static_cast<unsigned long long>(n))
                    : static_cast<int>((i & ~31ll) | ((i * 13 + 5) & 31));
  }
}

__global__ void gather_unchecked(const float* x, const int* idx, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n)
    y[i] = x[idx[i]];
}

__global__ void gather_assert(const float* x, const int* idx, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    const int j = idx[i];
    assert(j >= 0 && j < n);
    y[i] = x[j];
  }
}

__global__ void gather_tdiag(const float* x, const int* idx, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    const int j = idx[i];
    TDIAG_CHECK_INDEX(j, n);
    y[i] = x[j];
  }
}

// PyTorch's device-side assertions (c10/cuda/CUDADeviceAssertion.h): the kernel takes the record
// buffer and a caller id as extra arguments; a failure copies three strings into host memory.
constexpr int dsa_string = 512;
struct dsa_record {
  char assertion_msg[dsa_string];
  char filename[dsa_string];
  char function_name[dsa_string];
  int line_number;
  std::uint32_t caller;
  std::int32_t block_id[3];
  std::int32_t thread_id[3];
};
struct dsa_data {
  std::int32_t assertion_count;
  dsa_record assertions[10];
};

__device__ void dsa_copy(char* dst, const char* src) {
  int i = 0;
  for (; i < dsa_string - 1 && src[i] != 0; ++i)
    dst[i] = src[i];
  dst[i] = 0;
}
__device__ void dsa_add(dsa_data* data, const char* msg, const char* file, const char* fn, int line,
                        std::uint32_t caller) {
  const int n = atomicAdd(&data->assertion_count, 1);
  if (n >= 10)
    return;
  dsa_record& r = data->assertions[n];
  dsa_copy(r.assertion_msg, msg);
  dsa_copy(r.filename, file);
  dsa_copy(r.function_name, fn);
  r.line_number = line;
  r.caller = caller;
  r.block_id[0] = static_cast<std::int32_t>(blockIdx.x);
  r.block_id[1] = static_cast<std::int32_t>(blockIdx.y);
  r.block_id[2] = static_cast<std::int32_t>(blockIdx.z);
  r.thread_id[0] = static_cast<std::int32_t>(threadIdx.x);
  r.thread_id[1] = static_cast<std::int32_t>(threadIdx.y);
  r.thread_id[2] = static_cast<std::int32_t>(threadIdx.z);
}

__global__ void gather_dsa(const float* x, const int* idx, float* y, int n, dsa_data* data,
                           std::uint32_t caller) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) {
    const int j = idx[i];
    if (__builtin_expect(!(j >= 0 && j < n), 0)) { // CUDA_KERNEL_ASSERT2(j >= 0 && j < n)
      dsa_add(data, "j >= 0 && j < n", __FILE__, __func__, __LINE__, caller);
      return;
    }
    y[i] = x[j];
  }
}

#define CHECK_CUDA(call)                                                                           \
  do {                                                                                             \
    const cudaError_t e = (call);                                                                  \
    if (e != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));                       \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (false)

template <typename Launch> double median_ms(Launch&& launch, int runs) {
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  launch(); // warm-up
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    CHECK_CUDA(cudaEventRecord(start));
    launch();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms[ms.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("tdiag_bench_assertions_gpu_gather: no CUDA device on this machine; skipped\n");
    return 0;
  }
  const int n = quick ? (1 << 22) : (1 << 27);
  const int runs = 25;
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  float *x = nullptr, *y = nullptr;
  int* idx = nullptr;
  CHECK_CUDA(cudaMalloc(&x, sizeof(float) * n));
  CHECK_CUDA(cudaMalloc(&y, sizeof(float) * n));
  CHECK_CUDA(cudaMalloc(&idx, sizeof(int) * n));
  dsa_data* dsa = nullptr;
  CHECK_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&dsa), sizeof(dsa_data), cudaHostAllocMapped));
  std::memset(dsa, 0, sizeof(dsa_data));
  dsa_data* dsa_device = nullptr;
  CHECK_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dsa_device), dsa, 0));
  tdiag::assertions::runtime_config config;
  config.capture_stacks = false;
  tdiag::assertions::configure(config);
  CHECK_CUDA(cudaDeviceSynchronize());

  const int grid = (n + block_size - 1) / block_size;
  const double bytes = 3.0 * sizeof(float) * n; // read idx, read x[idx], write y
  std::printf("gather y[i] = x[idx[i]], n = %d (%.2f GiB moved per launch), %d launches per "
              "variant, median\n",
              n, bytes / (1u << 30), runs);
  std::printf("GPU %s (sm_%d%d), driver %d, CUDA runtime %d\n", prop.name, prop.major, prop.minor,
              driver, runtime);
  struct row {
    const char* name;
    double ms;
  };
  for (const bool random : {false, true}) {
    init_kernel<<<prop.multiProcessorCount * 8, block_size>>>(x, idx, n, random);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<row> rows;
    rows.push_back(
        {"unchecked",
         median_ms([&] { gather_unchecked<<<grid, block_size>>>(x, idx, y, n); }, runs)});
    rows.push_back({"CUDA assert()",
                    median_ms([&] { gather_assert<<<grid, block_size>>>(x, idx, y, n); }, runs)});
    rows.push_back(
        {"TDIAG_CHECK_INDEX (record)",
         median_ms([&] { tdiag::launch(gather_tdiag, grid, block_size)(x, idx, y, n); }, runs)});
    rows.push_back(
        {"PyTorch-DSA-style",
         median_ms([&] { gather_dsa<<<grid, block_size>>>(x, idx, y, n, dsa_device, 1u); }, runs)});
    tdiag::synchronize_and_check(); // no index is out of range: throws if the check misfired
    if (dsa->assertion_count != 0)
      std::fprintf(stderr, "DSA-style check misfired\n");
    std::printf("\nindex pattern: %s\n", random ? "uniformly random (latency-bound)"
                                                : "shuffle within groups of 32 (memory-bound)");
    std::printf("%-28s %10s %10s %14s\n", "variant", "ms", "GB/s", "vs unchecked");
    for (const auto& r : rows)
      std::printf("%-28s %10.4f %10.1f %+13.2f%%\n", r.name, r.ms, bytes / r.ms / 1e6,
                  (r.ms / rows[0].ms - 1.0) * 100.0);
  }
  cudaFree(x);
  cudaFree(y);
  cudaFree(idx);
  cudaFreeHost(dsa);
  return 0;
}
