// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Assertions out of the box (label gpu): each scenario of tdiag_assert_fresh_child (found next
// to this executable) runs in a new process, so its first launch is the process's first and no
// tensordiag call precedes it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>
#include <sys/wait.h>

#include "gpu_support.h"

using tdiag::test::Gpu;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct child_result {
  int status = -1;
  std::string output;
};

child_result run_child(const std::string& scenario, const std::string& environment = "") {
  const auto child =
      std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tdiag_assert_fresh_child";
  child_result r;
  if (!std::filesystem::exists(child)) {
    r.output = child.string() + " is not next to the test";
    return r;
  }
  // The child's reports go to stderr as well (TDIAG_REPORT_FORMAT=text): both are kept.
  const std::string command = environment + " '" + child.string() + "' " + scenario + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr)
    return r;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
    r.output.append(chunk.data(), n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

} // namespace

TEST_F(Gpu, PlainLaunchesAreCaughtFromTheFirstLaunchOfTheProcess) {
  const auto r = run_child("plain");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fresh child: plain ok"));
  for (const char* how : {"<<<>>>", "cudaLaunchKernel", "cudaLaunchKernelEx"}) {
    const std::string prefix = std::string("fresh child: ") + how + ": ";
    const auto at = r.output.find(prefix);
    ASSERT_NE(at, std::string::npos) << how << "\n" << r.output;
    const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
    EXPECT_THAT(line, HasSubstr("index 17")) << line;
    EXPECT_THAT(line, HasSubstr("16")) << line;
    EXPECT_THAT(line, HasSubstr("fresh_gather_kernel")) << line;
    EXPECT_THAT(line, HasSubstr("fresh_child.cu:")) << line;
    EXPECT_THAT(line, HasSubstr("block (0,0,0) thread (1,0,0)")) << line;
    EXPECT_THAT(line, HasSubstr("unregistered launch")) << line;
  }
  EXPECT_THAT(r.output, HasSubstr("launch it with TDIAG_LAUNCH")) << r.output;
}

TEST_F(Gpu, FirstLaunchInsideAGlobalCaptureThenTwoReplaysWithDifferentData) {
  const auto r = run_child("capture");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto first = r.output.find("fresh child: replay 1: ");
  const auto second = r.output.find("fresh child: replay 2: ");
  ASSERT_NE(first, std::string::npos) << r.output;
  ASSERT_NE(second, std::string::npos) << r.output;
  const std::string one = r.output.substr(first, r.output.find('\n', first) - first);
  const std::string two = r.output.substr(second, r.output.find('\n', second) - second);
  EXPECT_THAT(one, HasSubstr("index 20")) << one;
  EXPECT_THAT(one, HasSubstr("thread (0,0,0)")) << one;
  EXPECT_THAT(two, HasSubstr("index 33")) << two;
  EXPECT_THAT(two, HasSubstr("thread (1,0,0)")) << two;
  for (const auto& line : {one, two}) {
    EXPECT_THAT(line, HasSubstr("CUDA graph replay")) << line;
    EXPECT_THAT(line, HasSubstr("fresh_gather_kernel")) << line;
    EXPECT_THAT(line, HasSubstr("launched from")) << line;
  }
}

TEST_F(Gpu, TrapPolicyReachesTheCallerAsDeviceAssertionErrorWithValues) {
  const auto r = run_child("trap", "TDIAG_ASSERT_POLICY=trap");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto at = r.output.find("fresh child: trapped: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  const std::string line = r.output.substr(at, r.output.find('\n', at) - at);
  EXPECT_THAT(line, HasSubstr("index 17")) << line;
  EXPECT_THAT(line, HasSubstr("fresh_gather_kernel")) << line;
  EXPECT_THAT(line, HasSubstr("fresh_child.cu:")) << line;
  EXPECT_THAT(line, HasSubstr("launch #")) << line;
  EXPECT_THAT(line, Not(HasSubstr("unreadable"))) << line;
  // Printed on stderr before the exception reached the program.
  EXPECT_LT(r.output.find("assertion failed"), at) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fresh child: trap ok")) << r.output;
}

// Issue #24.2: with TDIAG_BIND=cupti, plain launches and graph replays name their grid, stream and
// launch site; the child checks each report against the line and stream it launched with.
TEST_F(Gpu, BoundThroughCuptiPlainLaunchesNameGridStreamAndLaunchSite) {
  const auto r = run_child("bound", "TDIAG_BIND=cupti");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("fresh child: bound ok"));
  EXPECT_THAT(r.output, Not(HasSubstr("cannot be bound"))) << r.output;
}

// An unknown binding is one line naming the variable, before anything runs.
TEST_F(Gpu, AnUnknownBindingIsRefusedByName) {
  const auto r = run_child("plain", "TDIAG_BIND=nsight");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_THAT(r.output, HasSubstr("TDIAG_BIND=nsight is not valid: expected none|cupti"));
}
