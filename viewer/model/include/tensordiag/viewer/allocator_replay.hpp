// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One step of caching-allocator replay, forwards (apply) and backwards (undo), on an
// allocator_state holding one device's segments sorted by address. Undo lets the state before
// the first recorded event be derived from a snapshot's final `segments`, as memory_viz does:
// the ring buffer may have dropped the start of the history.
//
// Input comes from outside and may be inconsistent (a free of an unknown block, an alloc outside
// every segment): such steps change what they can and never fail. An alloc outside every
// segment creates an implicit segment of exactly its size (pool = implicit_pool) that vanishes
// when the block is freed, so traces without segment events (Kineto) still show their blocks.
#pragma once

#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/events.hpp>

#include <cstdint>

namespace tdiag::view {

inline constexpr std::uint64_t implicit_pool = ~std::uint64_t{0};

/// True for the actions that change segments or blocks.
[[nodiscard]] bool changes_allocator_state(trace::memory_action a) noexcept;

/// Applies `e` to `s` (same device). Not for actions where changes_allocator_state() is false.
void apply_event(trace::allocator_state& s, const trace::memory_event& e);

/// Reverts `e` on `s`, the state just after `e`. `has_requested` says whether the history has
/// free_requested events: undoing a free_completed then leaves the block pending, else allocated.
void undo_event(trace::allocator_state& s, const trace::memory_event& e, bool has_requested);

} // namespace tdiag::view
