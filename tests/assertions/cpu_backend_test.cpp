// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "test_support.h"

namespace {

__global__ void index_kernel(unsigned* out) {
  const unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[block * blockDim.x * blockDim.y * blockDim.z + thread] = block * 1000 + thread;
}

// A block-wide tree reduction through shared memory: barriers must order the fibers.
__global__ void reduce_kernel(const float* in, float* out) {
  TDIAG_DYNAMIC_SHARED(float, partial);
  const unsigned t = threadIdx.x;
  partial[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride)
      partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0)
    out[blockIdx.x] = partial[0];
}

__global__ void throwing_kernel() {
  if (threadIdx.x == 3)
    throw std::runtime_error("kernel threw");
}

} // namespace

class CpuBackend : public tdiag::test::AssertionsFixture {};

TEST_F(CpuBackend, ThreeDimensionalGridsSeeEveryIndexOnce) {
  std::vector<unsigned> out(3 * 2 * 2 * 4 * 2 * 2, ~0u);
  tdiag::launch(index_kernel, dim3(3, 2, 2), dim3(4, 2, 2))(out.data());
  for (unsigned b = 0; b < 12; ++b)
    for (unsigned t = 0; t < 16; ++t)
      EXPECT_EQ(out[b * 16 + t], b * 1000 + t);
}

TEST_F(CpuBackend, SharedMemoryReductionWithBarriers) {
  std::vector<float> in(4 * 256);
  for (std::size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<float>(i % 7);
  std::vector<float> out(4, 0.f);
  tdiag::launch(reduce_kernel, 4, 256, 256 * sizeof(float))(in.data(), out.data());
  for (int b = 0; b < 4; ++b) {
    float expected = 0;
    for (int i = 0; i < 256; ++i)
      expected += in[b * 256 + i];
    EXPECT_EQ(out[b], expected);
  }
}

TEST_F(CpuBackend, AnExceptionInAKernelReachesTheLauncher) {
  EXPECT_THROW(tdiag::launch(throwing_kernel, 2, 8)(), std::runtime_error);
  std::vector<unsigned> out(16, 0);
  tdiag::launch(index_kernel, 1, 16)(out.data()); // the back-end is still usable
  EXPECT_EQ(out[15], 15u);
}

TEST_F(CpuBackend, PropertiesAndStreams) {
  auto cpu = tdiag::assertions::cpu_backend::shared();
  EXPECT_EQ(cpu->name(), "cpu");
  EXPECT_EQ(cpu->device_count(), 1);
  EXPECT_EQ(cpu->properties(0).max_threads_per_block, 1024u);
  EXPECT_THROW((void)cpu->properties(1), tdiag::error);
  auto s1 = cpu->create_stream(0), s2 = cpu->create_stream(0);
  EXPECT_NE(s1, s2);
  cpu->destroy_stream(0, s1);
  cpu->destroy_stream(0, s2);
}
