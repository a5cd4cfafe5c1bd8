// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Test helper: a single-thread kernel that spins for a given time on the GPU's global timer.
#include <cuda_runtime.h>

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// The same under another name, to keep a stream busy without being counted as a spin_kernel.
__global__ void gate_kernel(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

extern "C" cudaError_t tdiag_test_gate(unsigned long long ns, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

extern "C" cudaError_t tdiag_test_spin(unsigned long long ns, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}
