// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CUDA back-end (built when TDIAG_WITH_CUDA): failure buffers in pinned host-mapped memory,
// bound into every GPU module that includes assert.h, and launches through cudaLaunchKernel with
// the launch id encoded as a launch slot in the dynamic shared memory size (docs/assertions.md).
// The runtime registers it with priority 100, so it is chosen whenever a CUDA device is present.
#pragma once

#include <tensordiag/core/backend.hpp>

#include <memory>

namespace tdiag::assertions {

/// The process-wide CUDA back-end (device_count() is 0 when no GPU or driver is present).
[[nodiscard]] std::shared_ptr<backend> cuda_backend();

} // namespace tdiag::assertions
