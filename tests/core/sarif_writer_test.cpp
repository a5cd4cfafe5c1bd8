// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
// (The official SARIF 2.1.0 schema validation runs in tests/cli, with python3-jsonschema.)
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/core/report_io.hpp>

#include <gtest/gtest.h>

#include "sample_report.hpp"

using tdiag::detail::json_value;
using tdiag::test::sample_report;

namespace {
json_value parse(const std::string& text) {
  return tdiag::detail::parse_json(text, {"sarif", "T", "not JSON", ""});
}
} // namespace

TEST(SarifWriter, HasTheRequiredTopLevelShape) {
  const json_value sarif = parse(tdiag::to_sarif(sample_report()));
  EXPECT_EQ(sarif["version"], "2.1.0");
  EXPECT_NE(sarif["$schema"].string.find("sarif-schema-2.1.0.json"), std::string::npos);
  ASSERT_EQ(sarif["runs"].size(), 1u);
  const json_value& driver = sarif["runs"][0]["tool"]["driver"];
  EXPECT_EQ(driver["name"], "tensordiag");
  EXPECT_EQ(driver["version"], "0.1.0");
  ASSERT_EQ(driver["rules"].size(), 3u);
  EXPECT_EQ(driver["rules"][1]["id"], "TDIAG-DT-012");
  EXPECT_EQ(sarif["runs"][0]["properties"]["rank"], 3);
}

TEST(SarifWriter, MapsEachDiagnosticToAResult) {
  const json_value doc = parse(tdiag::to_sarif(sample_report()));
  const json_value& results = doc["runs"][0]["results"];
  ASSERT_EQ(results.size(), 3u);
  const json_value& first = results[0];
  EXPECT_EQ(first["ruleId"], "TDIAG-DSA-001");
  EXPECT_EQ(first["ruleIndex"], 0);
  EXPECT_EQ(first["level"], "error");
  EXPECT_EQ(first["message"]["text"],
            "index 4113 is out of range for 4096 rows\nHint: check the vocabulary size");
  const json_value& physical = first["locations"][0]["physicalLocation"];
  EXPECT_EQ(physical["artifactLocation"]["uri"], "kernels/gather.cu");
  EXPECT_EQ(physical["region"]["startLine"], 42);
  EXPECT_EQ(physical["region"]["startColumn"], 5);
  EXPECT_EQ(first["relatedLocations"][0]["message"]["text"], "launched here");
  const json_value& frames = first["stacks"][0]["frames"];
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0]["module"], "libtdiag.so");
  EXPECT_EQ(frames[0]["location"]["physicalLocation"]["address"]["absoluteAddress"],
            std::int64_t{0x7f3a12c4e1b0});
  EXPECT_EQ(frames[1]["location"]["logicalLocations"][0]["fullyQualifiedName"], "main");
  const json_value& block = first["properties"]["fields"]["block"];
  ASSERT_EQ(block.size(), 3u);
  EXPECT_EQ(block[0], 3);
  EXPECT_EQ(block[1], 0);
  EXPECT_EQ(block[2], 0);
  EXPECT_EQ(results[1]["level"], "warning");
  EXPECT_EQ(results[2]["level"], "note");
  EXPECT_EQ(results[2].find("locations"), nullptr);
  const json_value& nan = results[2]["properties"]["fields"]["nan"];
  EXPECT_EQ(nan.names, std::vector<std::string>{"float"});
  EXPECT_EQ(nan["float"], "nan");
}

TEST(SarifWriter, EncodesUrisAndDeduplicatesPropertyNames) {
  tdiag::report r;
  tdiag::diagnostic d;
  d.code = "X";
  d.location.file = "my dir/a#b%.cu";
  d.add_field("x", 1).add_field("x", 2);
  r.diagnostics.push_back(d);
  const json_value doc = parse(tdiag::to_sarif(r));
  const json_value& result = doc["runs"][0]["results"][0];
  EXPECT_EQ(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "my%20dir/a%23b%25.cu");
  EXPECT_EQ(result["properties"]["fields"]["x"], 1);
  EXPECT_EQ(result["properties"]["fields"]["x#2"], 2);
  EXPECT_EQ(result["locations"][0]["physicalLocation"].find("region"), nullptr);
}
