// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// build_comm_report on the hand-written MLP recording (tests/data/dtensor/mlp_recording.jsonl:
// one bad input placement, an all_gather on every one of 40 steps) and on small recordings that
// disagree with our propagation.
#include <tensordiag/dtensor_checks/comm_report.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

comm_report mlp() {
  return build_comm_report(read_case_file_strict(test::mlp_recording()), "mlp_recording.jsonl");
}

TEST(CommReport, RanksTheSourceLinesByBytes) {
  const auto r = mlp();
  EXPECT_EQ(r.records, 15u);
  EXPECT_EQ(r.calls, 600);
  ASSERT_EQ(r.lines.size(), 2u);
  const auto& first = r.lines[0];
  EXPECT_EQ(first.source.file, "samples/dtensor_mlp/train.py");
  EXPECT_EQ(first.source.line, 41);
  EXPECT_EQ(first.source.code, "h = x @ self.w1");
  EXPECT_EQ(first.bytes, 65536 * 40); // x's local [32, 512] f32 after the gather, 40 steps
  EXPECT_EQ(first.count, 40);
  EXPECT_EQ(first.comms[collective::all_gather], 40);
  EXPECT_EQ(first.comms.total(), 40);
  const auto& second = r.lines[1];
  EXPECT_EQ(second.source.line, 52);
  EXPECT_EQ(second.bytes, 32768 * 40);
  EXPECT_EQ(second.comms[collective::all_reduce], 40);
  EXPECT_EQ(r.bytes, first.bytes + second.bytes);
  EXPECT_EQ(r.count, 80);
}

TEST(CommReport, NamesTheArgumentAndProposesTheFix) {
  const auto r = mlp();
  ASSERT_EQ(r.lines[0].causes.size(), 1u);
  const auto& c = r.lines[0].causes[0];
  EXPECT_EQ(c.op, "aten.mm.default");
  EXPECT_EQ(c.arg, 0u);
  EXPECT_EQ(c.arg_name, "self");
  EXPECT_EQ(to_string(c.arrived), "[S(0), S(1)]");
  ASSERT_EQ(c.steps.size(), 1u);
  EXPECT_EQ(c.steps[0].mesh_dim, 1u);
  EXPECT_EQ(c.bytes_per_call, 65536);
  EXPECT_EQ(c.calls, 40);
  EXPECT_EQ(c.ids, (std::vector<std::string>{"r000001"}));
  ASSERT_TRUE(c.fix.has_value());
  EXPECT_EQ(to_string(c.fix->placements), "[S(0), R]");
  EXPECT_EQ(to_string(c.fix->output), "[S(0), S(1)]");
  EXPECT_TRUE(c.fix->same_output);
  EXPECT_EQ(c.suggestion,
            "produce `self` (arg 0) as R on mesh dim 1 (tp) (it arrives as S(1)), so "
            "aten.mm.default needs no all_gather: saves 65536 bytes per rank per call × 40 calls; "
            "this is the placement PyTorch redistributes to, so whatever produces it would "
            "communicate instead");
  EXPECT_TRUE(c.fix->moves_communication);
  EXPECT_FALSE(c.fix->other_arg.has_value());
  const auto& loss = r.lines[1].causes.at(0);
  EXPECT_EQ(loss.arg, 1u);
  EXPECT_EQ(loss.arg_name, "other");
  EXPECT_EQ(to_string(loss.fix.value().placements), "[S(0), R]");
}

TEST(CommReport, AgreesWithTheRecordingAndCountsWhatItDoesNotCover) {
  const auto r = mlp();
  EXPECT_EQ(r.checked, 14u);
  EXPECT_EQ(r.agree, 14u);
  EXPECT_TRUE(r.findings.empty());
  EXPECT_EQ(r.not_covered, (std::map<std::string, std::size_t>{{"aten.addcmul_.default", 1}}));
}

TEST(CommReport, UsesTheGivenByteFormat) {
  const auto r = build_comm_report(read_case_file(test::mlp_recording()), "x",
                                   [](std::int64_t b) { return std::to_string(b / 1024) + "K"; });
  EXPECT_NE(r.lines[0].causes[0].suggestion.find("saves 64K per rank per call × 40 calls"),
            std::string::npos);
}

