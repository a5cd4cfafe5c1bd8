// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include "sample_report.hpp"

using tdiag::test::sample_report;

namespace {
std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string_view::npos; pos = text.find(what, pos + 1))
    ++n;
  return n;
}
} // namespace

TEST(JunitWriter, OneSuiteOneCasePerDiagnosticErrorsAsFailures) {
  const std::string xml = tdiag::to_junit(sample_report());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_EQ(occurrences(xml, "<testsuite "), 1u);
  EXPECT_EQ(occurrences(xml, "<testcase "), 3u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<system-out>"), 2u);
  EXPECT_NE(xml.find("tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"0\" "
                     "timestamp=\"2026-12-02T13:14:15Z\" hostname=\"gpu-node-07\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<property name=\"rank\" value=\"3\"/>"), std::string::npos);
  EXPECT_NE(
      xml.find(
          "<testcase classname=\"tensordiag.TDIAG-DSA-001\" name=\"device assertion "
          "failed: idx &lt; n (kernels/gather.cu:42)\" file=\"kernels/gather.cu\" line=\"42\">"),
      std::string::npos)
      << xml;
}

TEST(JunitWriter, EscapesMarkupControlCharactersAndBadUtf8) {
  tdiag::report r;
  tdiag::diagnostic d;
  d.code = "C";
  d.title = "a \"quoted\" <tag> & 'x'";
  d.message = "line1\nline2 \x1b[0m \xFF";
  r.diagnostics.push_back(d);
  const std::string xml = tdiag::to_junit(r);
  EXPECT_NE(xml.find("name=\"a &quot;quoted&quot; &lt;tag&gt; &amp; &apos;x&apos;\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("message=\"line1&#10;line2 \\x1b[0m \xEF\xBF\xBD\""), std::string::npos)
      << xml;
  EXPECT_EQ(xml.find('\x1b'), std::string::npos);
}

TEST(JunitWriter, EmptyReportIsAnEmptySuite) {
  const std::string xml = tdiag::to_junit(tdiag::report{});
  EXPECT_NE(xml.find("tests=\"0\" failures=\"0\""), std::string::npos);
  EXPECT_EQ(occurrences(xml, "<testcase "), 0u);
}
