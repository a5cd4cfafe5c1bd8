// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/table_model.hpp>

#include <gtest/gtest.h>

namespace {

using namespace tdiag::view;

table_model sample() {
  table_model m("t", {"Name", "Total"});
  for (const auto& [name, v] : {std::pair{"gemm_kernel", 30.0}, std::pair{"Softmax", 10.0},
                                std::pair{"elementwise_add", 20.0}}) {
    table_row r;
    r.cells = {name, std::to_string(v)};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), v};
    m.add_row(r);
  }
  return m;
}

TEST(TableModel, RegexFilterIsCaseInsensitive) {
  auto m = sample();
  EXPECT_EQ(m.set_filter("softMAX|gemm"), "");
  ASSERT_EQ(m.visible().size(), 2u);
  EXPECT_EQ(m.set_filter(""), "");
  EXPECT_EQ(m.visible().size(), 3u);
}

TEST(TableModel, BadRegexKeepsThePreviousFilter) {
  auto m = sample();
  EXPECT_EQ(m.set_filter("gemm"), "");
  EXPECT_NE(m.set_filter("(unclosed"), "");
  EXPECT_EQ(m.filter(), "gemm");
  EXPECT_EQ(m.visible().size(), 1u);
}

TEST(TableModel, SortsByKeyThenTextAndKeepsSortThroughFilters) {
  auto m = sample();
  m.sort(1, false);
  ASSERT_EQ(m.visible().size(), 3u);
  EXPECT_EQ(m.rows()[m.visible()[0]].cells[0], "gemm_kernel");
  EXPECT_EQ(m.rows()[m.visible()[2]].cells[0], "Softmax");
  m.sort(0, true);
  EXPECT_EQ(m.rows()[m.visible()[0]].cells[0], "Softmax"); // 'S' < 'e' < 'g'
  m.sort(1, true);
  EXPECT_EQ(m.set_filter("e"), "");
  EXPECT_EQ(m.rows()[m.visible()[0]].cells[0], "elementwise_add");
}

} // namespace
