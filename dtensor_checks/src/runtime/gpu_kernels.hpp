// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: host launchers of the runtime-check kernels (gpu_scan_kernels.cu). C++17 and free of
// GPU headers, so the host back-end and the benchmarks include it from plain C++.
#pragma once

#include <cstdint>

namespace tdiag::dtensor::runtime::gpu_kernels {

inline constexpr int threads_per_block = 256;

enum class element_kind : std::uint8_t { float32, float64, float16, bfloat16 };

/// Each returns the runtime's error code (0 = success) of the launch; `stream` is a
/// cudaStream_t or hipStream_t. Results are added to `out`/`counts`, which the caller clears.

/// out[0] += sum of word_hash over `words` 32-bit words (not the length or a partial tail word).
int launch_hash_words(const void* data, std::uint64_t words, bool vector_loads,
                      unsigned long long* out, unsigned grid, void* stream);
/// out[b] += the full hash (length and tail included) of block b of `block_bytes` bytes.
int launch_hash_blocks(const void* data, std::uint64_t bytes, std::uint64_t block_bytes,
                       std::uint64_t blocks, unsigned long long* out, unsigned grid_x,
                       void* stream);
/// counts[0..2] += NaN, +Inf, -Inf; counts[3], counts[4] = min(first NaN, first Inf); the caller
/// sets counts[3..4] to all ones first.
int launch_scan_nonfinite(const void* data, std::uint64_t count, element_kind kind,
                          unsigned long long* counts, unsigned grid, void* stream);

} // namespace tdiag::dtensor::runtime::gpu_kernels
