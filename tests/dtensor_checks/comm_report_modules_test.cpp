// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// rank_modules and the modules table of a comm_report (comm_report_modules.cpp) on the
// hand-written recording tests/data/dtensor/modules_recording.jsonl and on small inline ones.
#include <tensordiag/dtensor_checks/comm_report.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {
using namespace tdiag::dtensor;

std::filesystem::path modules_recording() {
  return std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/dtensor/modules_recording.jsonl";
}

comm_report modules_report() {
  return build_comm_report(read_case_file_strict(modules_recording()), "modules_recording.jsonl");
}

// One standalone collective record.
std::string collective_line(const std::string& id, const std::string& module,
                            const std::string& phase, const std::string& kind, int bytes,
                            int calls = 1) {
  return R"({"id": ")" + id + R"(", "op": "c10d.x", "mesh": [2], "args": [], )" + R"("module": )" +
         module + R"(, "phase": ")" + phase + R"(", "collective": {"kind": ")" + kind +
         R"(", "bytes_per_rank": )" + std::to_string(bytes) + R"(}, "calls": )" +
         std::to_string(calls) + "}\n";
}

TEST(CommModules, RanksModulesByBytesWithForwardAndBackwardApart) {
  const auto r = modules_report();
  ASSERT_EQ(r.modules.size(), 7u);
  const auto& first = r.modules[0];
  EXPECT_EQ(first.module, "Model.blocks.0");
  EXPECT_EQ(first.phase, "backward");
  EXPECT_EQ(first.bytes, 3 * 8192);
  EXPECT_EQ(first.count, 3);
  EXPECT_EQ(first.collectives, (std::map<std::string, std::int64_t>{{"reduce_scatter", 3}}));
  EXPECT_EQ(first.ops,
            (std::map<std::string, std::int64_t>{{"c10d._reduce_scatter_base_.default", 3}}));
  EXPECT_TRUE(first.lines.empty()); // recorded without a source
  const auto& second = r.modules[1];
  EXPECT_EQ(second.module, "Model.blocks.0");
  EXPECT_EQ(second.phase, "forward");
  EXPECT_EQ(second.bytes, 3 * 4096);
  EXPECT_EQ(second.lines, (std::map<std::string, std::int64_t>{{"train.py:12", 3 * 4096}}));
}

TEST(CommModules, CountsTheIssuedCollectivesNotThePlannedRedistribution) {
  const auto r = modules_report();
  const auto& tp = r.modules[2];
  EXPECT_EQ(tp.module, "Model.blocks.1.down");
  EXPECT_EQ(tp.bytes, 2 * 1000); // the functional all_reduce's 1000 bytes, not the plan's 999
  EXPECT_EQ(tp.count, 2);
  EXPECT_EQ(tp.collectives, (std::map<std::string, std::int64_t>{{"all_reduce", 2}}));
  // The op that moved nothing (Model.head, a local chunk) is not ranked.
  for (const auto& m : r.modules)
    EXPECT_NE(m.module, "Model.head");
}

TEST(CommModules, TiesGoByModuleThenPhase) {
  const auto r = modules_report();
  // Two broadcasts (a kind the case format's collectives do not have) of 500 bytes each.
  EXPECT_EQ(r.modules[3].module, "Model.blocks.1");
  EXPECT_EQ(r.modules[4].module, "Model.blocks.2");
  EXPECT_EQ(r.modules[3].collectives, (std::map<std::string, std::int64_t>{{"broadcast", 1}}));
  const auto text = collective_line("a", R"("M")", "forward", "all_gather", 64) +
                    collective_line("b", R"("M")", "backward", "all_gather", 64) +
                    collective_line("c", R"("L")", "forward", "all_gather", 32, 2) +
                    collective_line("d", R"("L")", "forward", "all_reduce", 64);
  const auto ranked = rank_modules(parse_cases_strict(text, "ties.jsonl").cases);
  ASSERT_EQ(ranked.size(), 3u);
  // L forward: 128 bytes in 3 collectives beats 64 in 1; then M by phase, backward first.
  EXPECT_EQ(ranked[0].module, "L");
  EXPECT_EQ(ranked[0].bytes, 128);
  EXPECT_EQ(ranked[0].count, 3);
  EXPECT_EQ(ranked[0].collectives,
            (std::map<std::string, std::int64_t>{{"all_gather", 2}, {"all_reduce", 1}}));
  EXPECT_EQ(ranked[1].phase, "backward");
  EXPECT_EQ(ranked[2].phase, "forward");
}

