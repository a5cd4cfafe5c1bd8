// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include "sample_report.hpp"

TEST(ReportFormat, NamesRoundTrip) {
  for (const auto f :
       {tdiag::report_format::text, tdiag::report_format::json, tdiag::report_format::github,
        tdiag::report_format::junit, tdiag::report_format::sarif}) {
    EXPECT_EQ(tdiag::parse_report_format(tdiag::to_string(f)), f);
  }
  EXPECT_FALSE(tdiag::parse_report_format("xml").has_value());
  EXPECT_FALSE(tdiag::parse_report_format("JSON").has_value());
}

TEST(ReportFormat, RenderDispatchesToEachWriter) {
  const auto r = tdiag::test::sample_report();
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::text), tdiag::to_text(r));
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::text, {.color = true}),
            tdiag::to_text(r, {.color = true}));
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::json), tdiag::to_json(r));
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::github), tdiag::to_github(r));
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::junit), tdiag::to_junit(r));
  EXPECT_EQ(tdiag::render(r, tdiag::report_format::sarif), tdiag::to_sarif(r));
}
