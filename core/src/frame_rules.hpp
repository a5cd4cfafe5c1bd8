// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// How to step from a frame to its caller, per return address, learned from the DWARF unwinder.
// The unwinder is always right but interprets call-frame information for every frame (about
// 100 ns a frame); a launch site's stack repeats, so once a return address has been unwound its
// rule (where the caller's frame starts, where the caller's frame pointer was saved) is a table
// lookup. Only rules the unwinder produced are ever used: an unknown address sends the capture
// back to the unwinder.
#pragma once

#include <cstdint>

namespace tdiag::detail {

enum class frame_rule_kind : std::uint8_t {
  none,          ///< not known: unwind this stack with the DWARF unwinder
  frame_pointer, ///< the function keeps a frame pointer: caller's frame at fp + 16
  stack_offset,  ///< caller's frame at sp + cfa_offset (no frame pointer at this address)
  end,           ///< the outermost frame of its thread
};

struct frame_rule {
  frame_rule_kind kind = frame_rule_kind::none;
  bool fp_saved = false; ///< stack_offset: the caller's fp is at cfa + fp_offset, else unchanged
  std::int16_t fp_offset = 0;
  std::uint32_t cfa_offset = 0;
};

/// The rule learned for return address `ip`, or kind none.
[[nodiscard]] frame_rule find_frame_rule(std::uintptr_t ip) noexcept;

/// Records the rule for `ip` (the first rule learned for an address stays). Lock-free; once the
/// table is full, nothing more is learned and captures of new stacks keep using the unwinder.
void learn_frame_rule(std::uintptr_t ip, frame_rule rule) noexcept;

} // namespace tdiag::detail
