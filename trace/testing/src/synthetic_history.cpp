// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/splitmix.hpp>
#include <tensordiag/trace/synthetic_history.hpp>

#include <fmt/format.h>

#include <array>
#include <vector>

namespace tdiag::trace {
namespace {

stack_id site_stack(trace& t, std::uint32_t i) {
  const std::array<frame_id, 2> frames{
      t.stacks.intern_frame({t.strings.intern(fmt::format("layer_{}.forward", i)),
                             t.strings.intern("model.py"), 20 + 3 * i}),
      t.stacks.intern_frame({t.strings.intern("train_step"), t.strings.intern("train.py"), 88})};
  return t.stacks.intern_stack(frames);
}

// A history being generated: each event is applied to `state` as it is appended, so every
// event is consistent with the state before it and `state` ends as the snapshot's segments.
struct history {
  trace t;
  allocator_state state;
  splitmix64 r;
  lane_id lane;
  std::vector<stack_id> sites;
  std::int64_t now = 1'000'000;
  std::int64_t gap_min; // ns between events: gap_min + [0, gap_spread)
  std::uint64_t gap_spread;

  history(std::uint64_t seed, std::int64_t gap_min_ns, std::uint64_t gap_spread_ns)
      : r{seed}, lane(t.lanes.memory(0)), gap_min(gap_min_ns), gap_spread(gap_spread_ns) {
    t.metadata.format = "synthetic-snapshot";
    for (std::uint32_t i = 0; i < 12; ++i)
      sites.push_back(site_stack(t, i));
  }
  void emit(memory_action a, std::uint64_t address, std::uint64_t size, stack_id stack) {
    memory_event e;
    e.time = now;
    now += gap_min + static_cast<std::int64_t>(r.below(gap_spread));
    e.lane = lane;
    e.action = a;
    e.address = address;
    e.size = size;
    e.stack = stack;
    e.stream = 7;
    apply_memory_event(state, e);
    t.memory.push_back(e);
  }
  trace finish() {
    state.time = now;
    t.final_allocator_state = std::move(state);
    t.finalize();
    return std::move(t);
  }
};

struct live_block {
  std::uint64_t address;
  std::uint64_t size;
  bool requested;
};

} // namespace

trace make_snapshot_trace(std::size_t events, std::uint64_t seed) {
  history h(seed, 200, 2000);
  auto& r = h.r;
  auto& state = h.state;
  const auto& sites = h.sites;
  auto emit = [&h](memory_action a, std::uint64_t address, std::uint64_t size, stack_id stack) {
    h.emit(a, address, size, stack);
  };
  std::vector<live_block> live;
  std::uint64_t next_segment = 0x7f0000000000ull;

  std::size_t emitted = 0;
  while (emitted < events) {
    const bool do_alloc = live.size() < 64 || (live.size() < 4000 && r.below(100) < 52);
    if (do_alloc) {
      const std::uint64_t size = (1 + r.below(r.below(10) == 0 ? 16384 : 512)) * 512;
      const stack_id site = sites[r.below(sites.size())];
      // First fit in a few random segments, else a new segment.
      std::uint64_t where = 0;
      for (int attempt = 0; attempt < 4 && where == 0 && !state.segments.empty(); ++attempt) {
        const auto& seg = state.segments[r.below(state.segments.size())];
        for (const auto& b : seg.blocks)
          if (b.state == block_state::inactive && b.size >= size) {
            where = b.address;
            break;
          }
      }
      if (where == 0) {
        const std::uint64_t seg_size = std::max<std::uint64_t>(size, 20u << 20);
        emit(memory_action::segment_alloc, next_segment, seg_size, site);
        where = next_segment;
        next_segment += seg_size + (2u << 20);
        ++emitted;
      }
      emit(memory_action::alloc, where, size, site);
      live.push_back({where, size, false});
      ++emitted;
    } else {
      const std::size_t v = r.below(live.size());
      const live_block b = live[v];
      live[v] = live.back();
      live.pop_back();
      emit(memory_action::free_requested, b.address, b.size, no_stack);
      emit(memory_action::free_completed, b.address, b.size, no_stack);
      emitted += 2;
      // Release a segment that became empty, now and then (as empty_cache would).
      if (r.below(8) == 0) {
        for (const auto& seg : state.segments)
          if (seg.blocks.size() == 1 && seg.blocks.front().state == block_state::inactive) {
            emit(memory_action::segment_free, seg.address, seg.total_size, no_stack);
            ++emitted;
            break;
          }
      }
    }
  }
  return h.finish();
}

trace make_fragmented_snapshot_trace(std::size_t events, std::size_t blocks, std::uint64_t seed) {
  history h(seed, 100, 900);
  auto& r = h.r;
  const auto& sites = h.sites;
  auto emit = [&h](memory_action a, std::uint64_t address, std::uint64_t size, stack_id stack) {
    h.emit(a, address, size, stack);
  };
  constexpr std::uint64_t block_bytes = 512;
  const std::uint64_t base = 0x7f0000000000ull;
  blocks = std::max<std::size_t>(blocks / 2 * 2, 2);
  // 2 MiB spare at the end: the allocator hands out a whole free block when less than 1 MiB
  // would remain (trace's should_split rule), which would merge the last blocks into one.
  emit(memory_action::segment_alloc, base, blocks * block_bytes + (2u << 20), sites[0]);
  for (std::size_t i = 0; i < blocks; ++i)
    emit(memory_action::alloc, base + i * block_bytes, block_bytes, sites[r.below(sites.size())]);
  std::vector<bool> live(blocks / 2, true);
  for (std::size_t k = 0; k < blocks / 2; k += 2) {
    emit(memory_action::free_requested, base + 2 * k * block_bytes, block_bytes, no_stack);
    emit(memory_action::free_completed, base + 2 * k * block_bytes, block_bytes, no_stack);
    live[k] = false;
  }
  while (h.t.memory.size() < events) {
    const std::size_t k = r.below(live.size());
    const std::uint64_t address = base + 2 * k * block_bytes;
    if (live[k]) {
      emit(memory_action::free_requested, address, block_bytes, no_stack);
      emit(memory_action::free_completed, address, block_bytes, no_stack);
    } else {
      emit(memory_action::alloc, address, block_bytes, sites[r.below(sites.size())]);
    }
    live[k] = !live[k];
  }
  return h.finish();
}

} // namespace tdiag::trace
