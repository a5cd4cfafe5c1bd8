// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Segment blocks kept as records while the pickle streams in (snapshot_blocks.cpp) read as the
// dicts they were wherever the pickle puts them. The inputs were written by Python's pickle
// module (the figures checked with pickle.load), the first with a SETITEM added by hand.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/pickle_reader.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace {

using namespace tdiag::trace;

// {'segments': [{..., 'blocks': [b1, b2]}], 'device_traces': [[one alloc]]}, protocol 4, with
// "h<b1> 'address' 8192 SETITEM POP" before STOP: b1 changed after its list took it (the
// segment is 5120 bytes from 4096, so b1 still lies inside it).
const std::string changed_after_listed(
    "\x80\x04\x95\x29\x01\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x08\x73\x65\x67\x6d\x65\x6e"
    "\x74\x73\x94\x5d\x94\x7d\x94\x28\x8c\x06\x64\x65\x76\x69\x63\x65\x94\x4b\x00\x8c\x07\x61"
    "\x64\x64\x72\x65\x73\x73\x94\x4d\x00\x10\x8c\x0a\x74\x6f\x74\x61\x6c\x5f\x73\x69\x7a\x65"
    "\x94\x4d\x00\x14\x8c\x06\x73\x74\x72\x65\x61\x6d\x94\x4b\x00\x8c\x0c\x73\x65\x67\x6d\x65"
    "\x6e\x74\x5f\x74\x79\x70\x65\x94\x8c\x05\x73\x6d\x61\x6c\x6c\x94\x8c\x06\x62\x6c\x6f\x63"
    "\x6b\x73\x94\x5d\x94\x28\x7d\x94\x28\x68\x05\x4d\x00\x10\x8c\x04\x73\x69\x7a\x65\x94\x4d"
    "\x00\x02\x8c\x0e\x72\x65\x71\x75\x65\x73\x74\x65\x64\x5f\x73\x69\x7a\x65\x94\x4d\xf4\x01"
    "\x8c\x05\x73\x74\x61\x74\x65\x94\x8c\x10\x61\x63\x74\x69\x76\x65\x5f\x61\x6c\x6c\x6f\x63"
    "\x61\x74\x65\x64\x94\x8c\x06\x66\x72\x61\x6d\x65\x73\x94\x5d\x94\x75\x7d\x94\x28\x68\x05"
    "\x4d\x00\x12\x68\x0d\x4d\x00\x02\x68\x0e\x4d\x00\x02\x68\x0f\x8c\x08\x69\x6e\x61\x63\x74"
    "\x69\x76\x65\x94\x68\x11\x5d\x94\x75\x65\x75\x61\x8c\x0d\x64\x65\x76\x69\x63\x65\x5f\x74"
    "\x72\x61\x63\x65\x73\x94\x5d\x94\x5d\x94\x7d\x94\x28\x8c\x06\x61\x63\x74\x69\x6f\x6e\x94"
    "\x8c\x05\x61\x6c\x6c\x6f\x63\x94\x8c\x04\x61\x64\x64\x72\x94\x4d\x00\x10\x68\x0d\x4d\x00"
    "\x02\x68\x07\x4b\x00\x8c\x07\x74\x69\x6d\x65\x5f\x75\x73\x94\x4b\x05\x75\x61\x61\x75\x68"
    "\x0c\x58\x07\x00\x00\x00\x61\x64\x64\x72\x65\x73\x73\x4a\x00\x20\x00\x00\x73\x30\x2e",
    329);