// One line per record: `{"id":...,"op":...,"mesh":[4],"args":ARGS,"expect":EXPECT,...}`.
std::string record(std::string_view id, std::string_view op, std::string_view args,
                   std::string_view expect, std::string_view extra = "") {
  return fmt::format(R"x({{"id":"{}","op":"{}","mesh":[4],"args":{},"expect":{},)x"
                     R"x("source":{{"file":"m.py","line":{},"function":"f"}}{}}})x",
                     id, op, args, expect, id.back() - '0', extra) +
         "\n";
}

constexpr std::string_view mm_args =
    R"x([{"tensor":{"shape":[8,8],"placements":["S(0)"]}},{"tensor":{"shape":[8,8],"placements":["S(0)"]}}])x";
constexpr std::string_view relu_args = R"x([{"tensor":{"shape":[8],"placements":["P(sum)"]}}])x";

TEST(CommReport, ListsDisagreementsWithPyTorchAsFindingsAtTheUsersLine) {
  // Ours for mm(S(0), S(0)) on [4]: mat2 all-gathered, output [8, 8] S(0).
  const std::string text =
      record(
          "a1", "aten.mm.default", mm_args,
          R"x({"ok":true,"outputs":[{"shape":[8,8],"placements":["S(0)"]}],"comms":{"all_gather":1}})x") +
      record(
          "b2", "aten.mm.default", mm_args,
          R"x({"ok":true,"outputs":[{"shape":[8,8],"placements":["R"]}],"comms":{"all_gather":1}})x") +
      record(
          "c3", "aten.mm.default", mm_args,
          R"x({"ok":true,"outputs":[{"shape":[8,8],"placements":["S(0)"]}],"comms":{"all_reduce":1}})x") +
      record("d4", "aten.mm.default", mm_args, R"x({"ok":false,"error":"no"})x") +
      record("e5", "aten.relu_.default", relu_args,
             R"x({"ok":true,"outputs":[{"shape":[8],"placements":["P(sum)"]}],"comms":{}})x") +
      record("f6", "aten.mm.default", mm_args, R"x({"ok":false,"class":"limitation"})x") +
      record("g7", "aten.foo.default", relu_args, R"x({"ok":true,"outputs":[],"comms":{}})x");
  const auto r = build_comm_report(parse_cases(text), "rec.jsonl");
  EXPECT_EQ(r.records, 7u);
  EXPECT_EQ(r.checked, 6u);
  EXPECT_EQ(r.agree, 2u); // a1, and f6 (a limitation may go either way)
  EXPECT_EQ(r.not_covered.at("aten.foo.default"), 1u);
  ASSERT_EQ(r.findings.size(), 4u);
  const auto& outputs = r.findings[0];
  EXPECT_EQ(outputs.code, "TDIAG-DT-402");
  EXPECT_EQ(outputs.level, tdiag::severity::warning);
  EXPECT_EQ(outputs.location.file, "m.py");
  EXPECT_EQ(outputs.location.line, 2u);
  EXPECT_EQ(outputs.message,
            "aten.mm.default: PyTorch produced [8, 8] [R], tensordiag's propagation [8, 8] [S(0)]");
  ASSERT_NE(outputs.find_field("record"), nullptr);
  EXPECT_EQ(std::get<std::string>(outputs.find_field("record")->value), "rec.jsonl:2");
  EXPECT_EQ(r.findings[1].code, "TDIAG-DT-403");
  EXPECT_EQ(r.findings[1].message, "aten.mm.default: PyTorch ran {\"all_reduce\":1}, "
                                   "tensordiag's plan runs {\"all_gather\":1}");
  EXPECT_EQ(r.findings[2].code, "TDIAG-DT-404");
  EXPECT_NE(r.findings[2].message.find("PyTorch rejected it (error: no), but tensordiag accepts"),
            std::string::npos);
  EXPECT_EQ(r.findings[3].code, "TDIAG-DT-404");
  EXPECT_NE(r.findings[3].message.find("but tensordiag rejects it (TDIAG-DT-003)"),
            std::string::npos);
}

