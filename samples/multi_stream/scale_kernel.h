// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// y[i] = x[i] / d[i], refusing zero divisors. The same kernel runs on two streams.
#pragma once

#include <tensordiag/assertions/kernel.hpp>

__global__ void divide_kernel(const float* x, const float* d, float* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n)
    return;
  TDIAG_ASSERT_NE(d[i], 0.f);
  y[i] = x[i] / d[i];
}
