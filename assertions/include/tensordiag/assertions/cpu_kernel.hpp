// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Compiles CUDA-style kernel sources as plain C++ for the CPU back-end: __global__, __device__,
// __host__, __forceinline__, __shared__ (block-shared storage), __syncthreads(), a few atomics,
// and TDIAG_DYNAMIC_SHARED. Include it (through tensordiag/assertions/kernel.hpp) only in
// translation units that hold kernels; it defines keyword macros.
#pragma once

#include <tensordiag/assertions/cpu_device.hpp>

#include <type_traits>

// CUDA's own names, on purpose: the kernel sources are CUDA's (and a type cannot be parenthesised).
// NOLINTBEGIN(bugprone-reserved-identifier, bugprone-macro-parentheses)
#ifndef __global__
#  define __global__ // rules: allow macro_prefix (CUDA's keyword)
#endif
#ifndef __device__
#  define __device__ // rules: allow macro_prefix (CUDA's keyword)
#endif
#ifndef __host__
#  define __host__ // rules: allow macro_prefix (CUDA's keyword)
#endif
#ifndef __forceinline__
#  define __forceinline__ inline // rules: allow macro_prefix (CUDA's keyword)
#endif
// One block runs at a time on a host thread and its GPU threads are fibers of that thread, so
// thread-local static storage is exactly block-shared storage.
#ifndef __shared__
#  define __shared__ static thread_local // rules: allow macro_prefix (CUDA's keyword)
#endif

/// `extern __shared__ T name[]` in CUDA; a pointer to the block's dynamic shared memory here.
#define TDIAG_DYNAMIC_SHARED(type, name)                                                           \
  type* name = static_cast<type*>(::tdiag::assertions::cpu::dynamic_shared_memory())

inline void __syncthreads() noexcept {
  ::tdiag::assertions::cpu::sync_threads();
}
// NOLINTEND(bugprone-reserved-identifier, bugprone-macro-parentheses)

// Fibers of one block never run at the same time, but blocks of different launches may run on
// different host threads: the atomics are real. The GCC/Clang builtins, not std::atomic_ref
// (C++20): kernel sources are C++17.
template <typename T> inline T atomicCAS(T* address, T expected, T desired) noexcept {
  __atomic_compare_exchange(address, &expected, &desired, false, __ATOMIC_SEQ_CST,
                            __ATOMIC_SEQ_CST);
  return expected;
}
template <typename T> inline T atomicAdd(T* address, T value) noexcept {
  if constexpr (std::is_integral_v<T>) {
    return __atomic_fetch_add(address, value, __ATOMIC_SEQ_CST);
  } else {
    T seen;
    __atomic_load(address, &seen, __ATOMIC_RELAXED);
    T next = seen + value;
    while (
        !__atomic_compare_exchange(address, &seen, &next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
      next = seen + value;
    return seen;
  }
}
template <typename T> inline T atomicMax(T* address, T value) noexcept {
  T seen;
  __atomic_load(address, &seen, __ATOMIC_RELAXED);
  while (seen < value && !__atomic_compare_exchange(address, &seen, &value, true, __ATOMIC_SEQ_CST,
                                                    __ATOMIC_RELAXED)) {
  }
  return seen;
}
