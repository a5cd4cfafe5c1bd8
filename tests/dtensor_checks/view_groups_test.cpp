// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "../../dtensor_checks/src/rules/view_groups.hpp"

namespace {
using namespace tdiag::dtensor;
using namespace tdiag::dtensor::detail;

TEST(ViewGroups, FlattenKeepAndSplit) {
  auto m = view_groups({2, 3, 4}, {2, 12});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].kind, dim_kind::input_dim);
  EXPECT_EQ(m[1].kind, dim_kind::flatten);
  EXPECT_EQ(m[1].dims, (std::vector<std::int64_t>{1, 2}));
  m = view_groups({6}, {2, 3});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].kind, dim_kind::split);
  EXPECT_EQ(m[1].split_id, 1u);
}

TEST(ViewGroups, SizeOneDims) {
  // A size-1 input dim that meets a real output dim is dropped.
  auto m = view_groups({4, 1, 16}, {4, 16});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].dims, (std::vector<std::int64_t>{2}));
  // A trailing size-1 output dim keeps the size-1 input dim it meets.
  m = view_groups({2, 8, 1}, {16, 1});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1].kind, dim_kind::input_dim);
  EXPECT_EQ(m[1].dims, (std::vector<std::int64_t>{2}));
  // A new size-1 output dim is a singleton.
  m = view_groups({6}, {6, 1});
  EXPECT_EQ(m[1].kind, dim_kind::singleton);
}

} // namespace
