// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The injection library's options and its behaviour without a session, on any machine: the
// library loads without libcuda.so.1 and every hook is a no-op until start().
#include <tensordiag/capture/capture.hpp>
#include <tensordiag/capture/hooks.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

// Clears the capture variables on entry and exit, so tests do not see each other's settings.
class Environment {
public:
  Environment() { clear(); }
  ~Environment() { clear(); }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

private:
  static void clear() {
    for (const char* name :
         {"TDIAG_CAPTURE_OUTPUT", "TDIAG_CAPTURE_STACKS", "TDIAG_CAPTURE_EXCLUSIVE",
          "TDIAG_CAPTURE_DRIVER_API", "TDIAG_CAPTURE_BUFFER_MB", "TDIAG_CAPTURE_FLUSH_MS",
          "TDIAG_CAPTURE_RANGES", "TDIAG_CAPTURE_OUTPUT_DIR", "RANK", "TDIAG_CAPTURE_MEMORY"})
      unsetenv(name);
  }
};

TEST(Injection, DefaultOptionsNameAFilePerProcess) {
  Environment env;
  const options o = options::from_environment();
  EXPECT_EQ(o.output, "tdiag-" + std::to_string(getpid()) + ".tdtrace");
  EXPECT_FALSE(o.stacks);
  EXPECT_TRUE(o.memory);
  EXPECT_FALSE(o.runtime_api); // API records are opt-in (--api)
  EXPECT_FALSE(o.driver_api);
  EXPECT_EQ(o.buffer_bytes, std::uint64_t{4} << 20);
}

TEST(Injection, EnvironmentSetsOptions) {
  Environment env;
  setenv("TDIAG_CAPTURE_OUTPUT", "/tmp/x.tdtrace", 1);
  setenv("TDIAG_CAPTURE_STACKS", "1", 1);
  setenv("TDIAG_CAPTURE_DRIVER_API", "1", 1);
  setenv("TDIAG_CAPTURE_MEMORY", "0", 1);
  setenv("TDIAG_CAPTURE_BUFFER_MB", "16", 1);
  setenv("TDIAG_CAPTURE_FLUSH_MS", "not-a-number", 1);
  setenv("TDIAG_CAPTURE_RANGES", "cuda-profiler-api;launches:1:2", 1);
  const options o = options::from_environment();
  EXPECT_EQ(o.output, "/tmp/x.tdtrace");
  EXPECT_TRUE(o.stacks);
  EXPECT_TRUE(o.driver_api);
  EXPECT_FALSE(o.runtime_api);
  EXPECT_FALSE(o.memory);
  EXPECT_EQ(o.buffer_bytes, std::uint64_t{16} << 20);
  EXPECT_EQ(o.flush_period_ms, 500u); // unparsable: the default
  EXPECT_EQ(o.ranges, "cuda-profiler-api;launches:1:2");
}

TEST(Injection, ExclusiveOutputGoesToTheFirstProcessOnly) {
  Environment env;
  const fs::path path =
      fs::temp_directory_path() / ("tdiag_claim_" + std::to_string(getpid()) + ".tdtrace");
  fs::remove(path);
  setenv("TDIAG_CAPTURE_OUTPUT", path.c_str(), 1);
  setenv("TDIAG_CAPTURE_EXCLUSIVE", "1", 1);
  EXPECT_EQ(options::from_environment().output, path.string());
  // The path is taken now: a later process of the run writes <stem>.<pid>.tdtrace.
  const auto second = options::from_environment().output;
  EXPECT_EQ(second, (fs::temp_directory_path() / ("tdiag_claim_" + std::to_string(getpid()) + "." +
                                                  std::to_string(getpid()) + ".tdtrace"))
                        .string());
  fs::remove(path);
}

TEST(Injection, AJobFolderNamesTheFileByRank) {
  Environment env;
  const fs::path dir = fs::temp_directory_path() / ("tdiag_jobdir_" + std::to_string(getpid()));
  fs::remove_all(dir);
  setenv("TDIAG_CAPTURE_OUTPUT", "/tmp/ignored.tdtrace", 1);
  setenv("TDIAG_CAPTURE_OUTPUT_DIR", dir.c_str(), 1);
  setenv("RANK", "3", 1);
  const options o = options::from_environment();
  EXPECT_EQ(o.output, (dir / "rank3.tdtrace").string());
  EXPECT_TRUE(fs::exists(dir / "rank3.tdtrace")); // claimed
  EXPECT_NE(std::find(o.properties.begin(), o.properties.end(),
                      std::pair<std::string, std::string>{"distributed.rank", "3"}),
            o.properties.end());
  fs::remove_all(dir);
}

TEST(Injection, HooksAreNoOpsWithoutASession) {
  EXPECT_FALSE(active());
  const std::uint32_t dims[3] = {0, 0, 0};
  record_launch(1, "k");
  record_assertion(1, 0, 0, "a.cu:1: x", nullptr, dims, dims);
  record_allocation(reinterpret_cast<void*>(0x1000), 16, 0, 0, 0, "pool");
  record_free(reinterpret_cast<void*>(0x1000), 16, 0, 0, 0, "pool");
  tdiag_capture_record_launch(2, "k");
  tdiag_capture_record_assertion(2, 0, 0, "a.cu:1: x", "m", dims, dims);
  flush();
  stop();
  EXPECT_FALSE(active());
  EXPECT_EQ(current_stats().kernels, 0u);
  const auto t0 = now_ns();
  EXPECT_GE(now_ns(), t0);
}

} // namespace
} // namespace tdiag::capture
