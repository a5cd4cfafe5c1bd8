// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one include for kernel sources written once for CUDA, HIP and the CPU back-end: the GPU
// runtime header under nvcc / hipcc, the CPU compatibility layer otherwise, then the assertion
// macros. TDIAG_DYNAMIC_SHARED(type, name) declares the dynamic shared memory everywhere.
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#  include <hip/hip_runtime.h>
#  define TDIAG_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#elif defined(__CUDACC__)
#  include <cuda_runtime.h>
#  define TDIAG_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#else
#  include <tensordiag/assertions/cpu_kernel.hpp>
#endif

#include <tensordiag/assertions/assert.h>
