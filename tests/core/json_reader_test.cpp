// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sample_report.hpp"

using tdiag::test::sample_report;

namespace {
// The input_error's one-line message, or "" when parsing succeeded.
std::string error_of(std::string_view json, std::string* code = nullptr) {
  try {
    (void)tdiag::parse_report_json(json, "in.json");
  } catch (const tdiag::input_error& e) {
    if (code != nullptr)
      *code = e.report().diagnostics.at(0).code;
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << "one line: " << what;
    return what;
  }
  return {};
}

std::string minimal(std::string_view diagnostics) {
  return std::string(
             R"({"schema": "tensordiag.report/v1", "metadata": {"tool": "t", "version": "1",)"
             R"( "time": "", "host": "", "pid": 1}, "diagnostics": [)") +
         std::string(diagnostics) + "]}";
}
} // namespace

TEST(JsonReader, ReadsBackEveryMember) {
  const auto original = sample_report();
  const auto back = tdiag::parse_report_json(tdiag::to_json(original), "sample");
  ASSERT_EQ(back.diagnostics.size(), 3u);
  EXPECT_EQ(back.metadata, original.metadata);
  EXPECT_EQ(back.diagnostics[0], original.diagnostics[0]);
  EXPECT_EQ(back.diagnostics[1], original.diagnostics[1]);
  const auto& nan = back.diagnostics[2].fields.at(0).value.value;
  ASSERT_TRUE(std::holds_alternative<double>(nan));
  EXPECT_TRUE(std::isnan(std::get<double>(nan)));
}

TEST(JsonReader, KeepsIntegersAndFloatsApart) {
  const auto r = tdiag::parse_report_json(
      minimal(R"({"severity": "note", "code": "", "title": "", "message": "",
                  "fields": [{"name": "i", "value": 2}, {"name": "f", "value": 2.0},
                             {"name": "e", "value": 1e3}, {"name": "big", "value": 9223372036854775807}]})"),
      "x");
  const auto& f = r.diagnostics.at(0).fields;
  EXPECT_TRUE(std::holds_alternative<std::int64_t>(f.at(0).value.value));
  EXPECT_TRUE(std::holds_alternative<double>(f.at(1).value.value));
  EXPECT_TRUE(std::holds_alternative<double>(f.at(2).value.value));
  EXPECT_EQ(std::get<std::int64_t>(f.at(3).value.value), INT64_MAX);
}

TEST(JsonReader, EmptyAndWhiteSpaceInputsSayWhatWasExpected) {
  std::string code;
  EXPECT_EQ(error_of("", &code), "in.json: line 1, column 1 (byte 0): empty input, expected a "
                                 "tensordiag.report/v1 JSON document");
  EXPECT_EQ(code, "TDIAG-CORE-001");
  EXPECT_NE(error_of("  \n ").find("line 2, column 2 (byte 4)"), std::string::npos);
}

TEST(JsonReader, SyntaxErrorsNameLineColumnAndByte) {
  const std::string text = tdiag::to_json(sample_report());
  const std::string truncated = text.substr(0, 120);
  const std::string what = error_of(truncated);
  EXPECT_EQ(what.rfind("in.json: line ", 0), 0u) << what;
  EXPECT_NE(what.find("(byte 120)"), std::string::npos) << what;
  EXPECT_NE(error_of("{\"schema\": tru}").find("line 1, column 15 (byte 14)"), std::string::npos);
}

TEST(JsonReader, BinaryGarbageGivesOnePrintableLine) {
  const std::string garbage("\x7f"
                            "ELF\x02\x01\x01\x00\x1b[31m",
                            12);
  const std::string what = error_of(garbage);
  EXPECT_NE(what.find("byte 0"), std::string::npos) << what;
  EXPECT_EQ(what.find('\x1b'), std::string::npos) << "control bytes are escaped";
}

TEST(JsonReader, WrongSchemaNamesTheExpectedVersion) {
  std::string code;
  const std::string what = error_of(R"({
  "schema": "tensordiag.report/v2", "metadata": {}, "diagnostics": []})",
                                    &code);
  EXPECT_EQ(code, "TDIAG-CORE-002");
  EXPECT_EQ(what, "in.json: line 2, column 13 (byte 14): /schema: unsupported schema "
                  "\"tensordiag.report/v2\", expected \"tensordiag.report/v1\"");
  EXPECT_NE(error_of(R"({"diagnostics": []})").find("missing member \"schema\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema": 1})").find("unsupported schema 1"), std::string::npos);
}

TEST(JsonReader, StructuralErrorsNameTheJsonPointer) {
  EXPECT_NE(error_of(minimal(R"({"severity": "fatal", "code": "", "title": "", "message": ""})"))
                .find("/diagnostics/0/severity: expected \"error\", \"warning\" or \"note\", got "
                      "\"fatal\""),
            std::string::npos);
  EXPECT_NE(
      error_of(
          minimal(R"({"severity": "note", "code": "", "title": "", "message": "", "colour": 1})"))
          .find("/diagnostics/0/colour: unknown member \"colour\""),
      std::string::npos);
  EXPECT_NE(error_of(minimal(R"({"severity": "note", "code": "", "title": "", "message": "",
                                 "location": {"line": -1}})"))
                .find("/diagnostics/0/location/line: expected an integer from 0 to 4294967295"),
            std::string::npos);
  EXPECT_NE(error_of(minimal(R"({"severity": "note", "code": "", "title": "", "message": "",
                                 "fields": [{"name": "x", "value": 18446744073709551615}]})"))
                .find("out of the 64-bit signed range"),
            std::string::npos);
  EXPECT_NE(error_of(minimal(R"({"severity": "note", "code": "", "title": "", "message": "",
                                 "fields": [{"name": "x", "value": null}]})"))
                .find("/diagnostics/0/fields/0/value: expected"),
            std::string::npos);
  EXPECT_NE(error_of(minimal(R"({"severity": "note", "code": "", "title": "", "message": "",
                                 "stack": [{"address": "0xZZ"}]})"))
                .find("/diagnostics/0/stack/0/address: expected a hexadecimal address"),
            std::string::npos);
}

TEST(JsonReader, RejectsDeeplyNestedFieldValues) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  const std::string what = error_of(minimal(
      R"({"severity": "note", "code": "", "title": "", "message": "", "fields": [{"name": "x", "value": )" +
      deep + "}]}"));
  EXPECT_NE(what.find("nest deeper than 32 levels"), std::string::npos) << what;
}

TEST(JsonReader, NumberOverflowIsAnInputErrorAtTheNumber) {
  // Found by the fuzzer: nlohmann reports this as out_of_range, not as a parse_error.
  const std::string what = error_of("{\"schema\": 1.5e800}");
  EXPECT_EQ(what, "in.json: line 1, column 12 (byte 11): number overflow parsing '1.5e800'");
}
