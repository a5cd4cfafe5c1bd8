// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <type_traits>

// External linkage and no inlining, so the frame and its symbol exist.
TDIAG_DETAIL_NOINLINE tdiag::raw_stack tdiag_test_capture_here(std::uint32_t skip) {
  auto stack = tdiag::capture_raw_stack(skip);
  asm volatile("" ::: "memory"); // keep this frame from becoming a tail call
  return stack;
}

TEST(Stacktrace, RawStackIsTriviallyCopyable) {
  static_assert(std::is_trivially_copyable_v<tdiag::raw_stack>);
  SUCCEED();
}

TEST(Stacktrace, CapturesTheCallerFirst) {
  const auto stack = tdiag_test_capture_here(0);
  ASSERT_GE(stack.size, 3u);
  const auto skipped = tdiag_test_capture_here(1);
  ASSERT_GE(skipped.size, 2u);
  EXPECT_EQ(skipped.size + 1, stack.size) << "skip drops exactly one frame";
}

TEST(Stacktrace, SymbolizesFunctionFileAndLine) {
  const auto stack = tdiag_test_capture_here(0);
  const auto frames = tdiag::symbolize(stack);
  ASSERT_EQ(frames.size(), stack.size);
  EXPECT_EQ(frames[0].address, stack.frames[0]);
  EXPECT_FALSE(frames[0].module.empty());
  EXPECT_NE(frames[0].function.find("tdiag_test_capture_here"), std::string::npos)
      << frames[0].function;
  if (std::system("command -v addr2line >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "addr2line (binutils) is not installed: no file and line";
  EXPECT_NE(frames[0].file.find("stacktrace_test.cpp"), std::string::npos) << frames[0].file;
  EXPECT_GT(frames[0].line, 0u);
}

TEST(Stacktrace, EmptyStackSymbolizesToNothing) {
  EXPECT_TRUE(tdiag::symbolize(tdiag::raw_stack{}).empty());
}