// The same segment, then device_traces [[alloc, b2, {'size': 7, 'state': 'inactive', 'frames':
// []}]] and external_annotations [b1]: blocks met again (memo fetches) outside the segments.
const std::string blocks_met_again(
    "\x80\x04\x95\x8b\x01\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x08\x73\x65\x67\x6d\x65\x6e"
    "\x74\x73\x94\x5d\x94\x7d\x94\x28\x8c\x06\x64\x65\x76\x69\x63\x65\x94\x4b\x00\x8c\x07\x61"
    "\x64\x64\x72\x65\x73\x73\x94\x4d\x00\x10\x8c\x0a\x74\x6f\x74\x61\x6c\x5f\x73\x69\x7a\x65"
    "\x94\x4d\x00\x04\x8c\x06\x73\x74\x72\x65\x61\x6d\x94\x4b\x00\x8c\x0c\x73\x65\x67\x6d\x65"
    "\x6e\x74\x5f\x74\x79\x70\x65\x94\x8c\x05\x73\x6d\x61\x6c\x6c\x94\x8c\x06\x62\x6c\x6f\x63"
    "\x6b\x73\x94\x5d\x94\x28\x7d\x94\x28\x68\x05\x4d\x00\x10\x8c\x04\x73\x69\x7a\x65\x94\x4d"
    "\x00\x02\x8c\x0e\x72\x65\x71\x75\x65\x73\x74\x65\x64\x5f\x73\x69\x7a\x65\x94\x4d\xf4\x01"
    "\x8c\x05\x73\x74\x61\x74\x65\x94\x8c\x10\x61\x63\x74\x69\x76\x65\x5f\x61\x6c\x6c\x6f\x63"
    "\x61\x74\x65\x64\x94\x8c\x06\x66\x72\x61\x6d\x65\x73\x94\x5d\x94\x7d\x94\x28\x8c\x04\x6e"
    "\x61\x6d\x65\x94\x8c\x01\x66\x94\x8c\x08\x66\x69\x6c\x65\x6e\x61\x6d\x65\x94\x8c\x04\x61"
    "\x2e\x70\x79\x94\x8c\x04\x6c\x69\x6e\x65\x94\x4b\x03\x75\x61\x75\x7d\x94\x28\x68\x05\x4d"
    "\x00\x12\x68\x0d\x4d\x00\x02\x68\x0e\x4d\x00\x02\x68\x0f\x8c\x08\x69\x6e\x61\x63\x74\x69"
    "\x76\x65\x94\x68\x11\x5d\x94\x75\x65\x68\x11\x68\x12\x75\x61\x8c\x0d\x64\x65\x76\x69\x63"
    "\x65\x5f\x74\x72\x61\x63\x65\x73\x94\x5d\x94\x5d\x94\x28\x7d\x94\x28\x8c\x06\x61\x63\x74"
    "\x69\x6f\x6e\x94\x8c\x05\x61\x6c\x6c\x6f\x63\x94\x8c\x04\x61\x64\x64\x72\x94\x4d\x00\x10"
    "\x68\x0d\x4d\x00\x02\x68\x07\x4b\x00\x8c\x07\x74\x69\x6d\x65\x5f\x75\x73\x94\x4b\x05\x68"
    "\x11\x68\x12\x75\x68\x19\x7d\x94\x28\x68\x0d\x4b\x07\x68\x0f\x68\x1a\x68\x11\x5d\x94\x75"
    "\x65\x61\x8c\x14\x65\x78\x74\x65\x72\x6e\x61\x6c\x5f\x61\x6e\x6e\x6f\x74\x61\x74\x69\x6f"
    "\x6e\x73\x94\x5d\x94\x68\x0c\x61\x75\x2e",
    406);

// {'segments': [{..., 'frames': tb_seg, 'blocks': [{..., 'frames': tb_blk}, {..., 'frames':
// []}]}], 'device_traces': [[{'action': 'alloc', ..., 'frames': tb_blk}, {'action':
// 'segment_alloc', ..., 'frames': tb_seg}]]}, protocol 4, where tb_seg = [f1, f2] and tb_blk =
// [f2] are one list object each (as torch shares them): the segments hold the lists first.
const std::string tracebacks_met_in_segments(
    "\x80\x04\x95\xb4\x01\x00\x00\x00\x00\x00\x00\x7d\x94\x28\x8c\x08\x73\x65\x67\x6d\x65\x6e"
    "\x74\x73\x94\x5d\x94\x7d\x94\x28\x8c\x06\x64\x65\x76\x69\x63\x65\x94\x4b\x00\x8c\x07\x61"
    "\x64\x64\x72\x65\x73\x73\x94\x4d\x00\x10\x8c\x0a\x74\x6f\x74\x61\x6c\x5f\x73\x69\x7a\x65"
    "\x94\x4d\x00\x04\x8c\x06\x73\x74\x72\x65\x61\x6d\x94\x4b\x00\x8c\x0c\x73\x65\x67\x6d\x65"
    "\x6e\x74\x5f\x74\x79\x70\x65\x94\x8c\x05\x73\x6d\x61\x6c\x6c\x94\x8c\x06\x66\x72\x61\x6d"
    "\x65\x73\x94\x5d\x94\x28\x7d\x94\x28\x8c\x04\x6e\x61\x6d\x65\x94\x8c\x04\x73\x74\x65\x70"
    "\x94\x8c\x08\x66\x69\x6c\x65\x6e\x61\x6d\x65\x94\x8c\x08\x74\x72\x61\x69\x6e\x2e\x70\x79"
    "\x94\x8c\x04\x6c\x69\x6e\x65\x94\x4b\x28\x75\x7d\x94\x28\x68\x0d\x8c\x07\x66\x6f\x72\x77"
    "\x61\x72\x64\x94\x68\x0f\x8c\x08\x6d\x6f\x64\x65\x6c\x2e\x70\x79\x94\x68\x11\x4b\x07\x75"
    "\x65\x8c\x06\x62\x6c\x6f\x63\x6b\x73\x94\x5d\x94\x28\x7d\x94\x28\x68\x05\x4d\x00\x10\x8c"
    "\x04\x73\x69\x7a\x65\x94\x4d\x00\x02\x8c\x0e\x72\x65\x71\x75\x65\x73\x74\x65\x64\x5f\x73"
    "\x69\x7a\x65\x94\x4d\xf4\x01\x8c\x05\x73\x74\x61\x74\x65\x94\x8c\x10\x61\x63\x74\x69\x76"
    "\x65\x5f\x61\x6c\x6c\x6f\x63\x61\x74\x65\x64\x94\x68\x0a\x5d\x94\x68\x12\x61\x75\x7d\x94"
    "\x28\x68\x05\x4d\x00\x12\x68\x18\x4d\x00\x02\x68\x19\x4b\x00\x68\x1a\x8c\x08\x69\x6e\x61"
    "\x63\x74\x69\x76\x65\x94\x68\x0a\x5d\x94\x75\x65\x75\x61\x8c\x0d\x64\x65\x76\x69\x63\x65"
    "\x5f\x74\x72\x61\x63\x65\x73\x94\x5d\x94\x5d\x94\x28\x7d\x94\x28\x8c\x06\x61\x63\x74\x69"
    "\x6f\x6e\x94\x8c\x05\x61\x6c\x6c\x6f\x63\x94\x8c\x04\x61\x64\x64\x72\x94\x4d\x00\x10\x68"
    "\x18\x4d\x00\x02\x68\x07\x4b\x00\x8c\x07\x74\x69\x6d\x65\x5f\x75\x73\x94\x4b\x05\x68\x0a"
    "\x68\x1c\x75\x7d\x94\x28\x68\x24\x8c\x0d\x73\x65\x67\x6d\x65\x6e\x74\x5f\x61\x6c\x6c\x6f"
    "\x63\x94\x68\x26\x4d\x00\x10\x68\x18\x4d\x00\x04\x68\x07\x4b\x00\x68\x27\x4b\x02\x68\x0a"
    "\x68\x0b\x75\x65\x61\x75\x2e",
    447);

