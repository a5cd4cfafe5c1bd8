// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A capture killed with SIGKILL: the session's writer (converter batches appended, chunks on disk
// as the converter hands them over) dies without its footer. The file must load every chunk that
// reached the disk, with the process's tags, and a file torn anywhere inside its last chunk must
// load the chunks before it with a warning, never fail.
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

constexpr int batches = 4;
constexpr std::uint32_t kernels_per_batch = 50;

bool has_code(const std::vector<diagnostic>& warnings, std::string_view code) {
  for (const auto& w : warnings)
    if (w.code == code)
      return true;
  return false;
}

// What a session does, in a child that SIGKILLs itself after the last flush: metadata with the
// rank tags, one converter batch per "CUPTI buffer", the writer's flush after each.
void capture_then_die(const fs::path& path) {
  trace::trace_metadata meta;
  meta.format = "cupti";
  meta.properties = {{"capture.pid", std::to_string(getpid())}, {"distributed.rank", "2"}};
  trace::tdtrace_writer writer(path, meta);
  cupti_converter c;
  std::uint32_t correlation = 0;
  for (int b = 0; b < batches; ++b) {
    for (std::uint32_t i = 0; i < kernels_per_batch; ++i) {
      CUpti_ActivityKernel10 k;
      std::memset(&k, 0, sizeof(k));
      k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.correlationId = ++correlation;
      k.start = 1000 * correlation;
      k.end = k.start + 400;
      k.streamId = 7;
      k.name = i % 2 ? "step_kernel" : "other_kernel";
      c.add(reinterpret_cast<const CUpti_Activity&>(k));
    }
    writer.append(c.take_batch());
    writer.flush();
  }
  // Records still in the converter when the process dies are lost; the file must not care.
  std::raise(SIGKILL);
}

std::vector<char> read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class KillSafety : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    path_ = fs::temp_directory_path() / ("tdiag-killed-" + std::to_string(getpid()) + ".tdtrace");
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      capture_then_die(path_);
      _exit(0); // not reached
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  }
  static void TearDownTestSuite() { fs::remove(path_); }
  static fs::path path_;
};
fs::path KillSafety::path_;

TEST_F(KillSafety, AKilledCaptureLoadsEveryFlushedChunk) {
  const auto loaded = trace::load_trace(path_);
  EXPECT_EQ(loaded.trace.kernels.size(), std::size_t{batches} * kernels_per_batch);
  EXPECT_TRUE(has_code(loaded.warnings, trace::codes::not_closed));
  // Every chunk carries the metadata: the rank survives for the job loader.
  const auto* rank = loaded.trace.metadata.property("distributed.rank");
  ASSERT_NE(rank, nullptr);
  EXPECT_EQ(*rank, "2");
}

TEST_F(KillSafety, ATearAtEveryByteOfTheLastChunkKeepsTheChunksBefore) {
  const auto bytes = read_all(path_);
  const auto whole = trace::read_tdtrace(std::as_bytes(std::span(bytes)), "killed");
  ASSERT_FALSE(whole.info.has_footer);
  ASSERT_EQ(whole.info.chunks_loaded, std::uint32_t{batches});
  const std::uint64_t last = whole.info.chunk_offsets.back();
  const auto before = trace::read_tdtrace(std::as_bytes(std::span(bytes.data(), last)), "cut");
  const std::size_t kept = before.loaded.trace.event_count();
  ASSERT_EQ(before.loaded.trace.kernels.size(), std::size_t{batches - 1} * kernels_per_batch);
  for (std::uint64_t cut = last + 1; cut < bytes.size(); ++cut) {
    const auto r = trace::read_tdtrace(std::as_bytes(std::span(bytes.data(), cut)), "cut");
    ASSERT_EQ(r.info.chunks_loaded, std::uint32_t{batches - 1}) << "cut at " << cut;
    ASSERT_EQ(r.loaded.trace.event_count(), kept) << "cut at " << cut;
    ASSERT_EQ(r.info.bytes_lost, cut - last) << "cut at " << cut;
    ASSERT_TRUE(has_code(r.loaded.warnings, trace::codes::truncated_chunk)) << "cut at " << cut;
  }
}

} // namespace
} // namespace tdiag::capture
