// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// When a capture runs (libtdiag_capture.so, injected by the CUDA driver or linked in), launches
// registered here and the failures taken from the devices go into its trace. The runtime does not
// link the capture library: it finds the C entry points with dlsym and calls them when present.
// The signatures are the contract of capture/include/tensordiag/capture/hooks.h. Not API.
#pragma once

#include <atomic>
#include <cstdint>

namespace tdiag::assertions::detail {

using capture_launch_fn = void (*)(std::uint64_t launch_id, const char* kernel_name);
using capture_assertion_fn = void (*)(std::uint64_t launch_id, std::int32_t device,
                                      std::uint64_t stream, const char* site, const char* message,
                                      const std::uint32_t block[3], const std::uint32_t thread[3]);

struct capture_hooks {
  std::atomic<capture_launch_fn> launch{nullptr};
  std::atomic<capture_assertion_fn> assertion{nullptr};
};

/// The hooks found by the last refresh (null pointers when no capture library is loaded).
capture_hooks& current_capture_hooks() noexcept;

/// Looks the hooks up again: the driver loads an injected capture library during CUDA's
/// initialization, which may come after the runtime's start, so this runs whenever a device is
/// first used and at each reconfiguration.
void refresh_capture_hooks() noexcept;

} // namespace tdiag::assertions::detail
