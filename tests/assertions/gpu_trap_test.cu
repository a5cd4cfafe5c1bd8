// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The `trap` policy (label gpu): a trapping launch kills the CUDA context, so the kernel runs in a
// child process (tdiag_assert_trap_child, found next to this executable); the parent checks that
// the child printed the full report and exited non-zero.
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

namespace {

std::filesystem::path trap_child() {
  return std::filesystem::read_symlink("/proc/self/exe").parent_path() / "tdiag_assert_trap_child";
}

} // namespace

TEST_F(Gpu, TrapPolicyReportsThenFailsTheLaunchInAChildProcess) {
  const auto child = trap_child();
  ASSERT_TRUE(std::filesystem::exists(child)) << child << " is not next to the test";
  const std::string command = "'" + child.string() + "' 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  std::array<char, 4096> chunk{};
  while (const std::size_t n = std::fread(chunk.data(), 1, chunk.size(), pipe))
    output.append(chunk.data(), n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_NE(WEXITSTATUS(status), 0) << output;
  EXPECT_EQ(WEXITSTATUS(status), 3) << output;
  EXPECT_THAT(output, HasSubstr("assertion failed"));
  EXPECT_THAT(output, HasSubstr("trap_child_kernel"));
  EXPECT_THAT(output, HasSubstr("thread (0,0,0)"));
  EXPECT_THAT(output, HasSubstr("launch #"));
  EXPECT_THAT(output, HasSubstr("caught tdiag::device_assertion_error"));
}
