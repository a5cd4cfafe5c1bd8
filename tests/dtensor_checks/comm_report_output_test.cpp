// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The renderings of a comm_report of the MLP recording: the ranked text, the JSON
// (tensordiag.shard_report/v1) and the core report.
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/dtensor_checks/comm_report.hpp>

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

comm_report mlp() {
  return build_comm_report(read_case_file_strict(test::mlp_recording()), "mlp_recording.jsonl",
                           [](std::int64_t b) { return std::to_string(b / 1024) + " KiB"; });
}

bool has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

TEST(CommReportText, ShowsTheRankedTableFirstThenTheDetails) {
  const auto text = to_text(mlp());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "15 records (600 op calls); 2 source lines redistributed 3840 KiB per rank in 80 "
            "collectives (mlp_recording.jsonl)");
  const auto row1 = text.find("  1      2560 KiB      40  all_gather×40");
  const auto row2 = text.find("  2      1280 KiB      40  all_reduce×40");
  const auto detail1 = text.find("1. samples/dtensor_mlp/train.py:41 in forward: h = x @ self.w1");
  ASSERT_NE(row1, std::string::npos) << text;
  ASSERT_NE(row2, std::string::npos) << text;
  ASSERT_NE(detail1, std::string::npos) << text;
  EXPECT_LT(row1, row2);
  EXPECT_LT(row2, detail1);
  EXPECT_TRUE(has(text, "aten.mm.default arg 0 (self) [S(0), S(1)]: 64 KiB per call × 40 calls "
                        "= 2560 KiB\n"));
  EXPECT_TRUE(has(text, "S(1)→R on mesh dim 1 (tp), all_gather, 64 KiB per rank\n"));
  EXPECT_TRUE(has(text, "fix: produce `self` (arg 0) as R on mesh dim 1 (tp)"));
  EXPECT_TRUE(has(text, "propagation: 14 recorded ops checked, 14 agree with PyTorch, 0 findings; "
                        "1 not covered (aten.addcmul_.default ×1)\n"));
}

TEST(CommReportText, TopLimitsTheLines) {
  const auto text = to_text(mlp(), 1);
  EXPECT_TRUE(has(text, "... 1 more lines (--top 0 lists all)"));
  EXPECT_FALSE(has(text, "2. samples/"));
  EXPECT_TRUE(has(to_text(mlp(), 0), "2. samples/dtensor_mlp/train.py:52 in loss_fn: d = d * d"));
}

TEST(CommReportJson, FollowsTheSchema) {
  const auto text = to_json(mlp());
  const auto doc = tdiag::detail::parse_json(text, {"report", "TEST", "bad json", ""});
  EXPECT_TRUE(doc["schema"] == "tensordiag.shard_report/v1");
  EXPECT_TRUE(doc["records"] == 15);
  EXPECT_TRUE(doc["calls"] == 600);
  EXPECT_TRUE(doc["bytes"] == 65536 * 40 + 32768 * 40);
  EXPECT_TRUE(doc["count"] == 80);
  ASSERT_EQ(doc["lines"].size(), 2u);
  const auto& line = doc["lines"][0];
  EXPECT_TRUE(line["rank"] == 1);
  EXPECT_TRUE(line["file"] == "samples/dtensor_mlp/train.py");
  EXPECT_TRUE(line["line"] == 41);
  EXPECT_TRUE(line["function"] == "forward");
  EXPECT_TRUE(line["bytes"] == 65536 * 40);
  EXPECT_TRUE(line["comms"]["all_gather"] == 40);
  const auto& cause = line["causes"][0];
  EXPECT_TRUE(cause["op"] == "aten.mm.default");
  EXPECT_TRUE(cause["arg"] == 0);
  EXPECT_EQ(cause["item"].type, tdiag::detail::json_value::kind::null);
  EXPECT_TRUE(cause["arg_name"] == "self");
  EXPECT_TRUE(cause["arrived"][1] == "S(1)");
  const auto& step = cause["redistributions"][0];
  EXPECT_TRUE(step["mesh_dim"] == 1);
  EXPECT_TRUE(step["mesh_dim_name"] == "tp");
  EXPECT_TRUE(step["from"] == "S(1)");
  EXPECT_TRUE(step["to"] == "R");
  EXPECT_TRUE(step["collective"] == "all_gather");
  EXPECT_TRUE(step["bytes_per_rank"] == 65536);
  EXPECT_TRUE(cause["bytes_per_call"] == 65536);
  EXPECT_TRUE(cause["calls"] == 40);
  EXPECT_TRUE(cause["ids"][0] == "r000001");
  EXPECT_TRUE(cause["fix"]["placements"][1] == "R");
  EXPECT_TRUE(cause["fix"]["output"][1] == "S(1)");
  EXPECT_TRUE(cause["fix"]["same_output"].boolean);
  EXPECT_TRUE(has(cause["suggestion"].string, "saves 64 KiB per rank per call × 40 calls"));
  EXPECT_TRUE(doc["propagation"]["checked"] == 14);
  EXPECT_TRUE(doc["propagation"]["agree"] == 14);
  EXPECT_TRUE(doc["propagation"]["not_covered"]["aten.addcmul_.default"] == 1);
  EXPECT_EQ(doc["findings"].size(), 0u);
  EXPECT_EQ(tdiag::detail::parse_json(to_json(mlp(), 1), {"r", "T", "t", ""})["lines"].size(), 1u);
}

TEST(CommReportCore, LocatesEachLineAtTheUsersSource) {
  const auto r = to_report(mlp());
  ASSERT_EQ(r.diagnostics.size(), 2u);
  const auto& d = r.diagnostics[0];
  EXPECT_EQ(d.code, "TDIAG-DT-401");
  EXPECT_EQ(d.level, tdiag::severity::warning);
  EXPECT_EQ(d.location.file, "samples/dtensor_mlp/train.py");
  EXPECT_EQ(d.location.line, 41u);
  EXPECT_EQ(d.location.function, "forward");
  EXPECT_EQ(d.message, "this line redistributes 2560 KiB per rank in 40 collectives "
                       "(all_gather×40) before aten.mm.default");
  EXPECT_EQ(d.hint, mlp().lines[0].causes[0].suggestion);
  ASSERT_NE(d.find_field("bytes"), nullptr);
  EXPECT_EQ(std::get<std::int64_t>(d.find_field("bytes")->value), 2621440);
  EXPECT_FALSE(r.has_errors());
  EXPECT_EQ(to_report(mlp(), 1).diagnostics.size(), 1u);
}

} // namespace
