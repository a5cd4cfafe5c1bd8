// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/core/error.hpp>

#include <gtest/gtest.h>

#include <string>

using namespace tdiag::detail;

namespace {
constexpr json_source source{"t.json", "TDIAG-CORE-001", "invalid JSON", "a hint"};

std::string error_of(std::string_view text, std::size_t max_depth = json_max_depth) {
  try {
    (void)parse_json(text, source, max_depth);
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(e.report().diagnostics.at(0).hint, "a hint");
    return e.what();
  }
  return {};
}
} // namespace

TEST(JsonIn, EveryValueKnowsWhereItStarts) {
  constexpr std::string_view doc =
      "{\n  \"a\": [10, {\"c\": \"x,}]\"}, -3.5],\n  \"d\\u0065\": true}";
  const json_value v = parse_json(doc, source);
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(v.names, (std::vector<std::string>{"a", "de"}));
  const json_value* a = v.find("a");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->items.size(), 3u);
  EXPECT_EQ(doc.substr(a->items[1].offset, 5), "{\"c\":");
  EXPECT_EQ(a->items[1].find("c")->string, "x,}]");
  EXPECT_EQ(a->items[2].type, json_value::kind::floating);
  EXPECT_EQ(a->items[2].floating, -3.5);
  EXPECT_EQ(doc.substr(v.find("de")->offset, 4), "true");
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(JsonIn, KeepsTheIntegerKinds) {
  const json_value v =
      parse_json("[9223372036854775807, 9223372036854775808, -1, 1.0, null]", source);
  EXPECT_EQ(v.items[0].type, json_value::kind::integer);
  EXPECT_EQ(v.items[1].type, json_value::kind::unsigned_integer);
  EXPECT_EQ(v.items[1].unsigned_integer, 9223372036854775808u);
  EXPECT_EQ(v.items[2].integer, -1);
  EXPECT_EQ(v.items[3].type, json_value::kind::floating);
  EXPECT_EQ(v.items[4].type, json_value::kind::null);
  EXPECT_EQ(v.items[4].kind_name(), "null");
}

TEST(JsonIn, ReadsScalarDocuments) {
  EXPECT_EQ(parse_json(" \"x\" ", source).string, "x");
  EXPECT_EQ(parse_json("17", source).integer, 17);
}

TEST(JsonIn, RefusesTrailingContent) {
  EXPECT_EQ(error_of("{} {}"), "t.json:1:4: trailing content after the JSON document");
  EXPECT_EQ(error_of("[1]\n]"), "t.json:2:1: trailing content after the JSON document");
}

TEST(JsonIn, BoundsNesting) {
  EXPECT_EQ(error_of("[[[1]]]", 2), "t.json:1:3: arrays and objects nest deeper than 2 levels");
  EXPECT_EQ(error_of("[[1]]", 2), "");
  EXPECT_EQ(error_of(std::string(1'000'000, '[') + std::string(1'000'000, ']')),
            "t.json:1:65: arrays and objects nest deeper than 64 levels");
  EXPECT_EQ(error_of(std::string(1'000'000, '[')),
            "t.json:1:1000001: the input ends inside an array or object");
}

TEST(JsonIn, MessagesStayOnOnePrintableLine) {
  EXPECT_EQ(printable("a\nb\x1b\xff"), "a\\x0ab\\x1b\\xff");
  const std::string what = error_of("[\"\x01\"]");
  EXPECT_EQ(what, "t.json:1:3: unescaped control character in a string");
}

TEST(JsonIn, PositionsCountLinesAndBytes) {
  const auto p = position_of("ab\ncd", 4);
  EXPECT_EQ(p.line, 2u);
  EXPECT_EQ(p.column, 2u);
  EXPECT_EQ(position_of("ab", 99).offset, 2u);
}
