// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A block-wide shared-memory sum that refuses NaNs: each input is checked as it is loaded, and
// each partial sum after every step. Written once for the CPU back-end and GPUs.
#pragma once

#include <tensordiag/assertions/kernel.hpp>

constexpr unsigned reduce_block = 256;

__global__ void block_sum_kernel(const float* x, int n, float* block_sums) {
  __shared__ float partial[reduce_block];
  const unsigned t = threadIdx.x;
  const int i = static_cast<int>(blockIdx.x * blockDim.x + t);
  const float v = i < n ? x[i] : 0.f;
  TDIAG_ASSERT(v == v, "NaN input x[{}] in block {}", i, blockIdx.x);
  partial[t] = v;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0)
    block_sums[blockIdx.x] = partial[0];
}
