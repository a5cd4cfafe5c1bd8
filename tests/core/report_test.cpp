// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report.hpp>
#include <tensordiag/core/version.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <unistd.h>

#include "sample_report.hpp"

TEST(Report, SeverityNamesRoundTrip) {
  for (const auto level : {tdiag::severity::note, tdiag::severity::warning, tdiag::severity::error})
    EXPECT_EQ(tdiag::parse_severity(tdiag::to_string(level)), level);
  EXPECT_FALSE(tdiag::parse_severity("fatal").has_value());
}

TEST(Report, FindFieldReturnsTheFirstMatch) {
  tdiag::diagnostic d;
  d.add_field("x", 1).add_field("x", 2).add_field("y", "z");
  ASSERT_NE(d.find_field("x"), nullptr);
  EXPECT_EQ(*d.find_field("x"), tdiag::field_value{1});
  EXPECT_EQ(d.find_field("missing"), nullptr);
}

TEST(Report, CountsBySeverity) {
  const auto r = tdiag::test::sample_report();
  EXPECT_EQ(r.count(tdiag::severity::error), 1u);
  EXPECT_EQ(r.count(tdiag::severity::warning), 1u);
  EXPECT_TRUE(r.has_errors());
  EXPECT_FALSE(tdiag::report{}.has_errors());
}

TEST(Report, MetadataDescribesThisProcess) {
  const auto m = tdiag::make_report_metadata("probe");
  EXPECT_EQ(m.tool, "probe");
  EXPECT_EQ(m.version, TDIAG_VERSION_STRING);
  EXPECT_EQ(m.pid, getpid());
  EXPECT_TRUE(std::regex_match(m.time, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << m.time;
  EXPECT_FALSE(m.rank.has_value());
}

TEST(Report, FieldValuesKeepTheirKind) {
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(tdiag::field_value{17u}.value));
  EXPECT_TRUE(std::holds_alternative<double>(tdiag::field_value{1.5f}.value));
  EXPECT_TRUE(std::holds_alternative<bool>(tdiag::field_value{true}.value));
  EXPECT_TRUE(std::holds_alternative<std::string>(tdiag::field_value{"s"}.value));
}
