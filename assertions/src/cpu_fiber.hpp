// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The CPU back-end's grid runner: blocks in sequence on the calling host thread, the threads of a
// block as ucontext fibers. Private to the assertions library.
#pragma once

#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/backend.hpp>

#include <cstddef>
#include <cstdint>

namespace tdiag::assertions::cpu_detail {

/// The launch the calling host thread is running, visible to the failure path.
struct launch_context {
  const launch_request* request = nullptr;
  buffer_header* buffer = nullptr; ///< nullptr when no buffer is bound (runtime off)
  std::uint32_t linear_thread = 0; ///< of the running fiber, for the lane
};

/// Runs every block of `request`; returns `trapped` when a trapping assertion aborted it.
/// Rethrows an exception that escaped a kernel thread (after abandoning the launch).
launch_status run_grid(const launch_request& request, buffer_header* buffer,
                       std::size_t stack_bytes);

/// The calling thread's current launch, or nullptr outside a CPU-back-end kernel.
[[nodiscard]] launch_context* current_launch() noexcept;

/// Ends the calling GPU thread (its fiber is abandoned, as `exit` abandons a GPU thread); with
/// `abort_launch` the whole launch stops (trap). Only valid while current_launch() != nullptr.
[[noreturn]] void stop_current_thread(bool abort_launch) noexcept;

/// The default fiber stack size: TDIAG_CPU_STACK_KB, else 64 KiB (256 KiB under sanitizers).
[[nodiscard]] std::size_t default_stack_bytes() noexcept;

} // namespace tdiag::assertions::cpu_detail