// `p` (one protocol-4 frame) with `extra` run before its STOP: the frame's length grows by it.
std::string before_stop(std::string p, std::string_view extra) {
  std::uint64_t n = 0;
  for (int b = 0; b < 8; ++b)
    n |= std::uint64_t{static_cast<unsigned char>(p[3 + b])} << (8 * b);
  n += extra.size();
  for (int b = 0; b < 8; ++b)
    p[3 + b] = static_cast<char>(n >> (8 * b));
  p.insert(p.size() - 1, extra);
  return p;
}

TEST(SnapshotBlocks, ABlockChangedAfterItsListTookItReadsTheChange) {
  const auto r = import_snapshot(changed_after_listed, "changed.pickle");
  ASSERT_TRUE(r.trace.final_allocator_state.has_value());
  const auto& blocks = r.trace.final_allocator_state->segments.at(0).blocks;
  ASSERT_EQ(blocks.size(), 2u);
  // Python: d['segments'][0]['blocks'][0]['address'] == 8192 (sorted after 4608 by address).
  EXPECT_EQ(blocks[0].address, 4608u);
  EXPECT_EQ(blocks[1].address, 8192u);
  EXPECT_EQ(blocks[1].requested_size, 500u);
  EXPECT_EQ(blocks[1].state, block_state::active_allocated);
}

TEST(SnapshotBlocks, BlocksMetAgainOutsideTheSegmentsReadAsDicts) {
  const auto r = import_snapshot(blocks_met_again, "again.pickle");
  ASSERT_TRUE(r.trace.final_allocator_state.has_value());
  const auto& blocks = r.trace.final_allocator_state->segments.at(0).blocks;
  ASSERT_EQ(blocks.size(), 2u);
  EXPECT_EQ(blocks[0].address, 4096u);
  EXPECT_EQ(blocks[0].size, 512u);
  EXPECT_EQ(blocks[0].requested_size, 500u);
  EXPECT_NE(blocks[0].stack, no_stack);
  EXPECT_EQ(blocks[1].address, 4608u);
  EXPECT_EQ(blocks[1].stack, no_stack);
  // The alloc is a memory event; b2 and the block-shaped dict (no 'action') are markers.
  EXPECT_EQ(r.trace.memory.all().size(), 1u);
  EXPECT_EQ(r.trace.markers.size(), 2u);
}

