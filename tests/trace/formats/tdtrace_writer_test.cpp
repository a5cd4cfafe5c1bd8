// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <thread>

#include "trace_test_support.hpp"

namespace tdiag::trace {
namespace {

TEST(TdtraceWriter, FileRoundTripAcrossManyChunks) {
  synthetic_options o;
  o.kernels = 20'000;
  o.devices = 2;
  const trace original = make_synthetic_trace(o);
  const auto path = test::temp_path("round_trip.tdtrace");
  tdtrace_writer_options w;
  w.chunk_bytes = 64 << 10;
  write_tdtrace(path, original, w);

  const tdtrace_load back = read_tdtrace(path);
  EXPECT_TRUE(back.info.has_footer);
  EXPECT_GT(back.info.chunks_loaded, 10u);
  EXPECT_EQ(back.info.chunks_loaded, back.info.chunks_in_footer);
  EXPECT_EQ(back.info.bytes_lost, 0u);
  EXPECT_TRUE(back.loaded.warnings.empty());
  const trace& t = back.loaded.trace;
  EXPECT_TRUE(t.finalized());
  EXPECT_EQ(t.event_count(), original.event_count());
  EXPECT_EQ(test::canonical_events(t), test::canonical_events(original));
  EXPECT_EQ(test::canonical_state(t), test::canonical_state(original));
  EXPECT_EQ(t.metadata.format, "tdtrace");
  ASSERT_NE(t.metadata.property("recorded_format"), nullptr);
  EXPECT_EQ(*t.metadata.property("recorded_format"), "synthetic");
  EXPECT_EQ(t.metadata.time_origin_ns, original.metadata.time_origin_ns);
  // Lane names survive even though each chunk carries only the lanes it uses.
  EXPECT_EQ(t.name(t.lanes.at(t.lanes.find_gpu(1, 8)).name), "stream 8");
}

TEST(TdtraceWriter, ConcurrentProducersLoseNothing) {
  const auto path = test::temp_path("producers.tdtrace");
  tdtrace_writer_options w;
  w.chunk_bytes = 16 << 10;
  w.queue_capacity = 4; // producers must wait for the writer thread
  tdtrace_writer writer(path, {"", "cupti", 0, 0, {}}, w);
  constexpr int producers = 4;
  constexpr int batches = 50;
  constexpr int per_batch = 100;
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (int b = 0; b < batches; ++b) {
        trace batch;
        const lane_id l = batch.lanes.gpu(0, static_cast<std::uint64_t>(p));
        const string_id name = batch.strings.intern(fmt::format("kernel_{}", p));
        for (int i = 0; i < per_batch; ++i) {
          kernel_event k;
          k.start = (b * per_batch + i) * 1000;
          k.end = k.start + 500;
          k.lane = l;
          k.name = name;
          k.stream = static_cast<std::uint64_t>(p);
          k.correlation = static_cast<std::uint32_t>(b * per_batch + i + 1);
          batch.kernels.push_back(k);
        }
        ASSERT_TRUE(writer.append(std::move(batch)));
      }
    });
  for (auto& th : threads)
    th.join();
  writer.add_dropped_records(3);
  writer.close();
  const auto stats = writer.stats();
  EXPECT_EQ(stats.events_appended, std::uint64_t{producers * batches * per_batch});
  EXPECT_EQ(stats.events_written, stats.events_appended);
  EXPECT_EQ(stats.events_dropped, 0u);

  const auto back = read_tdtrace(path);
  const trace& t = back.loaded.trace;
  EXPECT_EQ(t.kernels.size(), std::size_t{producers * batches * per_batch});
  EXPECT_EQ(t.metadata.dropped_records, 3u);
  for (int p = 0; p < producers; ++p) {
    auto lane = t.kernels.lane(t.lanes.find_gpu(0, static_cast<std::uint64_t>(p)));
    ASSERT_EQ(lane.size(), std::size_t{batches * per_batch});
    EXPECT_TRUE(std::is_sorted(lane.begin(), lane.end(),
                               [](const auto& a, const auto& b) { return a.start < b.start; }));
    EXPECT_EQ(t.name(lane.front().name), fmt::format("kernel_{}", p));
  }
}

TEST(TdtraceWriter, FlushMakesEventsReadableBeforeClose) {
  const auto path = test::temp_path("flush.tdtrace");
  tdtrace_writer writer(path);
  trace batch = make_synthetic_trace({.kernels = 500});
  const std::size_t events = batch.event_count();
  ASSERT_TRUE(writer.append(std::move(batch)));
  writer.flush();
  const auto partial = read_tdtrace(path);
  EXPECT_FALSE(partial.info.has_footer);
  EXPECT_EQ(partial.loaded.trace.event_count(), events);
  EXPECT_TRUE(test::has_code(partial.loaded.warnings, "TDIAG-TR-310"));
  writer.close();
  const auto full = read_tdtrace(path);
  EXPECT_TRUE(full.info.has_footer);
  EXPECT_EQ(full.loaded.trace.event_count(), events);
  EXPECT_FALSE(writer.append(trace{})); // closed
}

TEST(TdtraceWriter, DropsAndCountsWhenAskedNotToBlock) {
  const auto path = test::temp_path("drops.tdtrace");
  tdtrace_writer_options w;
  w.queue_capacity = 1;
  w.drop_when_full = true;
  tdtrace_writer writer(path, {}, w);
  std::size_t accepted = 0;
  std::size_t events = 0;
  for (int i = 0; i < 200; ++i) {
    trace batch = make_synthetic_trace({.kernels = 200, .seed = static_cast<std::uint64_t>(i)});
    const std::size_t n = batch.event_count();
    if (writer.append(std::move(batch)))
      accepted += n;
    events += n;
  }
  writer.close();
  const auto stats = writer.stats();
  EXPECT_EQ(stats.events_appended, accepted);
  EXPECT_EQ(stats.events_appended + stats.events_dropped, events);
  const auto back = read_tdtrace(path);
  EXPECT_EQ(back.loaded.trace.event_count(), accepted);
  EXPECT_EQ(back.loaded.trace.metadata.dropped_records, stats.events_dropped);
}

TEST(TdtraceWriter, EmptyTraceKeepsItsMetadata) {
  const auto path = test::temp_path("empty.tdtrace");
  trace t;
  t.metadata.format = "cupti";
  t.metadata.time_origin_ns = 123;
  t.metadata.properties.emplace_back("host", "node-3");
  write_tdtrace(path, t);
  const auto back = read_tdtrace(path);
  EXPECT_TRUE(back.loaded.warnings.empty());
  EXPECT_EQ(back.loaded.trace.event_count(), 0u);
  EXPECT_EQ(back.loaded.trace.metadata.time_origin_ns, 123);
  ASSERT_NE(back.loaded.trace.metadata.property("host"), nullptr);
  EXPECT_EQ(*back.loaded.trace.metadata.property("host"), "node-3");
}

TEST(TdtraceWriter, UncreatableFileThrowsWithCode) {
  try {
    tdtrace_writer writer("/nonexistent-folder/x.tdtrace");
    FAIL() << "no exception";
  } catch (const tdiag::error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).code, "TDIAG-TR-320");
  }
}

} // namespace
} // namespace tdiag::trace
