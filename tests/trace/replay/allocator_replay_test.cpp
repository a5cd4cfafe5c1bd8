// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/snapshot_import.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace {

using namespace tdiag::trace;

std::filesystem::path shared(const char* name) {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / name;
}

allocator_state normalized(allocator_state s, bool strict = true) {
  normalize(s, strict);
  s.time = 0;
  return s;
}

memory_event make_event(memory_action action, std::uint64_t address, std::uint64_t size) {
  memory_event e;
  e.action = action;
  e.address = address;
  e.size = size;
  return e;
}

lane_id memory_lane(const trace& t) {
  return t.memory.all().front().lane;
}

TEST(AllocatorReplay, TrainingSnapshotHistoryIsComplete) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const allocator_replay replay(t, memory_lane(t));
  // Every one of the 45 segments has its segment_alloc in the history: nothing before it.
  EXPECT_TRUE(replay.initial_state().segments.empty());
  EXPECT_EQ(replay.mismatches(), 0u);
  // Forward replay reproduces the dumped state (requested sizes and stacks aside: events do
  // not carry requested sizes).
  EXPECT_EQ(normalized(replay.state_at(replay.size()), false),
            normalized(*t.final_allocator_state, false));
  // Peak of requested bytes over the replay (Python: running sum of alloc - free_requested
  // sizes peaks at 853,600,280 after entry 1273). Blocks may be larger than requested when the
  // allocator does not split off a small rest.
  std::uint64_t peak = 0;
  std::size_t peak_index = 0;
  replay_cursor cursor(replay);
  for (std::size_t i = 1; i <= replay.size(); ++i) {
    std::uint64_t bytes = 0;
    for (const auto& seg : cursor.seek(i).segments)
      for (const auto& b : seg.blocks)
        if (b.state == block_state::active_allocated)
          bytes += b.requested_size;
    if (bytes > peak) {
      peak = bytes;
      peak_index = i - 1;
    }
  }
  EXPECT_EQ(peak, 853600280u);
  EXPECT_EQ(peak_index, 1273u);
}

TEST(AllocatorReplay, OomSnapshotStateDerivedBackwards) {
  const auto path = shared("oom_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const allocator_replay replay(t, memory_lane(t));
  // 3 of the 9 dumped segments predate the history (2 x 32 MiB and one 2 MiB).
  const auto& initial = replay.initial_state();
  ASSERT_EQ(initial.segments.size(), 3u);
  EXPECT_EQ(initial.reserved_bytes(), 2u * 33554432u + 2097152u);
  EXPECT_EQ(initial.allocated_bytes(), 2u * 33554432u + 1048576u);
  EXPECT_EQ(replay.mismatches(), 0u);
  EXPECT_EQ(normalized(replay.state_at(replay.size()), false),
            normalized(*t.final_allocator_state, false));
  // Just before the oom entry (index 22) the two freed 256 MiB segments are gone.
  EXPECT_EQ(replay.state_at(20).reserved_bytes(), initial.reserved_bytes() + 8u * 268435456u);
  EXPECT_EQ(replay.state_at(22).reserved_bytes(), initial.reserved_bytes() + 6u * 268435456u);
}

TEST(AllocatorReplay, IncrementalEqualsFromScratchAtRandomPoints) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  const allocator_replay replay(t, memory_lane(t), 97); // many keyframes
  std::mt19937 rng(42);
  std::uniform_int_distribution<std::size_t> pick(0, replay.size());
  replay_cursor cursor(replay);
  for (int round = 0; round < 300; ++round) {
    const auto index = pick(rng);
    const auto scratch = replay.replay_from_start(index);
    ASSERT_EQ(replay.state_at(index), scratch) << "keyframe replay differs at " << index;
    ASSERT_EQ(cursor.seek(index), scratch) << "cursor differs at " << index;
    // Small forward steps go the incremental way.
    const auto next = std::min(index + 1 + index % 5, replay.size());
    ASSERT_EQ(cursor.seek(next), replay.replay_from_start(next)) << "step to " << next;
  }
}