// A traceback list that a segment or block holds alone is read as it completes (its list freed)
// and is the same stack for the entries that fetch it later.
TEST(SnapshotBlocks, TracebacksMetInTheSegmentsAreTheEntriesStacks) {
  const auto r = import_snapshot(tracebacks_met_in_segments, "shared.pickle");
  const auto& t = r.trace;
  ASSERT_TRUE(t.final_allocator_state.has_value());
  const auto& seg = t.final_allocator_state->segments.at(0);
  ASSERT_EQ(t.memory.all().size(), 2u);
  const auto& alloc =
      t.memory.all()[0].action == memory_action::alloc ? t.memory.all()[0] : t.memory.all()[1];
  const auto& made = &alloc == &t.memory.all()[0] ? t.memory.all()[1] : t.memory.all()[0];
  EXPECT_EQ(made.action, memory_action::segment_alloc);
  EXPECT_EQ(seg.blocks.at(0).stack, alloc.stack);
  EXPECT_EQ(seg.stack, made.stack);
  EXPECT_EQ(seg.blocks.at(1).stack, no_stack);
  EXPECT_EQ(t.stacks.stack_count(), 3u); // no_stack and the two tracebacks
  const auto names = [&](stack_id id) {
    std::vector<std::string> out;
    for (const auto f : t.stacks.stack(id))
      out.emplace_back(t.name(t.stacks.frame_at(f).function));
    return out;
  };
  EXPECT_EQ(names(seg.stack), (std::vector<std::string>{"step", "forward"}));
  EXPECT_EQ(names(alloc.stack), (std::vector<std::string>{"forward"}));
}

TEST(SnapshotBlocks, AListChangedAfterItWasReadAsATracebackIsRefusedByName) {
  try {
    // "h<tb_blk> h<f2> APPEND POP": tb_blk changed after the block and the entry holding it
    // were read (Python reads [f2, f2] for both).
    (void)import_snapshot(before_stop(tracebacks_met_in_segments, "h\x1ch\x12\x61\x30"),
                          "changed.pickle");
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    const auto what = std::string(e.what());
    EXPECT_NE(what.find("changed.pickle"), std::string::npos) << what;
    EXPECT_NE(what.find("APPEND changes a list already read whole"), std::string::npos) << what;
    EXPECT_EQ(e.report().diagnostics.front().code, "TDIAG-TR-102");
  }
}

// Every block of every segment, as the plain pickle reader reads its dict: the importer reads
// most of them in one go into records (snap_stream::scan_block), which must say the same.
TEST(SnapshotBlocks, BlocksReadInOneGoAreTheDictsTheyWere) {
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("tdiag_snapshot_blocks_{}.pickle", ::getpid());
  synthetic_file_options o;
  o.events = 60'000;
  (void)write_synthetic_snapshot(path, o);
  const auto t = load_trace(path).trace;
  const auto doc = pickle_document::read_file(path);
  ASSERT_TRUE(t.final_allocator_state.has_value());
  const auto& imported = t.final_allocator_state->segments;
  const auto segments = doc.root().find("segments");
  ASSERT_EQ(segments.size(), imported.size());
  std::size_t blocks = 0, inactive = 0, with_frames = 0;
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto s = segments.at(i);
    const auto device = *s.find("device").as_int();
    const auto address = static_cast<std::uint64_t>(*s.find("address").as_int());
    const auto seg = std::find_if(imported.begin(), imported.end(), [&](const segment& x) {
      return x.device == device && x.address == address;
    });
    ASSERT_NE(seg, imported.end()) << "segments[" << i << "]";
    const auto list = s.find("blocks");
    ASSERT_EQ(list.size(), seg->blocks.size()) << "segments[" << i << "]";
    for (std::size_t j = 0; j < list.size(); ++j) {
      const auto b = list.at(j);
      const auto& got = seg->blocks[j];
      const auto where = fmt::format("segments[{}].blocks[{}]", i, j);
      EXPECT_EQ(got.address, static_cast<std::uint64_t>(*b.find("address").as_int())) << where;
      EXPECT_EQ(got.size, static_cast<std::uint64_t>(*b.find("size").as_int())) << where;
      EXPECT_EQ(got.requested_size, static_cast<std::uint64_t>(*b.find("requested_size").as_int()))
          << where;
      const auto state = *b.find("state").as_string();
      EXPECT_EQ(got.state, state == "inactive"           ? block_state::inactive
                           : state == "active_allocated" ? block_state::active_allocated
                                                         : block_state::active_pending_free)
          << where << " " << state;
      const auto frames = b.find("frames").size();
      EXPECT_EQ(t.stacks.stack(got.stack).size(), frames) << where;
      ++blocks;
      inactive += state == "inactive" ? 1 : 0;
      with_frames += frames > 0 ? 1 : 0;
    }
  }
  // Both kinds, many of each: inactive blocks with an empty list of their own, live ones with
  // a traceback.
  EXPECT_GT(inactive, 100u);
  EXPECT_GT(with_frames, 100u);
  EXPECT_GT(blocks, 500u);
  std::filesystem::remove(path);
}

} // namespace
