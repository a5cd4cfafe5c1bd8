// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/trace_merge.hpp>

#include <gtest/gtest.h>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

TEST(TraceMerge, MergingIntoAnEmptyTraceKeepsEverything) {
  const trace src = make_synthetic_trace({.kernels = 500, .devices = 2});
  trace dst;
  merge_trace(dst, src);
  dst.finalize();
  EXPECT_EQ(test::canonical_events(dst), test::canonical_events(src));
  EXPECT_EQ(test::canonical_state(dst), test::canonical_state(src));
  EXPECT_EQ(dst.metadata.format, "synthetic");
  EXPECT_EQ(dst.lanes.size(), src.lanes.size());
}

TEST(TraceMerge, TwoTracesShareStringsAndLanes) {
  const trace a = make_synthetic_trace({.kernels = 200, .seed = 1});
  const trace b = make_synthetic_trace({.kernels = 300, .seed = 2});
  trace dst;
  merge_trace(dst, a);
  merge_trace(dst, b);
  dst.finalize();
  EXPECT_EQ(dst.event_count(), a.event_count() + b.event_count());
  // Same names and lanes in both: interned once.
  EXPECT_EQ(dst.strings.size(), std::max(a.strings.size(), b.strings.size()));
  EXPECT_EQ(dst.lanes.size(), a.lanes.size());
  auto expected = test::canonical_events(a);
  const auto more = test::canonical_events(b);
  expected.insert(expected.end(), more.begin(), more.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(test::canonical_events(dst), expected);
}

TEST(IdRemapper, MapsOutOfRangeIdsToNone) {
  trace src;
  const lane_id l = src.lanes.gpu(0, 1);
  trace dst;
  (void)dst.strings.intern("already here");
  id_remapper map(dst, src);
  EXPECT_EQ(map.string(12345), no_string);
  EXPECT_EQ(map.stack(777), no_stack);
  EXPECT_EQ(map.frame(3), 0u);
  const lane_id mapped = map.lane(l);
  EXPECT_EQ(dst.lanes.at(mapped).kind, lane_kind::gpu_stream);
  const lane_id unknown = map.lane(99);
  EXPECT_EQ(dst.name(dst.lanes.at(unknown).name), "unknown lane");
  kernel_event k;
  k.lane = l;
  k.name = 4242;
  map.remap(k);
  EXPECT_EQ(k.lane, mapped);
  EXPECT_EQ(k.name, no_string);
}

} // namespace
} // namespace tdiag::trace
