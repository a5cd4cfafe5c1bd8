// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/explain.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

TEST(ExplainText, ShowsCandidatesChoiceAndPlan) {
  const auto c =
      test::call("aten.mm.default", "2,4", {"f32[12,1] (S(0),P(sum))", "f32[1,16] (P(max),S(1))"});
  const auto text = explain_text(c, propagate(c));
  EXPECT_NE(text.find("chosen: #10 (the first candidate of minimum cost)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("output 0: f32[12, 16] [S(0), P(sum)]"), std::string::npos) << text;
  EXPECT_NE(text.find("S(1)→R on mesh dim 1: all_gather, 64 bytes per rank"), std::string::npos)
      << text;
  EXPECT_NE(text.find("candidates of infinite cost not shown"), std::string::npos) << text;
  EXPECT_NE(text.find("collectives: all_gather 1, all_reduce 1"), std::string::npos) << text;
  const auto all = explain_text(c, propagate(c), true);
  EXPECT_GT(all.size(), text.size());
}

TEST(ExplainJson, CarriesTheSameFacts) {
  const auto c = test::call("aten.relu.default", "4", {"f32[8] (P(sum))"});
  const auto json = explain_json(c, propagate(c));
  EXPECT_NE(json.find(R"x("outputs":[{"shape":[8],"placements":"[R]"}])x"), std::string::npos)
      << json;
  EXPECT_NE(json.find(R"x("comms":{"all_reduce":1})x"), std::string::npos) << json;
}

TEST(ParseArg, ReadsEveryKind) {
  EXPECT_EQ(parse_arg("f32[4,2] (S(0),R)", 2).kind, arg_kind::tensor);
  EXPECT_EQ(parse_arg("[f32[4] (R); f32[2] (R)]", 1).tensors.size(), 2u);
  EXPECT_EQ(parse_arg("[1, -2]", 1).ints, (std::vector<std::int64_t>{1, -2}));
  EXPECT_EQ(parse_arg("[]", 1).kind, arg_kind::ints);
  EXPECT_EQ(parse_arg("3", 1).int_value, 3);
  EXPECT_DOUBLE_EQ(parse_arg("2.5", 1).float_value, 2.5);
  EXPECT_EQ(parse_arg("true", 1).kind, arg_kind::bool_value);
  EXPECT_EQ(parse_arg("None", 1).kind, arg_kind::none);
  EXPECT_THROW((void)parse_arg("what", 1), tdiag::input_error);
  EXPECT_THROW((void)parse_arg("[1, x]", 1), tdiag::input_error);
}

} // namespace
