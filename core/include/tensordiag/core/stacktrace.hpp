// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Host stack traces in two steps: capture raw return addresses cheaply (on hot paths such as a
// kernel launch), symbolize only when a report is rendered.
#pragma once

#include <tensordiag/core/report.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace tdiag {

/// Raw return addresses, innermost first. Trivially copyable so it can sit in lock-free rings.
struct raw_stack {
  static constexpr std::uint32_t max_frames = 32;
  std::array<std::uintptr_t, max_frames> frames{};
  std::uint32_t size = 0;
};

/// Captures the calling thread's stack, skipping `skip` frames above the caller. Never throws,
/// never allocates.
[[nodiscard]] raw_stack capture_raw_stack(std::uint32_t skip = 0) noexcept;

namespace detail {
/// capture_raw_stack() through the DWARF unwinder alone, without the rules learned from earlier
/// captures: the reference the learned walk is tested against.
[[nodiscard]] raw_stack unwind_raw_stack(std::uint32_t skip = 0) noexcept;
} // namespace detail

/// Resolves function, file, line and module for each address (Boost.Stacktrace). Slow: call it
/// when a report is built, never on a hot path.
/// A C++ symbol's name as written (`_Z12phase_kernelILi3EEvPi` -> `void phase_kernel<3>(int*)`);
/// a name that is not mangled (extern "C", already demangled) comes back as it is; "" for nullptr.
[[nodiscard]] std::string demangle(const char* symbol);

/// `inlined`: a call inlined into its caller gives both frames, innermost first (more frames than
/// addresses); else one frame per address, the innermost.
[[nodiscard]] std::vector<stack_frame> symbolize(const raw_stack& stack, bool inlined = true);

} // namespace tdiag
