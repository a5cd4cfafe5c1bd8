// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "sample_report.hpp"

using tdiag::test::sample_report;

TEST(JsonWriter, WritesTheDocumentedShape) {
  tdiag::report r;
  r.metadata = {"tensordiag", "0.1.0", "2026-12-02T13:14:15Z", "h", 7, std::nullopt, std::nullopt};
  tdiag::diagnostic d;
  d.code = "TDIAG-X-001";
  d.title = "t";
  d.message = "m";
  d.location.file = "a.cpp";
  d.location.line = 3;
  d.add_field("index", 17).add_field("scale", 2.0);
  r.diagnostics.push_back(d);
  EXPECT_EQ(tdiag::to_json(r), R"({
  "schema": "tensordiag.report/v1",
  "metadata": {
    "tool": "tensordiag",
    "version": "0.1.0",
    "time": "2026-12-02T13:14:15Z",
    "host": "h",
    "pid": 7
  },
  "diagnostics": [
    {
      "severity": "error",
      "code": "TDIAG-X-001",
      "title": "t",
      "message": "m",
      "location": {
        "file": "a.cpp",
        "line": 3
      },
      "fields": [
        {
          "name": "index",
          "value": 17
        },
        {
          "name": "scale",
          "value": 2.0
        }
      ]
    }
  ]
}
)");
}

TEST(JsonWriter, RoundTripsByteForByte) {
  const std::string first = tdiag::to_json(sample_report());
  const std::string second = tdiag::to_json(tdiag::parse_report_json(first, "sample"));
  EXPECT_EQ(first, second);
}

TEST(JsonWriter, EncodesNonFiniteFloatsAndAddressesAsDocumented) {
  const std::string json = tdiag::to_json(sample_report());
  EXPECT_NE(json.find(R"("value": {"float": "nan"})"), std::string::npos);
  EXPECT_NE(json.find(R"("value": {"float": "-inf"})"), std::string::npos);
  EXPECT_NE(json.find(R"("address": "0x7f3a12c4e1b0")"), std::string::npos);
  EXPECT_NE(json.find(R"("value": 1.0)"), std::string::npos) << "floats keep their point";
  EXPECT_NE(json.find(R"("value": 4113)"), std::string::npos);
}

TEST(JsonWriter, ReplacesInvalidUtf8SoTheOutputParses) {
  tdiag::report r;
  tdiag::diagnostic d;
  d.message = "bad \xFF byte";
  r.diagnostics.push_back(d);
  const auto back = tdiag::parse_report_json(tdiag::to_json(r), "utf8");
  EXPECT_EQ(back.diagnostics.at(0).message, "bad \xEF\xBF\xBD byte");
}

TEST(JsonWriter, SampleReportFileIsInCanonicalForm) {
  const std::string path = TDIAG_SOURCE_DIR "/samples/reports/example.json";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(tdiag::to_json(tdiag::parse_report_json(text, path)), text);
}
