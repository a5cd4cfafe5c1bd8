// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/stack_table.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

namespace tdiag::trace {
namespace {

TEST(StackTable, InternsFramesAndStacksOnce) {
  string_table strings;
  stack_table stacks;
  const frame_id a = stacks.intern_frame({strings.intern("f"), strings.intern("a.py"), 3});
  const frame_id b = stacks.intern_frame({strings.intern("g"), strings.intern("a.py"), 9});
  EXPECT_EQ(stacks.intern_frame({strings.find("f"), strings.find("a.py"), 3}), a);
  const std::array<frame_id, 2> ab{a, b};
  const std::array<frame_id, 1> only_a{a};
  const stack_id s1 = stacks.intern_stack(ab);
  const stack_id s2 = stacks.intern_stack(only_a);
  EXPECT_NE(s1, s2);
  EXPECT_EQ(stacks.intern_stack(ab), s1);
  EXPECT_EQ(stacks.stack(s1).size(), 2u);
  EXPECT_EQ(stacks.stack(no_stack).size(), 0u);
  EXPECT_EQ(stacks.stack_count(), 3u);
  const std::array<frame_id, 1> bad{999};
  EXPECT_THROW((void)stacks.intern_stack(bad), std::out_of_range);
}

TEST(StackTable, CopiesCompareEqual) {
  string_table strings;
  stack_table stacks;
  const std::array<frame_id, 1> f{stacks.intern_frame({strings.intern("f"), no_string, 1})};
  (void)stacks.intern_stack(f);
  const stack_table copy = stacks;
  EXPECT_EQ(copy, stacks);
  EXPECT_EQ(copy.frame_at(1).line, 1u);
}

// Stacks past the first chunks of frame ids (4 MiB each) and one longer than a chunk keep their
// ids and frames; interning any of them again finds it.
TEST(StackTable, ManyAndLongStacksKeepTheirFrames) {
  string_table strings;
  stack_table stacks;
  std::vector<frame_id> ids;
  for (std::uint32_t line = 1; line <= 64; ++line)
    ids.push_back(stacks.intern_frame({strings.intern("f"), no_string, line}));
  const auto make = [&](std::size_t k, std::size_t n) {
    std::vector<frame_id> frames(n);
    for (std::size_t i = 0; i < n; ++i)
      frames[i] = ids[(k * 7 + i * (k % 5 + 1)) % ids.size()];
    return frames;
  };
  std::vector<stack_id> got;
  for (std::size_t k = 0; k < 3000; ++k)
    got.push_back(stacks.intern_stack(make(k, 700 + k % 600)));
  const auto long_stack = make(3, (std::size_t{3} << 20) / 2);
  const auto long_id = stacks.intern_stack(long_stack);
  for (std::size_t k = 0; k < 3000; ++k) {
    const auto frames = make(k, 700 + k % 600);
    ASSERT_EQ(stacks.intern_stack(frames), got[k]);
    const auto kept = stacks.stack(got[k]);
    ASSERT_TRUE(std::equal(kept.begin(), kept.end(), frames.begin(), frames.end()));
  }
  EXPECT_EQ(stacks.intern_stack(long_stack), long_id);
  EXPECT_EQ(stacks.stack(long_id).size(), long_stack.size());
  EXPECT_EQ(stacks.stack_count(), long_id + 1u);
  const stack_table copy = stacks;
  EXPECT_EQ(copy, stacks);
}

// Frame ids take 16 bits while every one fits: the 65,536th frame stores every stack again with
// 32-bit ids. Stacks interned before keep their ids and frames, and are found again; stacks
// after it hold ids on either side of 2^16.
TEST(StackTable, StacksKeepTheirFramesWhenIdsOutgrowSixteenBits) {
  string_table strings;
  stack_table stacks;
  const auto file = strings.intern("m.py");
  const auto frame_n = [&](std::uint32_t n) { return stacks.intern_frame({no_string, file, n}); };
  std::vector<std::vector<frame_id>> before;
  std::vector<stack_id> ids;
  for (std::uint32_t k = 1; k <= 300; ++k) {
    before.push_back({frame_n(k), frame_n(k + 1), frame_n(7 * k)});
    ids.push_back(stacks.intern_stack(before.back()));
  }
  const frame_id narrow = frame_n(70'000); // a 16-bit id, used again after the widening
  for (std::uint32_t line = 1; stacks.frame_count() <= 0xffff; ++line) // ids are dense
    (void)stacks.intern_frame({no_string, no_string, line});
  const std::vector<frame_id> across{frame_n(900'000), narrow, frame_n(900'001)};
  EXPECT_GT(across[0], 0xffffu);
  const auto across_id = stacks.intern_stack(across);
  for (std::size_t k = 0; k < before.size(); ++k) {
    const auto kept = stacks.stack(ids[k]);
    ASSERT_TRUE(std::equal(kept.begin(), kept.end(), before[k].begin(), before[k].end())) << k;
    ASSERT_EQ(stacks.intern_stack(before[k]), ids[k]) << k;
  }
  const auto kept = stacks.stack(across_id);
  EXPECT_TRUE(std::equal(kept.begin(), kept.end(), across.begin(), across.end()));
  EXPECT_EQ(kept[0], across[0]);
  EXPECT_EQ(stacks.intern_stack(across), across_id);
  const stack_table copy = stacks;
  EXPECT_EQ(copy, stacks);
}

} // namespace
} // namespace tdiag::trace
