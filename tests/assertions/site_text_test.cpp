// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include "../../assertions/src/site_text.hpp"

using namespace tdiag::assertions::detail;

TEST(SiteText, SplitsArgumentsAtTopLevelCommasOnly) {
  const auto parts = split_arguments(R"(f(a, b) < n[1, 2], "x, {}", g(c, d))");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0], "f(a, b) < n[1, 2]");
  EXPECT_EQ(parts[1], R"("x, {}")");
  EXPECT_EQ(parts[2], "g(c, d)");
}

TEST(SiteText, ShortFunctionNamesKeepTemplateArguments) {
  EXPECT_EQ(
      short_function_name("void gather(const T*, const I*, T*, int) [with T = float; I = int]"),
      "gather<float, int>");
  EXPECT_EQ(short_function_name("void gather(const T *, int) [T = double]"), "gather<double>");
  EXPECT_EQ(short_function_name("void ns::gather<float>(float const*, int)"), "ns::gather<float>");
  EXPECT_EQ(short_function_name("void plain_kernel(int)"), "plain_kernel");
  EXPECT_EQ(strip_parentheses("(pair<a, b>)"), "pair<a, b>");
}

TEST(SiteText, DescribesIndexChecksWithBothValues) {
  site_text site;
  site.kind = tdiag::assertions::site_kind::index;
  site.expression = "j, n";
  site.operand_count = 2;
  tdiag::assertions::failure_record r{};
  r.operand_count = 2;
  r.types[0] = tdiag::assertions::value_type::i32;
  r.values[0] = 17;
  r.types[1] = tdiag::assertions::value_type::i32;
  r.values[1] = 16;
  const auto text = describe(site, &r);
  EXPECT_EQ(text.headline, "index 17 not below 16 (TDIAG_CHECK_INDEX(j, n))");
  ASSERT_EQ(text.values.size(), 2u);
  EXPECT_EQ(text.values[0].name, "j");
  EXPECT_EQ(text.values[1].name, "n");
}

TEST(SiteText, BadFormatStringsShowTheFormatAndTheValues) {
  site_text site;
  site.expression = R"(x > 0, "x is {:q}", x)";
  site.message = "x is {:q}";
  site.operand_count = 1;
  tdiag::assertions::failure_record r{};
  r.operand_count = 1;
  r.types[0] = tdiag::assertions::value_type::i32;
  r.values[0] = 5;
  const auto text = describe(site, &r);
  EXPECT_NE(text.headline.find("format error"), std::string::npos) << text.headline;
  EXPECT_NE(text.headline.find("x is {:q}"), std::string::npos);
}