TEST(AllocatorReplay, ApplyAndUndoAreInverse) {
  allocator_state s;
  const memory_event seg = make_event(memory_action::segment_alloc, 0x1000, 0x1000);
  const memory_event a = make_event(memory_action::alloc, 0x1400, 0x100);
  memory_event fr = a, fc = a;
  fr.action = memory_action::free_requested;
  fc.action = memory_action::free_completed;
  const memory_event all[] = {seg, a, fr, fc};
  std::vector<allocator_state> states{s};
  for (const auto& e : all) {
    ASSERT_TRUE(apply_memory_event(s, e));
    s.time = 0;
    states.push_back(s);
  }
  // A request of 256 B takes a block of 512 (the caching allocator's round_size).
  ASSERT_EQ(states[2].segments[0].blocks.size(), 3u);
  EXPECT_EQ(states[2].segments[0].blocks[1].requested_size, 0x100u);
  EXPECT_EQ(states[2].allocated_bytes(), 0x200u);
  EXPECT_EQ(states[3].allocated_bytes(), 0u);
  EXPECT_EQ(states[3].segments[0].active_bytes(), 0x200u);
  EXPECT_EQ(states[4].segments[0].blocks.size(), 1u); // merged back
  for (std::size_t i = 4; i-- > 0;) {
    ASSERT_TRUE(undo_memory_event(s, all[i]));
    s.time = 0;
    EXPECT_EQ(normalized(s, false), normalized(states[i], false)) << i;
  }
  // A free of a block that is not there is a mismatch.
  EXPECT_FALSE(apply_memory_event(s, fc));
}

// A snapshot's entries give the request (torch records orig_size); the caching allocator's block
// is rounded up to 512 B. Carving the request instead left a free sliver after every small
// tensor and a final state short of the dump (found on public CS336 and EoR_NN snapshots).
TEST(AllocatorReplay, RequestsTakeRoundedBlocks) {
  constexpr std::uint64_t base = 0x10000000, big = 20u << 20;
  allocator_state s;
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_alloc, base, big)));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::alloc, base, 4)));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::alloc, base + 512, 1000)));
  const auto& blocks = s.segments.at(0).blocks;
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].size, 512u);
  EXPECT_EQ(blocks[0].requested_size, 4u);
  EXPECT_EQ(blocks[1].address, base + 512);
  EXPECT_EQ(blocks[1].size, 1024u);
  EXPECT_EQ(blocks[1].requested_size, 1000u);
  EXPECT_EQ(blocks[2].address, base + 1536); // no free sliver between them
  EXPECT_EQ(s.allocated_bytes(), 1536u);
  // Undoing a free of the request makes the same rounded block again.
  const auto before = normalized(s);
  const auto free4 = make_event(memory_action::free_completed, base, 4);
  ASSERT_TRUE(apply_memory_event(s, free4));
  EXPECT_EQ(s.allocated_bytes(), 1024u);
  ASSERT_TRUE(undo_memory_event(s, free4, false));
  EXPECT_EQ(normalized(s), before);

  // A segment smaller than the rounded request (a damaged dump): the block ends with it.
  allocator_state odd;
  ASSERT_TRUE(apply_memory_event(odd, make_event(memory_action::segment_alloc, base, 0x300)));
  ASSERT_TRUE(apply_memory_event(odd, make_event(memory_action::alloc, base, 0x280)));
  EXPECT_EQ(odd.allocated_bytes(), 0x300u);

  // Outside every segment (Kineto, CUPTI, a host allocator) the block is what the source gave.
  allocator_state implicit;
  ASSERT_TRUE(apply_memory_event(implicit, make_event(memory_action::alloc, base, 4)));
  EXPECT_EQ(implicit.allocated_bytes(), 4u);
}

// The caching allocator's sizes (CUDACachingAllocator's round_size and get_allocation_size).
TEST(AllocatorReplay, CachingAllocatorSizes) {
  constexpr std::uint64_t mib = 1 << 20;
  EXPECT_EQ(caching_block_size(0), 512u);
  EXPECT_EQ(caching_block_size(4), 512u);
  EXPECT_EQ(caching_block_size(512), 512u);
  EXPECT_EQ(caching_block_size(513), 1024u);
  EXPECT_EQ(caching_block_size(~std::uint64_t{0}), ~std::uint64_t{0}); // never wraps to 0
  EXPECT_EQ(caching_segment_size(4), 2 * mib);
  EXPECT_EQ(caching_segment_size(mib), 2 * mib);
  EXPECT_EQ(caching_segment_size(mib + 1), 20 * mib);
  EXPECT_EQ(caching_segment_size(10 * mib - 512), 20 * mib);
  EXPECT_EQ(caching_segment_size(10 * mib), 10 * mib);
  EXPECT_EQ(caching_segment_size(11 * mib + 1), 12 * mib);
  EXPECT_EQ(caching_segment_size(~std::uint64_t{0}), ~std::uint64_t{0});
}

