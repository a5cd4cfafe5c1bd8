// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/case_io.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

constexpr const char* good =
    R"x({"id":"s1-00001","op":"aten.mm.default","mesh":[2,4],"args":[{"tensor":{"shape":[12,1],"dtype":"float32","placements":["S(0)","P(sum)"]}},{"tensor":{"shape":[1,16],"dtype":"float32","placements":["P(max)","S(1)"]}}],"expect":{"ok":true,"outputs":[{"shape":[12,16],"placements":["S(0)","P(sum)"]}],"comms":{"all_gather":1,"all_reduce":1}}})x";

TEST(ParseCases, ReadsTheCorpusFormat) {
  const auto c = parse_case_line(good);
  EXPECT_EQ(c.id, "s1-00001");
  EXPECT_EQ(c.call.op, "aten.mm.default");
  EXPECT_EQ(c.call.mesh.shape(), (std::vector<std::int64_t>{2, 4}));
  ASSERT_EQ(c.call.args.size(), 2u);
  EXPECT_EQ(to_string(c.call.args[1].tensor), "f32[1, 16] [P(max), S(1)]");
  ASSERT_TRUE(c.expect.has_value());
  EXPECT_EQ(c.expect->comms[collective::all_reduce], 1);
}

TEST(ParseCases, ReportsMalformedLinesWithNumbersAndKeepsGoing) {
  const std::string text =
      std::string(good) + "\n" + R"x({"id":"x","op":"aten.mm.default")x" + "\n\n" +
      R"x({"id":"y","op":"a","mesh":[2],"args":[{"tensor":{"shape":[4],"placements":["Q"]}}]})x" +
      "\n" + good + "\n";
  const auto file = parse_cases(text);
  EXPECT_EQ(file.cases.size(), 2u);
  ASSERT_EQ(file.errors.size(), 2u);
  EXPECT_EQ(file.errors[0].line, 2u);
  EXPECT_EQ(file.errors[1].line, 4u);
  EXPECT_EQ(file.errors[1].id, "y");
  EXPECT_NE(file.errors[1].message.find("'Q' is not a placement"), std::string::npos);
  EXPECT_EQ(file.cases[1].line, 5u);
  EXPECT_NE(to_jsonl(file.errors[0]).find("\"line\":2"), std::string::npos);
}

TEST(ParseCases, RejectsOutOfRangeInput) {
  EXPECT_ANY_THROW((void)parse_case_line(R"x({"id":"z","op":"a","mesh":[0],"args":[]})x"));
  EXPECT_ANY_THROW((void)parse_case_line(
      R"x({"id":"z","op":"a","mesh":[2],"args":[{"tensor":{"shape":[1099511627776,1099511627776],"placements":["R"]}}]})x"));
  EXPECT_ANY_THROW((void)parse_case_line("not json"));
}

TEST(AnswerCase, WritesTheAnswerFormat) {
  const auto a = answer_case(parse_case_line(good));
  EXPECT_EQ(
      to_jsonl(a),
      R"x({"id":"s1-00001","ok":true,"outputs":[{"shape":[12,16],"placements":["S(0)","P(sum)"]}],"comms":{"all_gather":1,"all_reduce":1}})x");
  const auto bad = answer_case(parse_case_line(
      R"x({"id":"e","op":"aten.relu_.default","mesh":[4],"args":[{"tensor":{"shape":[4],"dtype":"float32","placements":["P(sum)"]}}]})x"));
  EXPECT_FALSE(bad.ok);
  const auto line = to_jsonl(bad);
  EXPECT_NE(line.find(R"x("ok":false,"error":"aten.relu_ arg 0 (self))x"), std::string::npos)
      << line;
  EXPECT_NE(line.find(R"x("code":"TDIAG-DT-003")x"), std::string::npos) << line;
}

} // namespace
