// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
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
  EXPECT_EQ(error_of("", &code), "in.json:1:1: empty input, expected a JSON document");
  EXPECT_EQ(code, "TDIAG-CORE-001");
  EXPECT_EQ(error_of("  \n "), "in.json:2:2: only white space, expected a JSON document");
}

TEST(JsonReader, SyntaxErrorsNameFileLineAndColumn) {
  const std::string text = tdiag::to_json(sample_report());
  // Cut inside a string: the position is the string's opening quote.
  const std::string truncated = text.substr(0, 120);
  const auto quote = truncated.rfind('"');
  const auto line = std::count(truncated.begin(), truncated.begin() + quote, '\n') + 1;
  const auto column = quote - truncated.rfind('\n', quote);
  EXPECT_EQ(error_of(truncated),
            fmt::format("in.json:{}:{}: a string is not closed", line, column));
  EXPECT_EQ(error_of("{\"schema\": tru}"),
            "in.json:1:12: invalid literal, expected true, false or null 'tru'");
  EXPECT_EQ(error_of("{\"schema\": 1,}").rfind("in.json:1:", 0), 0u);
  EXPECT_EQ(error_of("{\"a\": [1, 2"), "in.json:1:12: the input ends inside an array or object");
}

TEST(JsonReader, ErrorCarriesTheByteOffsetAsAField) {
  try {
    (void)tdiag::parse_report_json("{\n  \"schema\": tru}", "in.json");
    FAIL() << "parsed";
  } catch (const tdiag::input_error& e) {
    const auto& d = e.report().diagnostics.at(0);
    EXPECT_EQ(d.location.file, "in.json");
    EXPECT_EQ(d.location.line, 2u);
    EXPECT_EQ(d.location.column, 13u);
    ASSERT_EQ(d.fields.size(), 1u);
    EXPECT_EQ(d.fields[0].name, "byte");
    EXPECT_EQ(std::get<std::int64_t>(d.fields[0].value.value), 14);
  }
}

TEST(JsonReader, BinaryGarbageGivesOnePrintableLine) {
  const std::string garbage("\x7f"
                            "ELF\x02\x01\x01\x00\x1b[31m",
                            12);
  const std::string what = error_of(garbage);
  EXPECT_EQ(what.rfind("in.json:1:1: ", 0), 0u) << what;
  EXPECT_EQ(what.find('\x1b'), std::string::npos) << "control bytes are escaped";
  EXPECT_EQ(error_of("{\"schema\": \"\xff\"}"), "in.json:1:13: invalid UTF-8");
}

TEST(JsonReader, WrongSchemaNamesTheExpectedVersion) {
  std::string code;
  const std::string what = error_of(R"({
  "schema": "tensordiag.report/v2", "metadata": {}, "diagnostics": []})",
                                    &code);
  EXPECT_EQ(code, "TDIAG-CORE-002");
  EXPECT_EQ(what, "in.json:2:13: /schema: unsupported schema \"tensordiag.report/v2\", expected "
                  "\"tensordiag.report/v1\"");
  EXPECT_NE(error_of(R"({"diagnostics": []})").find("missing member \"schema\""),
            std::string::npos);
  EXPECT_NE(error_of(R"({"schema": 1})").find("unsupported schema 1,"), std::string::npos);
}

// Issue 18 item 2: a 140 KB report whose "schema" nests 70,000 deep crashed `report convert`.
TEST(JsonReader, RefusesDeepNestingWithOneLine) {
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  std::string code;
  EXPECT_EQ(error_of(R"({"schema": )" + deep + "}", &code),
            "in.json:1:75: arrays and objects nest deeper than 64 levels");
  EXPECT_EQ(code, "TDIAG-CORE-001");
  const std::string objects = [] {
    std::string s;
    for (int i = 0; i < 70000; ++i)
      s += R"({"a":)";
    return s + "1" + std::string(70000, '}');
  }();
  EXPECT_EQ(error_of(objects), "in.json:1:321: arrays and objects nest deeper than 64 levels");
  // Within the JSON limit, a schema that is a container is named, never echoed.
  EXPECT_EQ(error_of(R"({"schema": [[[["x"]]]]})"),
            "in.json:1:12: /schema: unsupported schema (an array), expected "
            "\"tensordiag.report/v1\"");
}

TEST(JsonReader, RefusesDuplicateMembers) {
  EXPECT_EQ(error_of(R"({"schema": "tensordiag.report/v1", "schema": "x"})"),
            "in.json:1:46: duplicate member \"schema\"");
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
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  const std::string what = error_of(minimal(
      R"({"severity": "note", "code": "", "title": "", "message": "", "fields": [{"name": "x", "value": )" +
      deep + "}]}"));
  EXPECT_NE(what.find("nest deeper than 32 levels"), std::string::npos) << what;
}

TEST(JsonReader, NumberOverflowIsAnInputErrorAtTheNumber) {
  // Found by the fuzzer (when nlohmann read reports): a double overflow is bad input.
  EXPECT_EQ(error_of("{\"schema\": 1.5e800}"),
            "in.json:1:12: invalid number, or a number out of the range of a double or a 64-bit "
            "integer '1.5e800'");
}
