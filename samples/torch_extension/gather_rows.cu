// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A PyTorch extension op with a device-side index check: out[r] = src[index[r]] row by row.
// Compiled by torch.utils.cpp_extension with nvcc's default dialect (C++17); the kernel is the
// same for both launches, only the launch differs (<<<>>> or TDIAG_LAUNCH).
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>

#include <cstdint>

#include "gather_rows.h"

namespace {

__global__ void gather_rows_kernel(const float* src, const std::int64_t* index, float* out,
                                   std::int64_t rows, std::int64_t cols, std::int64_t count) {
  const std::int64_t r = blockIdx.x;
  if (r >= count)
    return;
  const std::int64_t i = index[r];
  TDIAG_CHECK_INDEX(i, rows);
  for (std::int64_t c = threadIdx.x; c < cols; c += blockDim.x)
    out[r * cols + c] = src[i * cols + c];
}

} // namespace

namespace tdiag_sample {

void launch_gather_rows(const gather_args& a, bool through_tensordiag) {
  const unsigned blocks = static_cast<unsigned>(a.count);
  constexpr unsigned threads = 128;
  if (through_tensordiag) {
    TDIAG_LAUNCH(gather_rows_kernel, blocks, threads, 0, a.stream, a.src, a.index, a.out, a.rows,
                 a.cols, a.count);
  } else {
    // What an existing extension does: nothing of tensordiag but the device macro.
    gather_rows_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(a.stream)>>>(
        a.src, a.index, a.out, a.rows, a.cols, a.count);
  }
}

} // namespace tdiag_sample
