// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A deterministic caching-allocator history shaped like a PyTorch memory snapshot: segments
// allocated on demand, blocks split from them first-fit, frees requested then completed, idle
// segments released, and the final state as the snapshot's `segments`. Every event is
// consistent with the state, so replay tests compare exact states. The allocator-history
// generator of the tests, the viewer's benchmarks and `tdiag-view --synthetic-snapshot`, when no
// real snapshot of that size is at hand.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>

namespace tdiag::trace {

/// A finalized trace with about `events` memory events on device 0 and its final state.
[[nodiscard]] trace make_snapshot_trace(std::size_t events, std::uint64_t seed = 1);

/// A shape the first one never takes: one segment cut into `blocks` blocks of 512 bytes (and 2
/// MiB free at its end), a quarter of them then freed and reallocated at random (a fragmented
/// cache, frees never merge), about `events` memory
/// events in all. Its bars hold far more blocks than pixels: the allocator view's worst case.
[[nodiscard]] trace make_fragmented_snapshot_trace(std::size_t events, std::size_t blocks = 4096,
                                                   std::uint64_t seed = 1);

} // namespace tdiag::trace
