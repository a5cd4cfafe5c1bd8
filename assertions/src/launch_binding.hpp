// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Binding plain launches (TDIAG_BIND=cupti): a launch made without tensordiag (<<<>>>,
// cudaLaunchKernel(Ex), cuLaunchKernel(Ex), a library's launcher, a CUDA graph launch) is
// registered by a CUPTI callback on the launching thread, with its grid, block, stream, host
// thread and launch-site stack. A failing thread of such a launch records the launch's %gridid;
// CUPTI's kernel activity records pair that grid id with the correlation id of the API call that
// made the launch, which the callback registered. Not API.
#pragma once

#include <tensordiag/assertions/launch_registry.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tdiag::assertions::detail {

/// What the binding knows of one plain launch.
struct bound_launch {
  std::optional<launch_info> info; ///< the API call's side; nullopt once the registry lost it
  std::string kernel;              ///< the kernel's name as the driver has it (demangled)
  extent3 grid;                    ///< as the GPU ran it
  extent3 block;
  std::uint64_t shared_memory = 0; ///< dynamic shared memory
  std::uint32_t graph_id = 0;      ///< CUPTI's graph id when the kernel ran as a graph node
  std::uint64_t correlation = 0;   ///< CUPTI's correlation id of the launching call
  /// Runs of this grid id since it was last looked up: a graph's kernel node keeps its grid id
  /// over replays, so above 1 the failure may belong to an earlier replay than the one named.
  std::uint32_t runs = 1;
};

/// Starts (`on`) or stops binding plain launches through CUPTI. Returns an empty string, or why
/// it cannot bind (no CUPTI library, another CUPTI subscriber such as a profiler, a CUPTI error).
/// Idempotent. Without CUDA it always says why not.
[[nodiscard]] std::string set_cupti_binding(bool on);

/// Whether plain launches are being bound.
[[nodiscard]] bool cupti_binding_active() noexcept;

/// The plain launch that ran as grid `grid_id` on `device`, flushing CUPTI's buffers once when
/// its activity record has not arrived yet. nullopt when it is not known (binding off, the launch
/// came before binding started, or its record was evicted).
[[nodiscard]] std::optional<bound_launch> find_bound_launch(int device, std::uint64_t grid_id);

} // namespace tdiag::assertions::detail
