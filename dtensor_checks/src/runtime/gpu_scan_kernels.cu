// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Device kernels of the runtime checks: replica hashes, block hashes and NaN/Inf scans. One
// source for CUDA (nvcc) and HIP (hipcc -x hip); C++17 and no host-library headers. Block sums are
// reduced in shared memory, so nothing assumes a warp size.
#if defined(__HIPCC__)
#  include <hip/hip_runtime.h>
#else
#  include <cuda_runtime.h>
#endif

#include <tensordiag/dtensor_checks/runtime/element_hash.hpp>

#include <cstdint>

#include "gpu_kernels.hpp"

namespace tdiag::dtensor::runtime::gpu_kernels {
namespace {

#if defined(__HIPCC__)
using stream_t = hipStream_t;
inline int last_error() {
  return static_cast<int>(hipGetLastError());
}
#else
using stream_t = cudaStream_t;
inline int last_error() {
  return static_cast<int>(cudaGetLastError());
}
#endif

// Word i of `base` (little-endian). A byte view of a tensor can start at any address; a 32-bit
// load from one that is not 4-byte aligned faults, so such buffers are read a byte at a time.
__device__ inline std::uint32_t load_word(const unsigned char* base, std::uint64_t i,
                                          bool aligned) {
  if (aligned)
    return reinterpret_cast<const std::uint32_t*>(base)[i];
  const unsigned char* b = base + 4 * i;
  return static_cast<std::uint32_t>(b[0]) | static_cast<std::uint32_t>(b[1]) << 8 |
         static_cast<std::uint32_t>(b[2]) << 16 | static_cast<std::uint32_t>(b[3]) << 24;
}

__device__ inline bool word_aligned(const unsigned char* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 3u) == 0;
}

// Sums `v` over the block into `out` (one atomic per block).
__device__ void block_sum_add(std::uint64_t v, unsigned long long* out) {
  __shared__ unsigned long long partial[threads_per_block];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int s = threads_per_block / 2; s > 0; s >>= 1) {
    if (static_cast<int>(threadIdx.x) < s)
      partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0 && partial[0] != 0)
    atomicAdd(out, partial[0]);
}

// The hash of 4 words at word position w (a multiple of 4, so they share the high half).
__device__ inline std::uint64_t quad_hash(const uint4& q, std::uint64_t w) {
  const auto lo = static_cast<std::uint32_t>(w);
  const auto hi = static_cast<std::uint32_t>(w >> 32);
  const std::uint32_t hi_mix = hi * 0x85EBCA77u;
  return word_hash_parts(q.x, lo, hi, hi_mix) + word_hash_parts(q.y, lo + 1, hi, hi_mix) +
         word_hash_parts(q.z, lo + 2, hi, hi_mix) + word_hash_parts(q.w, lo + 3, hi, hi_mix);
}

// The hash of whole 32-bit words; 16-byte loads when `data` is 16-byte aligned.
__global__ void hash_words(const unsigned char* data, std::uint64_t words, bool vector_loads,
                           unsigned long long* out) {
  std::uint64_t acc = 0;
  const std::uint64_t tid = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  std::uint64_t done = 0;
  if (vector_loads) {
    const auto* v = reinterpret_cast<const uint4*>(data);
    const std::uint64_t quads = words / 4;
    // Two independent 16-byte loads in flight per thread before the arithmetic.
    std::uint64_t i = tid;
    for (; i + stride < quads; i += 2 * stride) {
      const uint4 q0 = v[i];
      const uint4 q1 = v[i + stride];
      acc += quad_hash(q0, i * 4) + quad_hash(q1, (i + stride) * 4);
    }
    if (i < quads)
      acc += quad_hash(v[i], i * 4);
    done = quads * 4;
  }
  const bool aligned = word_aligned(data);
  for (std::uint64_t i = done + tid; i < words; i += stride)
    acc += word_hash(load_word(data, i, aligned), i);
  block_sum_add(acc, out);
}

