// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/pickle_reader.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <unistd.h>

namespace {

using namespace tdiag::trace;
namespace fs = std::filesystem;

fs::path temp(const char* name) {
  return fs::temp_directory_path() / fmt::format("tdiag_synthetic_{}_{}", ::getpid(), name);
}

TEST(SyntheticFiles, SnapshotIsAPlainPickleOfTheSnapshotShape) {
  const auto path = temp("snap.pickle");
  synthetic_file_options o;
  o.events = 30'000;
  o.devices = 3;
  const auto stats = write_synthetic_snapshot(path, o);
  EXPECT_GE(stats.events, o.events);
  EXPECT_EQ(stats.bytes, fs::file_size(path));
  // The general reader (not the streaming importer) sees the dict torch writes.
  const auto doc = pickle_document::read_file(path);
  const auto traces = doc.root().find("device_traces");
  ASSERT_EQ(traces.size(), 3u);
  std::size_t entries = 0;
  std::set<std::uint32_t> frame_lists;
  for (std::size_t d = 0; d < traces.size(); ++d)
    for (std::size_t i = 0; i < traces.at(d).size(); ++i) {
      ++entries;
      frame_lists.insert(traces.at(d).at(i).find("frames").id());
    }
  EXPECT_EQ(entries, stats.events);
  EXPECT_LE(frame_lists.size(), 48u) << "tracebacks are shared through the memo";
  EXPECT_GT(doc.root().find("segments").size(), 0u);

  const auto r = load_trace(path);
  EXPECT_EQ(r.trace.memory.size(), stats.events);
  std::map<memory_action, std::size_t> n;
  for (const auto& e : r.trace.memory.all())
    ++n[e.action];
  EXPECT_EQ(n[memory_action::free_requested], n[memory_action::free_completed]);
  EXPECT_GT(n[memory_action::segment_alloc], 0u);
  EXPECT_GT(n[memory_action::segment_free], 0u);
  EXPECT_GT(n[memory_action::alloc], n[memory_action::free_completed]);
  fs::remove(path);
}

TEST(SyntheticFiles, KinetoTraceLoads) {
  const auto path = temp("kineto.json");
  synthetic_file_options o;
  o.events = 20'000;
  o.devices = 2;
  const auto stats = write_synthetic_kineto(path, o);
  const auto r = load_trace(path);
  EXPECT_EQ(r.trace.metadata.format, "kineto-json");
  EXPECT_GT(r.trace.kernels.size(), stats.events / 8);
  EXPECT_GT(r.trace.copies.size(), 0u);
  EXPECT_GT(r.trace.api_calls.size(), r.trace.kernels.size());
  EXPECT_GT(r.trace.flows.size(), r.trace.kernels.size() / 2);
  std::set<std::int32_t> devices;
  for (const auto& k : r.trace.kernels.all())
    devices.insert(k.device);
  EXPECT_EQ(devices.size(), 2u);
  fs::remove(path);
}

TEST(SyntheticFiles, SameSeedSameBytes) {
  const auto a = temp("a.pickle"), b = temp("b.pickle");
  synthetic_file_options o;
  o.events = 5'000;
  (void)write_synthetic_snapshot(a, o);
  (void)write_synthetic_snapshot(b, o);
  EXPECT_EQ(tdiag::read_input_file(a), tdiag::read_input_file(b));
  fs::remove(a);
  fs::remove(b);
}

} // namespace
