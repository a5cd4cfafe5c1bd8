// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What kernel code sees on the CPU back-end: CUDA's built-in index variables as thread-locals
// (the scheduler sets them before it resumes each GPU thread's fiber), block barriers and the
// dynamic shared memory of the current block. Host code only; include cpu_kernel.hpp to compile
// CUDA-style kernel sources for the CPU.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#  error "cpu_device.hpp is for the CPU back-end; GPU translation units use the GPU built-ins"
#endif

/// CUDA's uint3 and dim3, for kernel sources compiled for the CPU back-end.
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) noexcept
      : x(vx), y(vy), z(vz) {}
};

extern thread_local uint3 threadIdx;
extern thread_local uint3 blockIdx;
extern thread_local dim3 blockDim;
extern thread_local dim3 gridDim;

namespace tdiag::assertions::cpu {

/// Warp size the CPU back-end reports (lanes are threadIdx's linear index modulo this).
inline constexpr unsigned warp_size = 32;

/// __syncthreads(): waits until every thread of the block that has not exited arrives. Threads
/// stopped by a failed assertion count as arrived, as exited threads do on sm_70+. Outside a
/// kernel it does nothing.
void sync_threads() noexcept;

/// The current block's dynamic shared memory (the launch's `shared_memory` bytes, 16-byte
/// aligned, zeroed at block start); nullptr outside a kernel or when none was requested.
[[nodiscard]] void* dynamic_shared_memory() noexcept;

/// True while the calling host thread runs a CPU-back-end kernel.
[[nodiscard]] bool in_kernel() noexcept;

} // namespace tdiag::assertions::cpu
