// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The kernel of the register-count regression check (register_check.cmake): a gather, compiled
// once plain and once with TDIAG_CHECK_INDEX (-DTDIAG_REGISTER_CHECK_WITH_INDEX).
#include <tensordiag/assertions/kernel.hpp>

__global__ void register_gather_kernel(const float* x, const long long* idx, float* y, long long n,
                                       long long table) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long j = idx[i];
#if defined(TDIAG_REGISTER_CHECK_WITH_INDEX)
    TDIAG_CHECK_INDEX(j, table);
#endif
    y[i] = x[j];
  }
}
