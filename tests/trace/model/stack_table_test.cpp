// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/stack_table.hpp>

#include <gtest/gtest.h>

#include <array>

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

} // namespace
} // namespace tdiag::trace
