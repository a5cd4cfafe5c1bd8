// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

constexpr const char* good =
    R"x({"id":"s1-00001","op":"aten.mm.default","mesh":[2,4],"args":[{"tensor":{"shape":[12,1],"dtype":"float32","placements":["S(0)","P(sum)"]}},{"tensor":{"shape":[1,16],"dtype":"float32","placements":["P(max)","S(1)"]}}],"expect":{"ok":true,"outputs":[{"shape":[12,16],"placements":["S(0)","P(sum)"]}],"comms":{"all_gather":1,"all_reduce":1}}})x";

TEST(ParseCases, ReadsTheCorpusFormat) {
  const auto c = parse_case_line(good);
  EXPECT_EQ(c.id, "s1-00001");
  EXPECT_EQ(c.call.op, "aten.mm.default");
  EXPECT_EQ(c.call.mesh.shape(), (std::vector<std::int64_t>{2, 4}));
  ASSERT_EQ(c.call.args.size(), 2u);
  EXPECT_EQ(to_string(c.call.args[1].tensor), "f32[1, 16] [P(max), S(1)]");
  ASSERT_TRUE(c.expect.has_value());
  EXPECT_EQ(c.expect->comms[collective::all_reduce], 1);
}

TEST(ParseCases, ReportsMalformedLinesWithNumbersAndKeepsGoing) {
  const std::string text =
      std::string(good) + "\n" + R"x({"id":"x","op":"aten.mm.default")x" + "\n\n" +
      R"x({"id":"y","op":"a","mesh":[2],"args":[{"tensor":{"shape":[4],"placements":["Q"]}}]})x" +
      "\n" + good + "\n";
  const auto file = parse_cases(text);
  EXPECT_EQ(file.cases.size(), 2u);
  ASSERT_EQ(file.errors.size(), 2u);
  EXPECT_EQ(file.errors[0].line, 2u);
  EXPECT_EQ(file.errors[1].line, 4u);
  EXPECT_EQ(file.errors[1].id, "y");
  EXPECT_NE(file.errors[1].message.find("'Q' is not a placement"), std::string::npos);
  EXPECT_EQ(file.cases[1].line, 5u);
  EXPECT_NE(to_jsonl(file.errors[0]).find("\"line\":2"), std::string::npos);
}

TEST(ParseCases, RejectsOutOfRangeInput) {
  EXPECT_ANY_THROW((void)parse_case_line(R"x({"id":"z","op":"a","mesh":[0],"args":[]})x"));
  EXPECT_ANY_THROW((void)parse_case_line(
      R"x({"id":"z","op":"a","mesh":[2],"args":[{"tensor":{"shape":[1099511627776,1099511627776],"placements":["R"]}}]})x"));
  EXPECT_ANY_THROW((void)parse_case_line("not json"));
}

// Two objects on one line: the second was silently dropped; now the line is refused.
TEST(ParseCases, RefusesTwoObjectsOnOneLine) {
  const auto file =
      parse_cases(std::string(good) + " " + std::string(good) + "\n" + std::string(good) + "\n");
  ASSERT_EQ(file.cases.size(), 1u);
  EXPECT_EQ(file.cases[0].line, 2u);
  ASSERT_EQ(file.errors.size(), 1u);
  EXPECT_EQ(file.errors[0].line, 1u);
  EXPECT_NE(file.errors[0].message.find("more than one JSON value on the line"), std::string::npos)
      << file.errors[0].message;
  EXPECT_ANY_THROW((void)parse_case_line(std::string(good) + std::string(good)));
}