// Replayed from the dump back and forward again, a history of small requests ends in the dump.
TEST(AllocatorReplay, SmallRequestsReplayToTheDump) {
  constexpr std::uint64_t base = 0x20000000, small = 2u << 20;
  trace t;
  const auto lane = t.lanes.memory(0);
  const std::uint64_t requests[] = {4, 600, 8, 513};
  std::uint64_t at = base;
  allocator_state dump;
  dump.segments.push_back({});
  auto& seg = dump.segments.back();
  seg.address = base;
  seg.total_size = small;
  seg.type = segment_type::small;
  auto add = [&](memory_action a, std::uint64_t address, std::uint64_t size) {
    auto e = make_event(a, address, size);
    e.lane = lane;
    e.time = static_cast<std::int64_t>(t.memory.size());
    t.memory.push_back(e);
  };
  add(memory_action::segment_alloc, base, small);
  for (const auto r : requests) {
    add(memory_action::alloc, at, r);
    seg.blocks.push_back({at, (r + 511) / 512 * 512, r, block_state::active_allocated, no_stack});
    at += seg.blocks.back().size;
  }
  seg.blocks.push_back({at, base + small - at, 0, block_state::inactive, no_stack});
  t.final_allocator_state = dump;
  t.finalize();
  const allocator_replay replay(t, lane);
  EXPECT_EQ(replay.mismatches(), 0u);
  EXPECT_TRUE(replay.initial_state().segments.empty());
  EXPECT_EQ(normalized(replay.state_at(replay.size())), normalized(dump));
  EXPECT_EQ(replay.state_at(replay.size()).allocated_bytes(), 512u + 1024 + 512 + 1024);
}

TEST(AllocatorReplay, KinetoPlainFreesReplayThroughImplicitSegments) {
  const auto path = shared("train_trace_small.json.gz");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_kineto_file(path).trace;
  const auto lane = memory_lane_of(t, 0);
  ASSERT_LT(lane, t.lanes.size());
  const allocator_replay replay(t, lane);
  // 489 allocs and 489 plain frees (Python: every free pairs with an earlier alloc).
  ASSERT_EQ(replay.size(), 978u);
  EXPECT_EQ(replay.mismatches(), 0u);
  EXPECT_FALSE(replay.two_step_frees());
  EXPECT_TRUE(replay.initial_state().segments.empty());
  // Implicit segments hold blocks, not driver memory; all freed at the end.
  std::size_t most = 0;
  replay_cursor cursor(replay);
  for (std::size_t i = 0; i <= replay.size(); ++i) {
    const auto& s = cursor.seek(i);
    most = std::max(most, s.segments.size());
    for (const auto& seg : s.segments)
      ASSERT_EQ(seg.pool, implicit_pool);
    ASSERT_EQ(s.reserved_bytes(), 0u);
  }
  EXPECT_GT(most, 10u);
  EXPECT_TRUE(replay.state_at(replay.size()).segments.empty());
  EXPECT_EQ(&replay.events()[0], &t.memory.all()[replay.first_index()]);
}

TEST(AllocatorReplay, PlainFreeUndoesToAllocated) {
  const memory_event a = make_event(memory_action::alloc, 0x5000, 0x100);
  const memory_event f = make_event(memory_action::free_completed, 0x5000, 0x100);
  allocator_state s;
  EXPECT_TRUE(apply_memory_event(s, a)); // no segments reported: consistent
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].pool, implicit_pool);
  EXPECT_EQ(s.allocated_bytes(), 0x100u);
  EXPECT_TRUE(apply_memory_event(s, f));
  EXPECT_TRUE(s.segments.empty());
  // Backwards: a plain free was an allocated block before, not a pending one.
  EXPECT_TRUE(undo_memory_event(s, f, false));
  ASSERT_EQ(s.segments.size(), 1u);
  EXPECT_EQ(s.segments[0].blocks[0].state, block_state::active_allocated);
  EXPECT_TRUE(undo_memory_event(s, a, false));
  EXPECT_TRUE(s.segments.empty());
  // With reported segments, an alloc outside them is a mismatch (the block is still kept).
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_alloc, 0x100000, 0x1000)));
  EXPECT_FALSE(apply_memory_event(s, a));
  EXPECT_EQ(s.allocated_bytes(), 0x100u);
}