TEST(CommReport, SaysWhenNoFixIsKnown) {
  // Both operands are P(max) and reduce-scattered: a placement of one alone cannot spare the
  // other's collective.
  constexpr std::string_view pmax =
      R"x([{"tensor":{"shape":[8,8],"placements":["P(max)"]}},{"tensor":{"shape":[8,8],"placements":["P(max)"]}}])x";
  constexpr std::string_view moved =
      R"x(,"redistributions":[{"arg":0,"mesh_dim":0,"from":"P(max)","to":"S(1)","collective":"reduce_scatter","bytes_per_rank":256},)x"
      R"x({"arg":1,"mesh_dim":0,"from":"P(max)","to":"S(0)","collective":"reduce_scatter","bytes_per_rank":256}],"calls":3)x";
  constexpr std::string_view unknown =
      R"x(,"redistributions":[{"arg":0,"mesh_dim":0,"from":"P(sum)","to":"R","collective":"all_reduce","bytes_per_rank":32}])x";
  const auto r = build_comm_report(
      parse_cases(
          record(
              "a1", "aten.mm.default", pmax,
              R"x({"ok":true,"outputs":[{"shape":[8,8],"placements":["P(sum)"]}],"comms":{"reduce_scatter":2}})x",
              moved) +
          record("b2", "aten.foo.default", relu_args, R"x({"ok":true,"comms":{}})x", unknown)),
      "rec.jsonl");
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.lines.size(), 2u);
  ASSERT_EQ(r.lines[0].causes.size(), 2u);
  EXPECT_EQ(r.lines[0].bytes, 2 * 256 * 3);
  EXPECT_EQ(r.lines[0].count, 6);
  const auto& self = r.lines[0].causes[0];
  EXPECT_FALSE(self.fix.has_value());
  EXPECT_EQ(self.suggestion,
            "no fix known: under every placement of `self` (arg 0) that the strategies of "
            "aten.mm.default allow, with the other arguments as they are, the op still "
            "communicates or changes its output");
  EXPECT_EQ(r.lines[1].causes.at(0).suggestion,
            "no fix known: tensordiag has no sharding rule for aten.foo.default");
}

TEST(CommReport, SaturatesHugeRecordedCounts) {
  constexpr std::string_view huge =
      R"x(,"redistributions":[{"arg":0,"mesh_dim":0,"from":"S(0)","to":"R","collective":"all_gather","bytes_per_rank":9223372036854775807}],"calls":9223372036854775807)x";
  const auto line =
      record("a1", "aten.foo.default", relu_args, R"x({"ok":true,"comms":{}})x", huge);
  const auto r = build_comm_report(parse_cases(line + line), "rec.jsonl");
  constexpr auto max = std::numeric_limits<std::int64_t>::max();
  EXPECT_EQ(r.calls, max);
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_EQ(r.lines[0].bytes, max);
  EXPECT_EQ(r.lines[0].count, max);
  EXPECT_EQ(r.lines[0].comms[collective::all_gather], max);
  EXPECT_EQ(r.bytes, max);
}

TEST(CommReport, ProposesTheOtherArgumentWhenTheRedistributedOneWouldOnlyMoveIt) {
  // h [S(0), S(1)] @ w2 [R, S(1)] on [2, 4] (samples/dtensor_mlp's bad w2): PyTorch gathers h on
  // tp. Gathering h anywhere else costs the same; w2 row-sharded (Megatron) needs no gather, and
  // its pending sum reaches the recorded [S(0), S(1)] by a reduce_scatter of a quarter the bytes.
  const std::string line =
      R"x({"id":"m2","op":"aten.mm.default","mesh":[2,4],"mesh_dim_names":["dp","tp"],)x"
      R"x("args":[{"tensor":{"shape":[64,1024],"dtype":"float32","placements":["S(0)","S(1)"]}},)x"
      R"x({"tensor":{"shape":[1024,256],"dtype":"float32","placements":["R","S(1)"]}}],)x"
      R"x("expect":{"ok":true,"outputs":[{"shape":[64,256],"placements":["S(0)","S(1)"]}],"comms":{"all_gather":1}},)x"
      R"x("source":{"file":"train.py","line":38,"function":"forward","code":"return h @ self.w2"},)x"
      R"x("redistributions":[{"arg":0,"mesh_dim":1,"from":"S(1)","to":"R","collective":"all_gather","bytes_per_rank":131072}],"calls":4})x"
      "\n";
  const auto r = build_comm_report(parse_cases(line), "rec.jsonl");
  ASSERT_EQ(r.lines.size(), 1u);
  const auto& c = r.lines[0].causes.at(0);
  ASSERT_TRUE(c.fix.has_value());
  EXPECT_EQ(c.fix->other_arg, std::optional<std::size_t>(1));
  EXPECT_EQ(to_string(c.fix->placements), "[R, S(0)]");
  EXPECT_EQ(to_string(c.fix->output), "[S(0), P(sum)]");
  EXPECT_EQ(c.fix->output_comm, collective::reduce_scatter);
  EXPECT_EQ(c.fix->output_bytes, 32 * 256 * 4); // the [32, 256] f32 pending sum
  EXPECT_EQ(c.suggestion,
            "place `mat2` (arg 1) as S(0) on mesh dim 1 (tp) (it is [R, S(1)]), so "
            "aten.mm.default needs no redistribution of `self` (arg 0); its output becomes "
            "[S(0), P(sum)], and bringing it to the recorded [S(0), S(1)] takes a reduce_scatter "
            "of 32768 bytes per rank instead of 131072 bytes per call × 4 calls");
}

