// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Random memory histories for the replay's tests (replay_state_test.cpp, replay_split_test.cpp).
#pragma once

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/splitmix.hpp>
#include <tensordiag/trace/trace.hpp>

#include <array>
#include <cstdint>

namespace tdiag::trace::histories {

// A random history of `n` events on device 0 over few addresses, so that they collide;
// `overlapping`: some blocks also cover their neighbours' addresses.
inline trace random_history(std::uint64_t seed, std::size_t n, bool with_dump,
                            bool overlapping = true) {
  constexpr std::uint64_t base = 0x7f0000000000;
  constexpr std::array<std::uint64_t, 6> sizes{0, 1, 512, 4096, 6000, 1 << 20};
  constexpr std::array<memory_action, 8> actions{
      memory_action::alloc,          memory_action::alloc,
      memory_action::alloc,          memory_action::free_requested,
      memory_action::free_completed, memory_action::free_completed,
      memory_action::free_completed, memory_action::oom};
  splitmix64 rng{seed};
  trace t;
  const auto lane = t.lanes.memory(0);
  for (std::size_t i = 0; i < n; ++i) {
    memory_event e;
    e.time = static_cast<std::int64_t>(i + 1) * 1000;
    e.lane = lane;
    e.action = actions[rng.next() % actions.size()];
    // 64 slots 4 KiB apart: a 6000-byte or 1 MiB block covers its neighbours' addresses.
    e.address = base + (rng.next() % 64) * 4096 + (rng.next() % 8 == 0 ? 512 : 0);
    e.size = sizes[rng.next() % (overlapping ? sizes.size() : 3)];
    t.memory.push_back(e);
  }
  if (with_dump)
    t.final_allocator_state = allocator_state{}; // a snapshot whose dump has no segments
  t.finalize();
  return t;
}

// A lane mixing real segments (segment_alloc / free / map / unmap, a dump holding some) with
// implicit blocks outside them. `overlapping`: segments and blocks land anywhere, over each
// other; otherwise segments keep to regions of their own and the series' sums (which assume
// segments that do not overlap) hold. The dump, when there is one, is the vector replay's end
// state, so the initial state is derived backwards from it.
inline trace mixed_history(std::uint64_t seed, std::size_t n, bool with_dump, bool overlapping) {
  constexpr std::uint64_t base = 0x7f0000000000, region = 64 << 10, slot = 4096;
  constexpr std::uint64_t implicit_base = base + 16 * region; // 64 slots, no segment events
  splitmix64 rng{seed};
  std::array<std::uint64_t, 8> mapped{}; // !overlapping: bytes of each region's segment
  trace t;
  const auto lane = t.lanes.memory(0);
  const auto block_address = [&] {
    if (rng.below(3) == 0)
      return implicit_base + rng.below(64) * slot + (rng.below(8) == 0 ? 512 : 0);
    // In a region's first half, which its segment always covers when it has one.
    return base + rng.below(mapped.size()) * region + rng.below(8) * slot;
  };
  for (std::size_t i = 0; i < n; ++i) {
    memory_event e;
    e.time = static_cast<std::int64_t>(i + 1) * 1000;
    e.lane = lane;
    const auto pick = rng.below(20);
    const auto r = rng.below(mapped.size());
    if (pick < 16) {
      constexpr std::array<memory_action, 8> actions{
          memory_action::alloc,          memory_action::alloc,
          memory_action::alloc,          memory_action::free_requested,
          memory_action::free_completed, memory_action::free_completed,
          memory_action::free_completed, memory_action::oom};
      e.action = actions[rng.below(actions.size())];
      e.address = block_address();
      e.size = std::array<std::uint64_t, 4>{0, 1, 512, 6000}[rng.below(overlapping ? 4 : 3)];
    } else if (overlapping) {
      constexpr std::array<memory_action, 4> actions{
          memory_action::segment_alloc, memory_action::segment_free, memory_action::segment_map,
          memory_action::segment_unmap};
      e.action = actions[pick - 16];
      e.address = base + rng.below(16 * 16) * slot;
      e.size = (1 + rng.below(24)) * slot;
    } else if (mapped[r] == 0) {
      e.action = pick < 18 ? memory_action::segment_alloc : memory_action::segment_map;
      e.address = base + r * region;
      e.size = mapped[r] = rng.below(2) == 0 ? region / 2 : region;
    } else if (pick < 18 || mapped[r] == region / 2) {
      // Freed or unmapped whole, live blocks and all (a mismatch the replay keeps going past),
      // or grown by pages mapped at its end.
      e.action = pick == 16   ? memory_action::segment_free
                 : pick == 17 ? memory_action::segment_unmap
                              : memory_action::segment_map;
      e.address = base + r * region + (e.action == memory_action::segment_map ? mapped[r] : 0);
      e.size = e.action == memory_action::segment_map ? region - mapped[r] : mapped[r];
      mapped[r] = e.action == memory_action::segment_map ? region : 0;
    } else { // the second half unmapped (no block is ever there)
      e.action = memory_action::segment_unmap;
      e.address = base + r * region + region / 2;
      e.size = region / 2;
      mapped[r] = region / 2;
    }
    t.memory.push_back(e);
  }
  t.finalize();
  if (with_dump) {
    allocator_state end;
    for (const auto& e : t.memory.lane(memory_lane_of(t, 0)))
      apply_memory_event(end, e);
    t.final_allocator_state = std::move(end);
  }
  return t;
}

} // namespace tdiag::trace::histories
