// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_merge.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

tdiag::report rank_report(std::int64_t rank, std::int64_t device, const char* code) {
  tdiag::report r;
  r.metadata.tool = "t";
  r.metadata.rank = rank;
  r.metadata.device = device;
  tdiag::diagnostic d;
  d.code = code;
  r.diagnostics.push_back(d);
  return r;
}

TEST(ReportMerge, EmptyInputGivesEmptyReport) {
  const auto merged = tdiag::merge_reports({});
  EXPECT_TRUE(merged.diagnostics.empty());
}

TEST(ReportMerge, KeepsRankPerDiagnosticAndDropsDisagreeingMetadata) {
  const std::vector<tdiag::report> in{rank_report(0, 3, "A"), rank_report(1, 4, "B")};
  const auto merged = tdiag::merge_reports(in);
  ASSERT_EQ(merged.diagnostics.size(), 2u);
  EXPECT_FALSE(merged.metadata.rank.has_value());
  EXPECT_FALSE(merged.metadata.device.has_value());
  EXPECT_EQ(merged.metadata.tool, "t");
  EXPECT_EQ(*merged.diagnostics[0].find_field("rank"), tdiag::field_value(0));
  EXPECT_EQ(*merged.diagnostics[1].find_field("rank"), tdiag::field_value(1));
  EXPECT_EQ(*merged.diagnostics[1].find_field("device"), tdiag::field_value(4));
}

TEST(ReportMerge, AgreeingDeviceStaysOnTheReport) {
  const std::vector<tdiag::report> in{rank_report(0, 2, "A"), rank_report(1, 2, "B")};
  const auto merged = tdiag::merge_reports(in);
  ASSERT_TRUE(merged.metadata.device.has_value());
  EXPECT_EQ(*merged.metadata.device, 2);
  EXPECT_EQ(merged.diagnostics[0].find_field("device"), nullptr);
}

} // namespace