TEST(CommReport, NamesTheListItemAndGroupsRecordsWithoutASource) {
  // cat([S(1), R], dim=1) on [4]: the first list item is all-gathered.
  const std::string line =
      R"x({"id":"c1","op":"aten.cat.default","mesh":[4],"args":[{"tensors":[{"shape":[4,8],"placements":["S(1)"]},{"shape":[4,8],"placements":["R"]}]},{"int":1}],)x"
      R"x("expect":{"ok":true,"outputs":[{"shape":[4,16],"placements":["R"]}],"comms":{"all_gather":1}},)x"
      R"x("redistributions":[{"arg":0,"item":0,"mesh_dim":0,"from":"S(1)","to":"R","collective":"all_gather","bytes_per_rank":128}],"calls":2})x"
      "\n";
  const auto r = build_comm_report(parse_cases(line + line), "rec.jsonl");
  EXPECT_TRUE(r.findings.empty());
  ASSERT_EQ(r.lines.size(), 1u);
  EXPECT_TRUE(r.lines[0].source.file.empty());
  EXPECT_EQ(r.lines[0].bytes, 128 * 4);
  ASSERT_EQ(r.lines[0].causes.size(), 1u);
  const auto& c = r.lines[0].causes[0];
  EXPECT_EQ(c.item, std::optional<std::size_t>(0));
  EXPECT_EQ(c.arg_name, "tensors");
  EXPECT_EQ(c.ids, (std::vector<std::string>{"c1", "c1"}));
  EXPECT_EQ(c.calls, 4);
  ASSERT_TRUE(c.fix.has_value());
  EXPECT_EQ(c.suggestion, "produce `tensors` (arg 0) item 0 as R on mesh dim 0 (it arrives as "
                          "S(1)), so aten.cat.default needs no all_gather: saves 128 bytes per "
                          "rank per call × 4 calls; this is the placement PyTorch redistributes "
                          "to, so whatever produces it would communicate instead");
  const auto text = to_text(r, 0);
  EXPECT_NE(text.find("1. (no source recorded)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("aten.cat.default arg 0 (tensors) item 0 [S(1)]"), std::string::npos) << text;
  const auto rep = to_report(r);
  ASSERT_EQ(rep.diagnostics.size(), 1u);
  EXPECT_EQ(rep.diagnostics[0].location.file, "rec.jsonl");
  EXPECT_EQ(rep.diagnostics[0].message, "ops recorded without a source redistribute 512 bytes "
                                        "per rank in 4 collectives (all_gather×4) before "
                                        "aten.cat.default");
}

// An mm of two recorded inputs of 2^50 elements each has an output of 2^80 elements: no byte
// count can be stated for it, so no suggestion is sized by one (it read "a reduce_scatter of
// 0 B").
TEST(CommReport, NoSuggestionSizedByAnOutputTooLargeToState) {
  const std::string line =
      R"x({"id": "r1", "op": "aten.mm.default", "mesh": [2, 4], "args": [{"tensor": )x"
      R"x({"shape": [1099511627776, 1024], "dtype": "float32", "placements": ["S(0)", )x"
      R"x("S(1)"]}}, {"tensor": {"shape": [1024, 1099511627776], "dtype": "float32", )x"
      R"x("placements": ["R", "S(1)"]}}], "redistributions": [{"arg": 0, "mesh_dim": 1, )x"
      R"x("from": "S(1)", "to": "R", "collective": "all_gather", "bytes_per_rank": 65536}], )x"
      R"x("calls": 1})x"
      "\n";
  const auto r = build_comm_report(parse_cases(line), "rec.jsonl");
  ASSERT_EQ(r.lines.size(), 1u);
  for (const auto& c : r.lines[0].causes) {
    EXPECT_EQ(c.suggestion.find(" of 0 B"), std::string::npos) << c.suggestion;
    if (c.fix) {
      EXPECT_GE(c.fix->output_bytes, 0) << c.suggestion;
    }
  }
}

} // namespace
