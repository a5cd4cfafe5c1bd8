// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/case_check.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {
using namespace tdiag::dtensor;

constexpr const char* good =
    R"x({"id":"ok1","op":"aten.mm.default","mesh":[2,4],"args":[{"tensor":{"shape":[12,1],"dtype":"float32","placements":["S(0)","P(sum)"]}},{"tensor":{"shape":[1,16],"dtype":"float32","placements":["P(max)","S(1)"]}}]})x";
constexpr const char* rejected =
    R"x({"id":"bad1","op":"aten.mm.default","mesh":[2],"args":[{"tensor":{"shape":[12,3],"dtype":"float32","placements":["R"]}},{"tensor":{"shape":[4,8],"dtype":"float32","placements":["R"]}}]})x";

TEST(CaseCheck, AnswersInFileOrderWithMalformedLinesInPlace) {
  const std::string text = std::string(good) + "\n{\"id\":\"m\"\n" + rejected + "\n";
  const auto check = check_cases(parse_cases(text));
  ASSERT_EQ(check.answers.size(), 2u);
  EXPECT_EQ(check.rejected, 1u);
  const auto jsonl = to_jsonl(check);
  const auto first = jsonl.find("\"ok1\"");
  const auto malformed = jsonl.find("\"line\":2");
  const auto last = jsonl.find("\"bad1\"");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(malformed, std::string::npos);
  ASSERT_NE(last, std::string::npos);
  EXPECT_LT(first, malformed);
  EXPECT_LT(malformed, last);
  EXPECT_EQ(std::count(jsonl.begin(), jsonl.end(), '\n'), 3);
}

TEST(CaseCheck, ReportLocatesRejectionsAndMalformedLines) {
  const std::string text = std::string(good) + "\n{\"id\":\"m\"\n" + rejected + "\n";
  const auto r = check_report(check_cases(parse_cases(text)), "cases.jsonl");
  ASSERT_EQ(r.diagnostics.size(), 2u);
  EXPECT_EQ(r.diagnostics[0].code, codes::malformed_case);
  EXPECT_EQ(r.diagnostics[0].location.line, 2u);
  EXPECT_EQ(r.diagnostics[1].code, codes::contraction_mismatch);
  EXPECT_EQ(r.diagnostics[1].location.file, "cases.jsonl");
  EXPECT_EQ(r.diagnostics[1].location.line, 3u);
  ASSERT_NE(r.diagnostics[1].find_field("id"), nullptr);
  EXPECT_EQ(*r.diagnostics[1].find_field("id"), tdiag::field_value("bad1"));
}

} // namespace
