// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/stacktrace.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <string>
#include <thread>
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
  ASSERT_GE(frames.size(), stack.size) << "one frame per address, more for inlined calls";
  EXPECT_EQ(frames[0].address, stack.frames[0]);
  EXPECT_FALSE(frames[0].module.empty());
  EXPECT_NE(frames[0].function.find("tdiag_test_capture_here"), std::string::npos)
      << frames[0].function;
  if (std::system("command -v addr2line >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "addr2line (binutils) is not installed: no file and line";
  EXPECT_NE(frames[0].file.find("stacktrace_test.cpp"), std::string::npos) << frames[0].file;
  EXPECT_GT(frames[0].line, 0u);
}

namespace {
// Always inlined into its caller: the return address lies in the caller's code, which line
// tables describe as both functions.
constexpr std::uint32_t inlined_capture_line = __LINE__ + 2;
[[gnu::always_inline]] inline tdiag::raw_stack tdiag_test_inlined_capture() {
  return tdiag::capture_raw_stack(0);
}
constexpr std::uint32_t inlined_call_line = __LINE__ + 4;
} // namespace

TDIAG_DETAIL_NOINLINE tdiag::raw_stack tdiag_test_calls_inlined() {
  auto stack = tdiag_test_inlined_capture();
  asm volatile("" ::: "memory");
  return stack;
}

// A launch site is often a call inlined into its caller: both frames are named, innermost first.
TEST(Stacktrace, InlinedCallsAlsoNameTheirCaller) {
  if (std::system("command -v addr2line >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "addr2line (binutils) is not installed: no inline frames";
  const auto stack = tdiag_test_calls_inlined();
  const auto frames = tdiag::symbolize(stack);
  ASSERT_GT(frames.size(), stack.size) << "the inlined call adds a frame";
  // The lines: the capture inside the inlined function, then its call in the caller. (Which name
  // binutils gives the inner frame varies with how the function was inlined; the lines do not.)
  EXPECT_EQ(frames[1].address, frames[0].address) << "one return address, two frames";
  EXPECT_EQ(frames[0].line, inlined_capture_line);
  EXPECT_EQ(frames[1].line, inlined_call_line);
  EXPECT_NE(frames[1].function.find("tdiag_test_calls_inlined"), std::string::npos)
      << frames[1].function;
  EXPECT_NE(frames[1].file.find("stacktrace_test.cpp"), std::string::npos) << frames[1].file;
  // Without inlined frames: one per address, the innermost (capture's per-address symbols).
  const auto flat = tdiag::symbolize(stack, false);
  ASSERT_EQ(flat.size(), stack.size);
  EXPECT_EQ(flat[0].line, inlined_capture_line);
}

TEST(Stacktrace, EmptyStackSymbolizesToNothing) {
  EXPECT_TRUE(tdiag::symbolize(tdiag::raw_stack{}).empty());
}

namespace {
// Recursion deeper than raw_stack::max_frames, so captures are cut at the limit.
TDIAG_DETAIL_NOINLINE tdiag::raw_stack tdiag_test_capture_deep(int depth, bool unwinder = false) {
  auto stack = depth != 0 ? tdiag_test_capture_deep(depth - 1, unwinder)
               : unwinder ? tdiag::detail::unwind_raw_stack(0)
                          : tdiag::capture_raw_stack(0);
  asm volatile("" ::: "memory");
  return stack;
}

bool same_frames(const tdiag::raw_stack& a, const tdiag::raw_stack& b) {
  if (a.size != b.size)
    return false;
  for (std::uint32_t i = 0; i < a.size; ++i)
    if (a.frames[i] != b.frames[i])
      return false;
  return true;
}
} // namespace

// Three captures from one call site: the first unwinds with DWARF and learns each return
// address's rule, the second walks the learned rules, the third is the unwinder alone. Only the
// innermost frame may differ (it returns into a different branch of the `? :` above).
std::array<tdiag::raw_stack, 3> capture_three_ways(int depth) {
  std::array<tdiag::raw_stack, 3> out;
  for (int k = 0; k < 3; ++k)
    out[k] = tdiag_test_capture_deep(depth, k == 2);
  return out;
}

void expect_same_beyond_innermost(const tdiag::raw_stack& a, const tdiag::raw_stack& b, int depth) {
  ASSERT_EQ(a.size, b.size) << "depth " << depth;
  for (std::uint32_t i = 1; i < a.size; ++i)
    EXPECT_EQ(a.frames[i], b.frames[i]) << "depth " << depth << " frame " << i;
}

TEST(Stacktrace, LearnedWalkGivesTheUnwindersFrames) {
  for (int depth : {0, 5, 40}) {
    const auto [first, second, reference] = capture_three_ways(depth);
    ASSERT_GE(reference.size, 2u);
    EXPECT_TRUE(same_frames(first, second)) << "depth " << depth;
    expect_same_beyond_innermost(first, reference, depth);
    if (depth == 40) {
      EXPECT_EQ(first.size, tdiag::raw_stack::max_frames);
    }
  }
}

TEST(Stacktrace, LearnedWalkMatchesOnAnotherThread) {
  const auto on_main = capture_three_ways(3);
  std::array<tdiag::raw_stack, 3> on_thread;
  std::thread t([&] { on_thread = capture_three_ways(3); });
  t.join();
  EXPECT_TRUE(same_frames(on_thread[0], on_thread[1]));
  expect_same_beyond_innermost(on_thread[0], on_thread[2], 3);
  // The capture site and the recursion are the same code on both threads; capture_three_ways'
  // caller and the frames above it are each thread's own.
  ASSERT_GE(on_thread[0].size, 5u);
  for (std::uint32_t i = 0; i < 5; ++i)
    EXPECT_EQ(on_thread[0].frames[i], on_main[0].frames[i]) << i;
}
