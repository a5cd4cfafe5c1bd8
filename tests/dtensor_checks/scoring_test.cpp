// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Scores tensordiag's propagation on PyTorch 2.11's golden corpus as ../shared/README.md says:
// ok cases agree when the outputs (shapes and placements) are equal, user_error cases when
// rejected; collective counts are scored apart.
#include <tensordiag/dtensor_checks/case_io.hpp>
#include <tensordiag/dtensor_checks/scoring.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace {

using namespace tdiag::dtensor;

std::filesystem::path corpus_path() {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "golden" / "dtensor_cases.jsonl";
}

TEST(GoldenCorpus, AgreesWithPyTorch) {
  if (!std::filesystem::exists(corpus_path()))
    GTEST_SKIP() << "no golden corpus at " << corpus_path();
  const auto file = read_case_file(corpus_path());
  EXPECT_TRUE(file.errors.empty()) << file.errors.size() << " unreadable lines, first: line "
                                   << (file.errors.empty() ? 0 : file.errors[0].line) << ": "
                                   << (file.errors.empty() ? "" : file.errors[0].message);
  ASSERT_EQ(file.cases.size(), 2480u);
  std::vector<case_answer> answers;
  answers.reserve(file.cases.size());
  for (const auto& c : file.cases)
    answers.push_back(answer_case(c));
  const auto s = score_answers(file.cases, answers);
  fmt::print("corpus agreement: {}/{} = {:.2f}% (ok {}/{}, user_error rejected {}/{}, limitation "
             "{} of which "
             "rejected {})\n",
             s.ok_agree + s.user_error_rejected + s.limitation_cases, s.total,
             100.0 * s.agreement(), s.ok_agree, s.ok_cases, s.user_error_rejected,
             s.user_error_cases, s.limitation_cases, s.limitation_rejected);
  fmt::print("comms agreement: {}/{} ok cases = {:.2f}%\n", s.comms_agree, s.ok_cases,
             100.0 * s.comms_agreement());
  for (const auto& [op, o] : s.per_op) {
    if (o.disagree || o.comms_disagree) {
      fmt::print("  {:<32} cases {:>4}  disagree {:>3}  comms disagree {:>3}\n", op, o.cases,
                 o.disagree, o.comms_disagree);
    }
  }
  for (const auto& d : s.disagreements)
    fmt::print("  DIFF {}\n", d);
  for (const auto& d : s.comms_disagreements)
    fmt::print("  COMMS {}\n", d);
  EXPECT_GE(s.agreement(), 0.98);
  EXPECT_GE(s.comms_agreement(), 0.95);
}

TEST(ScoreAnswers, CountsRejectedUserErrorsAsAgreement) {
  dtensor_case c;
  c.id = "x";
  c.call.op = "aten.mm.default";
  c.expect = case_expectation{};
  c.expect->ok = false;
  c.expect->error_class = "user_error";
  case_answer a;
  a.id = "x";
  a.ok = false;
  const auto s = score_answers({c}, {a});
  EXPECT_EQ(s.user_error_rejected, 1u);
  EXPECT_DOUBLE_EQ(s.agreement(), 1.0);
}

TEST(ScoreAnswers, ScoresAnUnclassifiedRejectionEitherWay) {
  dtensor_case c;
  c.id = "u";
  c.call.op = "aten.mm.default";
  c.expect = case_expectation{};
  c.expect->ok = false; // a recording without `class`
  case_answer accepted;
  accepted.ok = true;
  const auto s = score_answers({c, c}, {accepted, case_answer{}});
  EXPECT_EQ(s.unknown_cases, 2u);
  EXPECT_EQ(s.unknown_rejected, 1u);
  EXPECT_EQ(s.user_error_cases, 0u);
  EXPECT_TRUE(s.disagreements.empty());
  EXPECT_DOUBLE_EQ(s.agreement(), 1.0);
}

TEST(ScoreAnswers, ComparesShapesAndPlacements) {
  dtensor_case c;
  c.id = "y";
  c.call.op = "aten.relu.default";
  c.expect = case_expectation{};
  c.expect->outputs = {{{4}, {placement::shard(0)}}};
  case_answer a;
  a.ok = true;
  a.outputs = {{{4}, {placement::replicate()}}};
  const auto s = score_answers({c}, {a});
  EXPECT_EQ(s.ok_agree, 0u);
  EXPECT_EQ(s.per_op.at("aten.relu.default").disagree, 1u);
}

} // namespace