TEST(CommModules, TopLevelCollectivesAndRecordsWithoutAModule) {
  const auto r = modules_report();
  const auto& callback = r.modules[5]; // module null: FSDP2's end-of-backward reduce-scatter
  EXPECT_EQ(callback.module, top_level_module);
  EXPECT_EQ(callback.phase, "backward");
  EXPECT_EQ(callback.bytes, 16);
  const auto& plain = r.modules[6]; // no module or phase field: its redistribution counts
  EXPECT_EQ(plain.module, "<top level>");
  EXPECT_EQ(plain.phase, "");
  EXPECT_EQ(plain.bytes, 10);
  EXPECT_EQ(plain.ops, (std::map<std::string, std::int64_t>{{"aten.add.Tensor", 1}}));
}

TEST(CommModules, ARecordingWithoutModulesHasNone) {
  const auto r = build_comm_report(read_case_file_strict(std::filesystem::path(TDIAG_SOURCE_DIR) /
                                                         "tests/data/dtensor/mlp_recording.jsonl"),
                                   "mlp_recording.jsonl");
  EXPECT_TRUE(r.modules.empty());
  EXPECT_EQ(modules_text(r), "");
  EXPECT_EQ(to_text(r).find("module phases"), std::string::npos);
}

TEST(CommModules, TheTableAndTheJsonHonourTop) {
  const auto r = modules_report();
  const auto table = modules_text(r, 2);
  EXPECT_EQ(table.substr(0, table.find('\n')),
            "7 module phases moved 39890 bytes per rank in 12 collectives");
  EXPECT_NE(table.find("  1   24576 bytes       3  backward  reduce_scatter×3"), std::string::npos)
      << table;
  EXPECT_NE(table.find("  ... 5 more module phases (--top 0 lists all)"), std::string::npos);
  EXPECT_EQ(table.find("Model.blocks.1.down"), std::string::npos);
  EXPECT_NE(modules_text(r, 0).find("Model.blocks.1.down"), std::string::npos);
  EXPECT_NE(to_text(r, 2).find("\nmodules: 7 module phases"), std::string::npos);
  const auto json = to_json(r, 1);
  const auto at = json.find("\"modules\": [");
  ASSERT_NE(at, std::string::npos) << json;
  const auto module = json.substr(at);
  for (const auto* member :
       {R"("rank": 1,)", R"("module": "Model.blocks.0",)", R"("phase": "backward",)",
        R"("bytes": 24576,)", R"("count": 3,)", R"("reduce_scatter": 3)", R"("lines": {})"})
    EXPECT_NE(module.find(member), std::string::npos) << member << "\n" << json;
  EXPECT_EQ(json.find(R"("rank": 2,)", at), std::string::npos); // --top 1: one module
  EXPECT_NE(to_json(r, 0).find(R"("module": "<top level>")"), std::string::npos);
}

TEST(CommModules, StrictFields) {
  EXPECT_THROW((void)parse_case_line(R"({"op": "x", "mesh": [2], "args": [], "module": 3})"),
               tdiag::input_error);
  EXPECT_THROW(
      (void)parse_case_line(R"({"op": "x", "mesh": [2], "args": [], "collective": {"op": "y"}})"),
      tdiag::input_error);
  EXPECT_THROW((void)parse_case_line(R"({"op": "x", "mesh": [2], "args": [],)"
                                     R"( "collectives": [{"kind": "all_gather",)"
                                     R"( "bytes_per_rank": -1}]})"),
               tdiag::input_error);
  const auto c = parse_case_line(R"({"op": "x", "mesh": [2], "args": [], "phase": "forward",)"
                                 R"( "collectives": null})");
  EXPECT_TRUE(c.has_module);
  EXPECT_TRUE(c.module.empty());
  EXPECT_TRUE(c.collectives.empty());
}

} // namespace