TEST(AnswerCase, WritesTheAnswerFormat) {
  const auto a = answer_case(parse_case_line(good));
  EXPECT_EQ(
      to_jsonl(a),
      R"x({"id":"s1-00001","ok":true,"outputs":[{"shape":[12,16],"placements":["S(0)","P(sum)"]}],"comms":{"all_gather":1,"all_reduce":1}})x");
  const auto bad = answer_case(parse_case_line(
      R"x({"id":"e","op":"aten.relu_.default","mesh":[4],"args":[{"tensor":{"shape":[4],"dtype":"float32","placements":["P(sum)"]}}]})x"));
  EXPECT_FALSE(bad.ok);
  const auto line = to_jsonl(bad);
  EXPECT_NE(line.find(R"x("ok":false,"error":"aten.relu_ arg 0 (self))x"), std::string::npos)
      << line;
  EXPECT_NE(line.find(R"x("code":"TDIAG-DT-003")x"), std::string::npos) << line;
}

// A recording's line: every extra field of docs/dtensor.md, a tensor list and the kwarg kinds.
constexpr const char* recorded =
    R"x({"id":"r000017","op":"aten.cat.default","mesh":[2,4],"mesh_dim_names":["dp","tp"],"args":[{"tensors":[{"shape":[4,8],"dtype":"float32","placements":["R","S(1)"]},{"shape":[4,8],"dtype":"float32","placements":["R","R"]}]},{"int":0},{"none":null},{"str":"tanh"}],"expect":{"ok":true,"outputs":[{"shape":[8,8],"placements":["R","R"]}],"comms":{"all_gather":1}},"source":{"file":"train.py","line":42,"function":"forward","code":"h = torch.cat([a, b])"},"redistributions":[{"arg":0,"item":0,"mesh_dim":1,"from":"S(1)","to":"R","collective":"all_gather","bytes_per_rank":128}],"calls":40})x";

TEST(ParseCases, ReadsARecording) {
  const auto c = parse_case_line(recorded);
  EXPECT_EQ(c.call.mesh.names(), (std::vector<std::string>{"dp", "tp"}));
  EXPECT_EQ(c.call.mesh.dim_label(1), "mesh dim 1 (tp)");
  ASSERT_EQ(c.call.args.size(), 4u);
  EXPECT_EQ(c.call.args[2].kind, arg_kind::none);
  EXPECT_EQ(c.call.args[3].kind, arg_kind::string_value);
  EXPECT_EQ(c.call.args[3].text, "tanh");
  EXPECT_EQ(to_string(c.call.args[3]), "'tanh'");
  ASSERT_TRUE(c.source.has_value());
  EXPECT_EQ(*c.source, (source_frame{"train.py", 42, "forward", "h = torch.cat([a, b])"}));
  ASSERT_EQ(c.redistributions.size(), 1u);
  const auto& r = c.redistributions[0];
  EXPECT_EQ(r.arg, 0u);
  EXPECT_EQ(r.item, std::optional<std::size_t>(0));
  EXPECT_EQ(r.mesh_dim, 1u);
  EXPECT_EQ(r.from, placement::shard(1));
  EXPECT_EQ(r.to, placement::replicate());
  EXPECT_EQ(r.comm, collective::all_gather);
  EXPECT_EQ(r.bytes_per_rank, 128);
  EXPECT_EQ(c.calls, 40);
  // Optional fields written as null (Python's None) are absent.
  const auto nulls = parse_case_line(
      R"x({"id":"n","op":"aten.relu.default","mesh":[4],"mesh_dim_names":null,"args":[{"tensor":{"shape":[8],"placements":["S(0)"]}}],"source":{"file":"a.py","line":null,"function":null,"code":null},"redistributions":[{"arg":0,"item":null,"mesh_dim":0,"from":"S(0)","to":"R","collective":"all_gather","bytes_per_rank":32}],"calls":null})x");
  EXPECT_TRUE(nulls.call.mesh.names().empty());
  EXPECT_EQ(*nulls.source, (source_frame{"a.py", 0, "", ""}));
  EXPECT_FALSE(nulls.redistributions.at(0).item.has_value());
  EXPECT_EQ(nulls.calls, 1);
  EXPECT_FALSE(parse_case_line(R"x({"id":"n","op":"a","mesh":[4],"args":[],"source":null})x")
                   .source.has_value());
  EXPECT_EQ(parse_cases(R"x({"id":"n","op":"a","mesh":[4],"args":[],"source":{"file":null}})x")
                .errors.at(0)
                .message,
            "source.file must be a string");
  // The golden corpus's lines keep their defaults.
  const auto g = parse_case_line(good);
  EXPECT_FALSE(g.source.has_value());
  EXPECT_TRUE(g.redistributions.empty());
  EXPECT_EQ(g.calls, 1);
}

// Replaces the first `from` of the recorded line with `to`.
std::string with(std::string_view from, std::string_view to) {
  std::string line(recorded);
  const auto at = line.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return line.replace(at, from.size(), to);
}

TEST(ParseCases, NamesTheWrongFieldOfARecording) {
  const std::pair<std::string, std::string> bad[] = {
      {with(R"("line":42)", R"("line":"42")"), "source.line must be an integer"},
      {with(R"("file":"train.py",)", ""), "source has no 'file'"},
      {with(R"("bytes_per_rank":128)", R"("bytes_per_rank":1.5)"),
       "redistributions[0].bytes_per_rank must be an integer"},
      {with(R"j("from":"S(1)")j", R"j("from":"S")j"),
       "redistributions[0].from: 'S' is not a placement"},
      {with(R"("to":"R",)", ""), "redistributions[0] has no 'to'"},
      {with(R"("collective":"all_gather")", R"("collective":"broadcast")"),
       "redistributions[0].collective: unknown collective 'broadcast'"},
      {with(R"("arg":0,"item":0)", R"("arg":5,"item":0)"),
       "redistributions[0].arg is 5 but the op has 4 args"},
      {with(R"("arg":0,"item":0)", R"("arg":1)"),
       "redistributions[0].arg: args[1] is not a tensor"},
      {with(R"("arg":0,"item":0)", R"("arg":0,"item":2)"),
       "redistributions[0].item must index args[0].tensors (2 tensors)"},
      {with(R"("mesh_dim":1)", R"("mesh_dim":2)"),
       "redistributions[0].mesh_dim is 2 but the mesh has 2 dims"},
      {with(R"(["dp","tp"])", R"(["dp"])"), "mesh_dim_names has 1 names for a 2-D mesh"},
      {with(R"(["dp","tp"])", R"("dp")"), "mesh_dim_names must be a list of strings"},
      {with(R"("calls":40)", R"("calls":0)"), "calls must be at least 1, not 0"},
      {with(R"("calls":40)", R"("calls":true)"), "calls must be an integer"},
      {with(R"({"str":"tanh"})", R"({"str":3})"), "args[3].str must be a string"},
      {with(R"("shape":[4,8],"dtype":"float32","placements":["R","R"])",
            R"("shape":[4,"8"],"dtype":"float32","placements":["R","R"])"),
       "args[0].tensors[1].shape[1] must be an integer"},
      {with(R"("comms":{"all_gather":1})", R"("comms":{"all_gather":"1"})"),
       "expect.comms.all_gather must be an integer"},
  };
  for (const auto& [line, message] : bad) {
    const auto file = parse_cases(line);
    ASSERT_EQ(file.errors.size(), 1u) << line;
    EXPECT_EQ(file.errors[0].id, "r000017");
    EXPECT_NE(file.errors[0].message.find(message), std::string::npos)
        << file.errors[0].message << "\n  expected: " << message;
  }
}

TEST(ReadCaseFile, ReadsTheRecordingFixture) {
  const auto file = read_case_file_strict(test::mlp_recording());
  ASSERT_EQ(file.cases.size(), 15u);
  EXPECT_TRUE(file.errors.empty());
  const auto& first = file.cases[0];
  EXPECT_EQ(first.call.op, "aten.mm.default");
  EXPECT_EQ(first.calls, 40);
  EXPECT_EQ(first.source->line, 41);
  EXPECT_EQ(first.redistributions.at(0).bytes_per_rank, 65536);
}

// The budget covers what parsing builds, not only the file: a 4 MiB one-line recording under a
// 16 MiB budget needs 8 MiB for the text and its padded copy and 20 MiB for the index.
TEST(ReadCaseFile, BudgetCoversWhatParsingBuilds) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "long_line_recording.jsonl";
  {
    std::ofstream out(path);
    out << R"({"id": ")" << std::string(std::size_t{4} << 20, 'x') << R"("})"
        << "\n";
  }
  ::setenv("TDIAG_MEMORY_LIMIT", "16M", 1);
  try {
    (void)read_case_file(path);
    ADD_FAILURE() << "expected the budget line";
  } catch (const tdiag::input_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("whose longest line is"), std::string::npos) << what;
    EXPECT_NE(what.find("TDIAG_MEMORY_LIMIT"), std::string::npos) << what;
  }
  ::unsetenv("TDIAG_MEMORY_LIMIT");
  std::filesystem::remove(path);
}

TEST(ReadCaseFile, StrictReadingNamesTheFileLineAndField) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "bad_recording.jsonl";
  {
    std::ofstream out(path);
    out << good << "\n" << with(R"("calls":40)", R"("calls":"x")") << "\n";
  }
  EXPECT_EQ(read_case_file(path).errors.size(), 1u);
  try {
    (void)read_case_file_strict(path);
    FAIL() << "expected an input_error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(std::string(e.what()),
              path.string() + ":2: malformed case 'r000017': calls must be an integer");
    EXPECT_EQ(e.report().diagnostics.front().code, "TDIAG-DT-020");
  }
  std::filesystem::remove(path);
}

} // namespace
