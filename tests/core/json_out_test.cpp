// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/detail/json_out.hpp>

#include <gtest/gtest.h>

#include <limits>

using namespace tdiag::detail;

TEST(JsonOut, WritesTwoSpaceIndentedMembersInOrder) {
  json_out out;
  out.begin_object();
  out.member("z", "last letter");
  out.member("a", std::int64_t{-3});
  out.key("list");
  out.begin_array();
  out.boolean(true);
  out.number(1.0);
  out.begin_object();
  out.end_object();
  out.end_array();
  out.key("empty");
  out.begin_array();
  out.end_array();
  out.end_object();
  EXPECT_EQ(out.take(), "{\n"
                        "  \"z\": \"last letter\",\n"
                        "  \"a\": -3,\n"
                        "  \"list\": [\n"
                        "    true,\n"
                        "    1.0,\n"
                        "    {}\n"
                        "  ],\n"
                        "  \"empty\": []\n"
                        "}\n");
}

TEST(JsonOut, DoublesAlwaysReadBackAsFloats) {
  EXPECT_EQ(format_json_double(1.0), "1.0");
  EXPECT_EQ(format_json_double(-0.0), "-0.0");
  EXPECT_EQ(format_json_double(0.1), "0.1");
  EXPECT_EQ(format_json_double(2.5e-7), "2.5e-07");
  EXPECT_EQ(format_json_double(1e300), "1e+300");
  EXPECT_EQ(format_json_double(123456789.0), "123456789.0");
}

TEST(JsonOut, EscapesStringsAndRepairsUtf8) {
  std::string out;
  append_json_string(out, "q\"b\\n\n\t\x01\x7f\xC3\xA9\xFF");
  EXPECT_EQ(out, "\"q\\\"b\\\\n\\n\\t\\u0001\\u007f\xC3\xA9\xEF\xBF\xBD\"");
}

TEST(JsonOut, WritesFieldValuesInline) {
  json_out out;
  out.begin_array();
  out.field(tdiag::field_value::list{3, 0, 0});
  out.field(tdiag::field_value::list{tdiag::field_value::list{1}, "x", 2.0, true});
  out.field(std::numeric_limits<double>::quiet_NaN());
  out.field(-std::numeric_limits<double>::infinity());
  out.field(std::int64_t{17});
  out.end_array();
  EXPECT_EQ(out.take(), "[\n  [3, 0, 0],\n  [[1], \"x\", 2.0, true],\n  {\"float\": \"nan\"},\n"
                        "  {\"float\": \"-inf\"},\n  17\n]\n");
}

TEST(JsonOut, CompactStyleWritesOneLineWithoutWhiteSpace) {
  json_out out(json_style::compact);
  out.begin_object();
  out.member("id", "a\"b");
  out.key("list");
  out.begin_array();
  out.integer(1);
  out.null();
  out.begin_object();
  out.end_object();
  out.end_array();
  out.key("f");
  out.field(tdiag::field_value(tdiag::field_value::list{std::int64_t{3}, std::int64_t{0}}));
  out.end_object();
  EXPECT_EQ(out.take(), R"({"id":"a\"b","list":[1,null,{}],"f":[3,0]})");
}

TEST(JsonOut, LineBreaksAndStreamingKeepTheDocumentValid) {
  json_out out(json_style::compact);
  std::string stored;
  out.begin_array();
  for (int i = 0; i < 2; ++i) {
    out.line_break();
    out.integer(i);
    stored += out.written();
    out.discard_written();
  }
  out.line_break();
  out.end_array();
  out.line_break();
  stored += out.take();
  EXPECT_EQ(stored, "[\n0,\n1\n]\n");
}
