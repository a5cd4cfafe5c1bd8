// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Kernels of the assertion tests, written once for the CPU back-end and the GPU back-ends.
#pragma once

#include <tensordiag/assertions/kernel.hpp>

#include <atomic>
#include <ctime>

// The line of always_fail_kernel's assertion, for tests that check the reported place.
inline constexpr unsigned always_fail_line = __LINE__ + 3;

__global__ void always_fail_kernel() {
  TDIAG_ASSERT(threadIdx.x > 1000000u);
}

__global__ void fail_at_kernel(unsigned bad_block, unsigned bad_thread, int* done) {
  const bool bad = blockIdx.x == bad_block && threadIdx.x == bad_thread;
  TDIAG_ASSERT(!bad, "thread {} of block {} is the chosen one", threadIdx.x, blockIdx.x);
  atomicAdd(done, 1);
}

__global__ void every_thread_fails_kernel(int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  TDIAG_CHECK_INDEX(i, n);
}

__global__ void values_kernel(int i, int n, float x, double y, bool flag, const int* p,
                              unsigned long long big) {
  TDIAG_ASSERT(i < n, "index {} not below {} (x={}, y={}, flag={}, p={}, big={})", i, n, x, y, flag,
               p, big);
}

__global__ void compare_kernel(int which, int a, int b) {
  if (which == 0)
    TDIAG_ASSERT_EQ(a, b);
  if (which == 1)
    TDIAG_ASSERT_NE(a, b);
  if (which == 2)
    TDIAG_ASSERT_LT(a, b);
  if (which == 3)
    TDIAG_ASSERT_LE(a, b);
  if (which == 4)
    TDIAG_ASSERT_GT(a, b);
  if (which == 5)
    TDIAG_ASSERT_GE(a, b);
  if (which == 6)
    TDIAG_CHECK_INDEX(a, b);
}

__global__ void two_sites_kernel() {
  if (threadIdx.x % 2 == 0)
    TDIAG_ASSERT(threadIdx.x % 2 != 0, "even thread {}", threadIdx.x);
  TDIAG_ASSERT_LT(threadIdx.x, 10u);
}

// Thread `victim` stops before the barrier; every other thread must still get past it and see
// the shared values written before it.
__global__ void barrier_kernel(unsigned victim, int* out) {
  __shared__ int values[256];
  values[threadIdx.x] = static_cast<int>(threadIdx.x) * 2;
  TDIAG_ASSERT(threadIdx.x != victim, "victim {}", threadIdx.x);
  __syncthreads();
  const unsigned other = (threadIdx.x + 1) % blockDim.x;
  out[threadIdx.x] = other == victim ? -1 : values[other];
  __syncthreads();
  out[threadIdx.x] += 1;
}

__global__ void marker_kernel(long long marker) {
  TDIAG_ASSERT(marker < 0, "marker {}", marker);
}

#if !defined(__CUDACC__) && !defined(__HIPCC__)
// Thread 0 fails; thread 1 spins until the watchdog's handler releases it (or 10 s pass).
inline std::atomic<bool> spin_release{false};
__global__ void spinning_kernel() {
  if (threadIdx.x == 0)
    TDIAG_ASSERT(false, "failed while the kernel keeps running");
  for (int i = 0; i < 10000000 && !spin_release.load(); ++i) {
    struct timespec ts {
      0, 1000
    };
    nanosleep(&ts, nullptr);
  }
}
#endif

__global__ void multi_block_trap_kernel(int* blocks_run) {
  if (threadIdx.x == 0)
    atomicAdd(blocks_run, 1);
  TDIAG_ASSERT(blockIdx.x != 1, "block {} traps", blockIdx.x);
}
