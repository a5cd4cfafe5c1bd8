// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// y[i] = table[idx[i]], with the index checked on the device. Written once: compiled as C++ for
// the CPU back-end (main.cpp) and by nvcc / hipcc for GPUs.
#pragma once

#include <tensordiag/assertions/kernel.hpp>

template <typename T>
__global__ void gather_kernel(const T* table, int table_size, const int* idx, T* y, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n)
    return;
  const int j = idx[i];
  TDIAG_CHECK_INDEX(j, table_size);
  y[i] = table[j];
}
