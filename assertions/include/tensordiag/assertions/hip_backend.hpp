// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The HIP back-end (library tensordiag_assertions_hip, built when TDIAG_WITH_HIP): failure
// buffers in coherent pinned host-mapped memory, or in device memory read by copy where the link
// has no PCIe atomics; bound into every GPU module that includes assert.h; launches through
// hipLaunchKernel with the launch id encoded as a launch slot in the dynamic shared memory size
// (docs/assertions.md). The first call registers it with priority 90. Never run on AMD hardware.
#pragma once

#include <tensordiag/core/backend.hpp>

#include <memory>

namespace tdiag::assertions {

/// The process-wide HIP back-end (device_count() is 0 when no AMD GPU or driver is present).
/// The first call registers it (priority 90); the runtime does not call it by itself.
[[nodiscard]] std::shared_ptr<backend> hip_backend();

} // namespace tdiag::assertions
