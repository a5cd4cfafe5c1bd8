// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The GPU scan back-end (tensordiag_dtensor_gpu, built with CUDA, and with HIP through hipcc):
// replica hashes, block hashes and NaN/Inf scans in device kernels over plain device allocations.
// Hash values equal host_hash() of the same bytes. Plain C++ header: no GPU headers needed.
#pragma once

#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <memory>

namespace tdiag::dtensor::runtime {

/// Number of usable GPUs; 0 when there is no device or no driver (never throws).
[[nodiscard]] int gpu_device_count() noexcept;

/// A back-end for device memory of the current device, launching on `stream` (a cudaStream_t or
/// hipStream_t; nullptr = the default stream). Calls synchronise the stream before returning.
/// Throws tdiag::error when no device is usable.
[[nodiscard]] std::unique_ptr<scan_backend> make_gpu_scan_backend(void* stream = nullptr);

} // namespace tdiag::dtensor::runtime
