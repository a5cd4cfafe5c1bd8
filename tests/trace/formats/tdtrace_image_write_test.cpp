// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

TEST(TdtraceImageWrite, AutomaticLayoutFollowsTheEventCount) {
  const trace t = make_synthetic_trace({.kernels = 500});
  const auto path = test::temp_path("image_auto.tdtrace");
  tdtrace_writer_options o;
  write_tdtrace(path, t, o); // far below the default threshold
  EXPECT_EQ(read_tdtrace(path).info.version_major, 1);
  o.row_image_min_events = t.event_count();
  write_tdtrace(path, t, o);
  EXPECT_EQ(read_tdtrace(path).info.version_major, 2);
  o.row_image_min_events = t.event_count() + 1;
  write_tdtrace(path, t, o);
  EXPECT_EQ(read_tdtrace(path).info.version_major, 1);
}

TEST(TdtraceImageWrite, RowsStartOnAPageAndTheFileIsReproducible) {
  trace t = make_synthetic_trace({.kernels = 500});
  tdtrace_writer_options o;
  o.layout = tdtrace_layout::row_image;
  const auto a = test::temp_path("image_a.tdtrace");
  const auto b = test::temp_path("image_b.tdtrace");
  write_tdtrace(a, t, o); // not finalized: the writer finalizes a copy
  t.finalize();
  write_tdtrace(b, t, o);
  const auto bytes = test::read_file(a);
  EXPECT_EQ(bytes, test::read_file(b));
  ASSERT_GT(bytes.size(), 4096u + sizeof(kernel_event));
  // Header, then zeros up to the first (kernel) row at 4096.
  EXPECT_TRUE(std::all_of(bytes.begin() + 32, bytes.begin() + 4096, [](char c) { return c == 0; }));
  kernel_event first;
  std::memcpy(&first, bytes.data() + 4096, sizeof first);
  EXPECT_EQ(first.start, t.kernels[0].start);
  EXPECT_EQ(first.lane, t.kernels[0].lane);
}

} // namespace
} // namespace tdiag::trace
