// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "sample_report.hpp"

using tdiag::test::sample_report;

namespace {
// The workflow-command grammar: ::command key=value,key=value::data, properties free of raw
// ',' ':' and line breaks, data free of line breaks.
const std::regex command_line(
    R"(^::(error|warning|notice)( (file|line|col|endLine|endColumn|title)=[^,:\r\n]*(,(file|line|col|endLine|endColumn|title)=[^,:\r\n]*)*)?::[^\r\n]*$)");
} // namespace

TEST(GithubWriter, EveryLineIsAWorkflowCommand) {
  std::istringstream lines(tdiag::to_github(sample_report()));
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    EXPECT_TRUE(std::regex_match(line, command_line)) << line;
  EXPECT_EQ(count, 3);
}

TEST(GithubWriter, MapsSeverityAndLocation) {
  std::istringstream lines(tdiag::to_github(sample_report()));
  std::string error, warning, note;
  std::getline(lines, error), std::getline(lines, warning), std::getline(lines, note);
  EXPECT_EQ(error.rfind("::error file=kernels/gather.cu,line=42,col=5,title=[TDIAG-DSA-001] "
                        "device assertion failed%3A idx < n::index 4113 is out of range",
                        0),
            0u)
      << error;
  EXPECT_EQ(warning.rfind("::warning file=model/layers.py,line=214,title=", 0), 0u) << warning;
  EXPECT_EQ(note.rfind("::notice title=[TDIAG-TEST-003] no location::", 0), 0u) << note;
}

TEST(GithubWriter, EscapesDataAndPropertiesAsTheRunnerRequires) {
  const std::string out = tdiag::to_github(sample_report());
  // Data: % \r \n escaped, ':' and ',' kept.
  EXPECT_NE(
      out.find("::aten.add_ arg 1: S(0) must become P(sum), 100%25 \"impossible\", a, b: c%0A"),
      std::string::npos)
      << out;
  EXPECT_NE(out.find("a note without a location%0D%0Aand CR LF"), std::string::npos);
  EXPECT_NE(out.find("note: second note%0Awith two lines"), std::string::npos);
  tdiag::report r;
  tdiag::diagnostic d;
  d.title = "a, b: 50%";
  d.location.file = "dir,x/a:b.cu";
  r.diagnostics.push_back(d);
  EXPECT_EQ(tdiag::to_github(r),
            "::error file=dir%2Cx/a%3Ab.cu,title=a%2C b%3A 50%25::a, b: 50%25\n");
}