TEST(AllocatorReplay, BudgetedKeyframesStayWithinBudgetAndAgree) {
  const auto path = shared("train_snapshot.pickle");
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared data absent";
  const auto t = import_snapshot_file(path).trace;
  replay_options o;
  o.keyframe_budget_bytes = 64 << 10;
  const allocator_replay replay(t, memory_lane(t), o);
  EXPECT_GT(replay.keyframe_interval(), 64u);
  EXPECT_LE(replay.keyframe_count(), replay.size() / replay.keyframe_interval() + 1);
  EXPECT_EQ(replay.max_reserved(), 994050048u);
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> pick(0, replay.size());
  for (int round = 0; round < 40; ++round) {
    const auto index = pick(rng);
    ASSERT_EQ(replay.state_at(index), replay.replay_from_start(index)) << index;
  }
}

} // namespace

namespace {

// Device d has d + 1 segments in the dump, listed out of order; each replay starts from its own
// device's segments only (one binary search per lane after finalize(), not a scan of all).
TEST(AllocatorReplay, EachDeviceStartsFromItsOwnSegments) {
  trace t;
  constexpr std::int32_t devices = 5;
  allocator_state dump;
  for (std::int32_t d = devices; d-- > 0;) {
    (void)t.lanes.memory(d);
    for (std::int32_t k = 0; k <= d; ++k) {
      segment s;
      s.device = d;
      s.address = 0x100000u * static_cast<std::uint64_t>(k + 1);
      s.total_size = 0x1000;
      s.blocks.push_back({});
      s.blocks.back().address = s.address;
      s.blocks.back().size = s.total_size;
      dump.segments.push_back(s);
    }
  }
  t.final_allocator_state = dump;
  t.finalize();
  for (std::int32_t d = 0; d < devices; ++d) {
    const auto lane = memory_lane_of(t, d);
    ASSERT_LT(lane, t.lanes.size()) << d;
    EXPECT_EQ(t.lanes.at(lane).group, d);
    const allocator_replay replay(t, lane);
    const auto& start = replay.initial_state().segments;
    ASSERT_EQ(start.size(), static_cast<std::size_t>(d + 1)) << d;
    for (const auto& s : start)
      EXPECT_EQ(s.device, d);
    EXPECT_EQ(replay.initial_state().reserved_bytes(), 0x1000u * static_cast<unsigned>(d + 1));
  }
  EXPECT_EQ(memory_lane_of(t, devices), t.lanes.size()); // no such device
}

// A damaged snapshot can hold a zero-size segment: an alloc at its address lands in an implicit
// segment of its own instead of dereferencing a failed look-up (found by the fuzzer, UBSan).
TEST(AllocatorReplay, AllocBesideAZeroSizeSegmentIsKept) {
  allocator_state s;
  segment empty;
  empty.address = 0x1000;
  empty.blocks.push_back({0x1000, 0, 0, block_state::inactive, no_stack});
  s.segments.push_back(empty);
  EXPECT_FALSE(apply_memory_event(s, make_event(memory_action::alloc, 0x1000, 0x10)));
  EXPECT_EQ(s.allocated_bytes(), 0x10u);
  EXPECT_EQ(s.segments.size(), 2u);
}

// Pages mapped below an existing segment make a new expandable segment, not the last one.
TEST(AllocatorReplay, MappedPagesMarkTheirOwnSegmentExpandable) {
  allocator_state s;
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_alloc, 0x900000, 0x1000)));
  ASSERT_TRUE(apply_memory_event(s, make_event(memory_action::segment_map, 0x100000, 0x1000)));
  ASSERT_EQ(s.segments.size(), 2u);
  EXPECT_TRUE(s.segments[0].is_expandable);  // 0x100000
  EXPECT_FALSE(s.segments[1].is_expandable); // 0x900000
}

} // namespace