// out[b] += hash of block b (block_bytes each, the last one shorter), as a buffer of its own.
__global__ void hash_blocks(const unsigned char* data, std::uint64_t bytes,
                            std::uint64_t block_bytes, std::uint64_t blocks,
                            unsigned long long* out) {
  for (std::uint64_t b = blockIdx.y; b < blocks; b += gridDim.y) {
    const std::uint64_t begin = b * block_bytes;
    const std::uint64_t len = bytes - begin < block_bytes ? bytes - begin : block_bytes;
    const unsigned char* base = data + begin;
    const std::uint64_t words = len / 4;
    const bool aligned = word_aligned(base);
    std::uint64_t acc = 0;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < words; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
      acc += word_hash(load_word(base, i, aligned), i);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
      acc += length_hash(len);
      if (len % 4 != 0)
        acc += word_hash(tail_word(base, words, len), words);
    }
    block_sum_add(acc, out + b);
    __syncthreads();
  }
}

// counts[0..2] = NaN, +Inf, -Inf; counts[3], counts[4] = first NaN, first Inf (atomicMin).
template <typename Bits>
__global__ void scan_nonfinite(const Bits* data, std::uint64_t count, Bits exp_mask, Bits man_mask,
                               Bits sign_mask, unsigned long long* counts) {
  unsigned long long nan = 0, pinf = 0, ninf = 0;
  unsigned long long first_nan = ~0ull, first_inf = ~0ull;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const Bits v = data[i];
    if ((v & exp_mask) != exp_mask)
      continue;
    if ((v & man_mask) != 0) {
      ++nan;
      if (i < first_nan)
        first_nan = i;
    } else {
      ((v & sign_mask) != 0 ? ninf : pinf) += 1;
      if (i < first_inf)
        first_inf = i;
    }
  }
  if (nan)
    atomicAdd(counts + 0, nan);
  if (pinf)
    atomicAdd(counts + 1, pinf);
  if (ninf)
    atomicAdd(counts + 2, ninf);
  if (first_nan != ~0ull)
    atomicMin(counts + 3, first_nan);
  if (first_inf != ~0ull)
    atomicMin(counts + 4, first_inf);
}

} // namespace

int launch_hash_words(const void* data, std::uint64_t words, bool vector_loads,
                      unsigned long long* out, unsigned grid, void* stream) {
  hash_words<<<grid, threads_per_block, 0, static_cast<stream_t>(stream)>>>(
      static_cast<const unsigned char*>(data), words, vector_loads, out);
  return last_error();
}

int launch_hash_blocks(const void* data, std::uint64_t bytes, std::uint64_t block_bytes,
                       std::uint64_t blocks, unsigned long long* out, unsigned grid_x,
                       void* stream) {
  const dim3 grid(grid_x, static_cast<unsigned>(blocks < 65535 ? blocks : 65535));
  hash_blocks<<<grid, threads_per_block, 0, static_cast<stream_t>(stream)>>>(
      static_cast<const unsigned char*>(data), bytes, block_bytes, blocks, out);
  return last_error();
}

int launch_scan_nonfinite(const void* data, std::uint64_t count, element_kind kind,
                          unsigned long long* counts, unsigned grid, void* stream) {
  const auto s = static_cast<stream_t>(stream);
  switch (kind) {
  case element_kind::float32:
    scan_nonfinite<std::uint32_t>
        <<<grid, threads_per_block, 0, s>>>(static_cast<const std::uint32_t*>(data), count,
                                            0x7F800000u, 0x007FFFFFu, 0x80000000u, counts);
    break;
  case element_kind::float64:
    scan_nonfinite<unsigned long long><<<grid, threads_per_block, 0, s>>>(
        static_cast<const unsigned long long*>(data), count, 0x7FF0000000000000ull,
        0x000FFFFFFFFFFFFFull, 0x8000000000000000ull, counts);
    break;
  case element_kind::float16:
    scan_nonfinite<unsigned short><<<grid, threads_per_block, 0, s>>>(
        static_cast<const unsigned short*>(data), count, 0x7C00, 0x03FF, 0x8000, counts);
    break;
  case element_kind::bfloat16:
    scan_nonfinite<unsigned short><<<grid, threads_per_block, 0, s>>>(
        static_cast<const unsigned short*>(data), count, 0x7F80, 0x007F, 0x8000, counts);
    break;
  }
  return last_error();
}

} // namespace tdiag::dtensor::runtime::gpu_kernels
