// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Every compile-time knob of tensordiag, each overridable by defining it before this header
// (fmt's FMT_ASSERT idiom). The catalogue of macros is docs/macros.md.
#pragma once

// --- Host/device annotations: plain C++ when no GPU compiler is in use ------------------------
#if defined(__CUDACC__) || defined(__HIPCC__)
#  define TDIAG_HOST_DEVICE __host__ __device__
#  define TDIAG_DEVICE __device__
#  define TDIAG_HOST __host__
#else
#  define TDIAG_HOST_DEVICE
#  define TDIAG_DEVICE
#  define TDIAG_HOST
#endif

#if defined(__CUDACC__) && !defined(__HIP__)
#  define TDIAG_HAS_CUDA 1
#else
#  define TDIAG_HAS_CUDA 0
#endif
#if defined(__HIPCC__) || defined(__HIP__)
#  define TDIAG_HAS_HIP 1
#else
#  define TDIAG_HAS_HIP 0
#endif

// True while compiling device code (the CUDA or HIP device pass).
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#  define TDIAG_DEVICE_COMPILATION() 1
#else
#  define TDIAG_DEVICE_COMPILATION() 0
#endif

// TDIAG_IF_DEVICE(device_code, host_code): CCCL's NV_IF_TARGET in miniature.
#if TDIAG_DEVICE_COMPILATION()
#  define TDIAG_IF_DEVICE(device_code, host_code) device_code
#else
#  define TDIAG_IF_DEVICE(device_code, host_code) host_code
#endif

#define TDIAG_DETAIL_STRINGIZE_IMPL(x) #x
#define TDIAG_DETAIL_STRINGIZE(x) TDIAG_DETAIL_STRINGIZE_IMPL(x)

#if defined(__GNUC__) || defined(__clang__)
#  define TDIAG_DETAIL_UNLIKELY(x) __builtin_expect(!!(x), 0)
#  define TDIAG_DETAIL_NOINLINE __attribute__((noinline))
#else
#  define TDIAG_DETAIL_UNLIKELY(x) (x)
#  define TDIAG_DETAIL_NOINLINE
#endif

// --- Internal invariants (not the product's TDIAG_ASSERT family) ------------------------------
namespace tdiag::detail {
[[noreturn]] void assert_fail(const char* condition, const char* message, const char* file,
                              int line);
} // namespace tdiag::detail

#ifdef TDIAG_DETAIL_ASSERT // Use the provided definition.
#elif defined(TDIAG_ENABLE_INTERNAL_ASSERTIONS) && !TDIAG_DEVICE_COMPILATION()
#  define TDIAG_DETAIL_ASSERT(cond, msg)                                                           \
    (TDIAG_DETAIL_UNLIKELY(!(cond)) ? ::tdiag::detail::assert_fail(#cond, msg, __FILE__, __LINE__) \
                                    : (void)0)
#else
#  define TDIAG_DETAIL_ASSERT(cond, msg) ((void)sizeof(cond), (void)(msg))
#endif

// Always on: checks that must never be skipped, even in release builds.
#ifndef TDIAG_DETAIL_VERIFY
#  define TDIAG_DETAIL_VERIFY(cond, msg)                                                           \
    (TDIAG_DETAIL_UNLIKELY(!(cond)) ? ::tdiag::detail::assert_fail(#cond, msg, __FILE__, __LINE__) \
                                    : (void)0)
#endif
