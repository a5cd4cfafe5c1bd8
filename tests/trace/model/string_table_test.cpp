// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/string_table.hpp>

#include <gtest/gtest.h>

#include <string>

namespace tdiag::trace {
namespace {

TEST(StringTable, InternsOnceAndKeepsIdZeroEmpty) {
  string_table t;
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.name(no_string), "");
  EXPECT_EQ(t.intern(""), no_string);
  const string_id a = t.intern("gemm");
  const string_id b = t.intern("softmax");
  EXPECT_NE(a, b);
  EXPECT_EQ(t.intern("gemm"), a);
  EXPECT_EQ(t.find("softmax"), b);
  EXPECT_EQ(t.find("missing"), no_string);
  EXPECT_EQ(t.name(a), "gemm");
  EXPECT_EQ(t.name_or_empty(999), "");
  EXPECT_EQ(t.text_bytes(), 11u);
}

TEST(StringTable, NamesStayValidWhileTheTableGrows) {
  string_table t;
  const std::string_view first = t.name(t.intern("first"));
  for (int i = 0; i < 10'000; ++i)
    (void)t.intern(std::to_string(i));
  EXPECT_EQ(first, "first");
  EXPECT_EQ(t.find("9999"), t.intern("9999"));
}

TEST(StringTable, CopiesAreIndependentAndEqual) {
  string_table t;
  (void)t.intern("a");
  (void)t.intern("b");
  string_table copy = t;
  EXPECT_EQ(copy, t);
  (void)copy.intern("c");
  EXPECT_FALSE(copy == t);
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(copy.find("b"), t.find("b"));
  string_table assigned;
  assigned = copy;
  EXPECT_EQ(assigned, copy);
}

} // namespace
} // namespace tdiag::trace
