// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_locate.hpp>

#include <gtest/gtest.h>

using namespace tdiag::detail;

namespace {
constexpr std::string_view doc = "{\n"
                                 "  \"a\": {\"b\": [10, {\"c\": \"x,}]\"}, 30]},\n"
                                 "  \"d\\u0065\": true,\n"
                                 "  \"a\": 5\n"
                                 "}";
std::string_view at(std::size_t offset) {
  return doc.substr(offset, 4);
}
} // namespace

TEST(JsonLocate, FindsNestedMembersAndArrayElements) {
  EXPECT_EQ(at(locate_json_value(doc, {})), "{\n  ");
  EXPECT_EQ(at(locate_json_value(doc, {"d"
                                       "e"})),
            "true");
  EXPECT_EQ(at(locate_json_value(doc, {"a"})), "5\n}") << "duplicates: the last one wins";
}

TEST(JsonLocate, SkipsStringsThatLookLikeStructure) {
  const std::string_view first = "{\"a\": {\"b\": [10, {\"c\": \"x,}]\"}, 30]}}";
  EXPECT_EQ(first.substr(locate_json_value(first, {"a", "b", "2"}), 2), "30");
  EXPECT_EQ(first.substr(locate_json_value(first, {"a", "b", "1", "c"}), 6), "\"x,}]\"");
}

TEST(JsonLocate, StopsAtTheDeepestExistingValue) {
  const std::string_view text = "{\"a\": [1, 2]}";
  EXPECT_EQ(text.substr(locate_json_value(text, {"a", "7"})), "[1, 2]}");
  EXPECT_EQ(text.substr(locate_json_value(text, {"missing", "x"})), text);
  EXPECT_EQ(text.substr(locate_json_value(text, {"a", "not-a-number"})), "[1, 2]}");
}

TEST(JsonLocate, ReportsOneBasedLinesAndColumns) {
  const auto p = position_of(doc, doc.find("true"));
  EXPECT_EQ(p.line, 3u);
  EXPECT_EQ(p.column, 14u);
  const auto end = position_of("ab", 99);
  EXPECT_EQ(end.offset, 2u);
  EXPECT_EQ(end.column, 3u);
}
