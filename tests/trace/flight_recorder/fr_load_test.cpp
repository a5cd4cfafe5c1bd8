// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading Flight Recorder dumps (dump_reader.cpp): both forms, protocols, versions, ranks from
// the dump or the file name, empty dumps as evidence, and one-line errors with stable codes.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/flight_recorder.hpp>
#include <tensordiag/trace/fr_codes.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

namespace fr = tdiag::trace::fr;
const std::filesystem::path data_dir = std::filesystem::path(TDIAG_SOURCE_DIR) / "tests/data/fr";

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The code and message of the input_error `fn` throws.
template <typename Fn> std::pair<std::string, std::string> error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tdiag::input_error& e) {
    return {e.report().diagnostics.at(0).code, e.what()};
  }
  return {"(no error)", ""};
}

std::vector<fr::dump> load(const std::string& input) {
  const std::vector<std::string> inputs{input};
  return fr::load_dumps(inputs);
}

TEST(FrLoad, ReadsAPickleWithItsGroupsEntriesAndStacks) {
  const auto d = fr::read_dump((data_dir / "host_stuck/_dump_0").string());
  EXPECT_EQ(d.rank, 0);
  EXPECT_EQ(d.version, "2.10");
  EXPECT_EQ(d.pickle_protocol, 4);
  EXPECT_EQ(d.comm_lib_version, "2.21.5");
  ASSERT_EQ(d.groups.size(), 1u);
  EXPECT_EQ(d.groups[0].name, "0");
  EXPECT_EQ(d.groups[0].desc, "default_pg");
  EXPECT_EQ(d.groups[0].ranks, (std::vector<int>{0, 1, 2, 3})); // from the string "[0, 1, 2, 3]"
  ASSERT_EQ(d.entries.size(), 5u);
  const auto& last = d.entries.back();
  EXPECT_EQ(last.collective_seq_id, 5);
  EXPECT_EQ(last.state, fr::entry_state::started);
  EXPECT_EQ(d.ops[last.op], "nccl:all_reduce");
  EXPECT_EQ(d.shapes[last.shapes].input_sizes, (std::vector<std::vector<std::int64_t>>{{4, 4}}));
  EXPECT_EQ(d.shapes[last.shapes].input_dtypes, (std::vector<std::string>{"Float"}));
  EXPECT_GT(last.time_started_ns, 0);
  EXPECT_EQ(last.time_completed_ns, -1);
  ASSERT_EQ(d.stacks[last.stack].size(), 4u);
  EXPECT_EQ(d.stacks[last.stack][2].file, "train.py");
  EXPECT_EQ(d.entries.front().duration_ms, 0.25f);
  ASSERT_EQ(d.status_by_pg.size(), 1u);
  EXPECT_EQ(d.status_by_pg[0].last_enqueued, 5);
  EXPECT_EQ(d.status_by_pg[0].last_completed, 4);
}

TEST(FrLoad, ReadsProtocols2And5AndVersion2Point0) {
  EXPECT_EQ(fr::read_dump((data_dir / "proto2/_dump_1").string()).pickle_protocol, 2);
  EXPECT_EQ(fr::read_dump((data_dir / "proto5/_dump_0").string()).pickle_protocol, 5);
  const auto old = fr::read_dump((data_dir / "version_2_0_list_ranks/_dump_1").string());
  EXPECT_EQ(old.version, "2.0");
  EXPECT_EQ(old.groups[0].ranks, (std::vector<int>{0, 1, 2, 3})); // a list there
}

TEST(FrLoad, ReadsTheJsonForm) {
  const auto d = fr::read_dump((data_dir / "json_form/_dump_1.json").string());
  EXPECT_EQ(d.rank, 1);
  EXPECT_EQ(d.pickle_protocol, 0);
  ASSERT_EQ(d.entries.size(), 5u);
  EXPECT_EQ(d.entries[0].stack, 0u);             // no frames in the JSON form
  EXPECT_EQ(d.entries[4].time_completed_ns, -1); // written as 0
  EXPECT_EQ(d.groups[0].desc, "default_pg");
  ASSERT_EQ(d.status_by_pg.size(), 1u);
  EXPECT_EQ(d.status_by_pg[0].last_completed, 4); // written as "4"
}

TEST(FrLoad, AnEmptyFileIsAnEmptyDumpNotAnError) {
  const auto d = fr::parse_dump("", "dumps/_dump_7", 7);
  EXPECT_EQ(d.status, fr::dump_status::empty_file);
  EXPECT_EQ(d.rank, 7);
  const auto folder = load((data_dir / "empty_dump").string());
  ASSERT_EQ(folder.size(), 4u);
  EXPECT_EQ(folder[2].status, fr::dump_status::empty_file);
}

TEST(FrLoad, TheDumpsRankKeyWinsOverTheFileName) {
  const auto d = fr::parse_dump(R"({"version": "2.4", "rank": 5, "pg_config": {}})", "x_2", 2);
  EXPECT_EQ(d.rank, 5);
  EXPECT_EQ(d.status, fr::dump_status::empty_ring);
}

TEST(FrLoad, ARepeatedKeyKeepsItsLastValueAsPythonDoes) {
  const auto d = fr::parse_dump(
      R"({"version": "2.4", "entries": [{"profiling_name": "nccl:all_gather",
          "collective_seq_id": 1, "profiling_name": "nccl:all_reduce", "input_sizes": "x",
          "input_sizes": [[2, 3]], "collective_seq_id": 7}]})",
      "d_0", 0);
  ASSERT_EQ(d.entries.size(), 1u);
  EXPECT_EQ(d.ops[d.entries[0].op], "nccl:all_reduce");
  EXPECT_EQ(d.entries[0].collective_seq_id, 7);
  EXPECT_EQ(d.shapes[d.entries[0].shapes].input_sizes,
            (std::vector<std::vector<std::int64_t>>{{2, 3}}));
}

TEST(FrLoad, EqualStacksAndShapesAreInternedOnceAndUnequalOnesApart) {
  // Sizes [[1], []] and [[], [1]] and dtypes ["ab"] and ["a", "b"] must not share a key.
  const auto d = fr::parse_dump(
      R"({"version": "2.4", "entries": [
          {"profiling_name": "a", "collective_seq_id": 1, "input_sizes": [[1], []],
           "input_dtypes": ["ab"], "frames": [{"name": "f", "filename": "x.py", "line": 1}]},
          {"profiling_name": "a", "collective_seq_id": 2, "input_sizes": [[], [1]],
           "input_dtypes": ["a", "b"], "frames": [{"name": "f", "filename": "x.py", "line": 1}]},
          {"profiling_name": "a", "collective_seq_id": 3, "input_sizes": [[1], []],
           "input_dtypes": ["ab"], "frames": [{"name": "f", "filename": "x.py", "line": 2}]}]})",
      "d_0", 0);
  ASSERT_EQ(d.entries.size(), 3u);
  EXPECT_NE(d.entries[0].shapes, d.entries[1].shapes);
  EXPECT_EQ(d.entries[0].shapes, d.entries[2].shapes);
  EXPECT_EQ(d.shapes.size(), 2u);
  EXPECT_EQ(d.entries[0].stack, d.entries[1].stack); // equal frames, separate objects
  EXPECT_NE(d.entries[0].stack, d.entries[2].stack);
  ASSERT_EQ(d.stacks.size(), 3u); // the empty stack and two
  EXPECT_EQ(d.stacks[d.entries[2].stack][0].line, 2);
}

TEST(FrLoad, BadInputIsOneLineWithAStableCode) {
  namespace codes = fr::codes;
  EXPECT_EQ(error_of([] { (void)fr::parse_dump("[1, 2]", "d_0", 0); }).first, codes::not_a_dump);
  EXPECT_EQ(error_of([] { (void)fr::parse_dump(R"({"a": 1})", "d_0", 0); }).first,
            codes::not_a_dump);
  EXPECT_EQ(error_of([] { (void)fr::parse_dump(R"({"version": "3.1"})", "d_0", 0); }).first,
            codes::unsupported_version);
  EXPECT_EQ(
      error_of([] { (void)fr::parse_dump(R"({"version": "2.4", "entries": 3})", "d_0", 0); }).first,
      codes::malformed_dump);
  EXPECT_EQ(error_of([] {
              (void)fr::parse_dump(
                  R"({"version": "2.4", "entries": [{"profiling_name": "nccl:all_reduce",
                      "input_sizes": [[4, "x"]]}]})",
                  "d_0", 0);
            }).first,
            codes::malformed_dump);
  EXPECT_EQ(error_of([] {
              (void)fr::parse_dump(R"({"version": "2.4", "entries": [{}]})", "d_0", 0);
            }).first,
            codes::malformed_dump);
  EXPECT_EQ(error_of([] { (void)fr::parse_dump(R"({"version": "2.4",)", "d_0", 0); }).first,
            codes::malformed_dump);
  EXPECT_EQ(error_of([] { (void)fr::parse_dump(R"({"version": "2.4"})", "dump", -1); }).first,
            codes::no_rank);
  const auto [code, message] =
      error_of([] { (void)fr::parse_dump(std::string("\x80\x04garbage", 9), "dumps/_dump_3", 3); });
  EXPECT_EQ(code.substr(0, 10), "TDIAG-TR-1") << message; // the pickle reader's codes
  EXPECT_NE(message.find("dumps/_dump_3"), std::string::npos) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// The reader skips the pickle reader's nesting and cycle check (it walks a fixed shape): a list
// holding itself is then a size that is not an integer, and a stack holding itself and its
// entry is a stack of two nameless frames, never a loop.
TEST(FrLoad, ACyclicPickleIsReadOrRefusedWithoutLooping) {
  using namespace std::string_literals;
  const auto sizes_in_themselves =
      "\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x03\x00\x00\x00"
      "2.4q\x02X\x07\x00\x00\x00"
      "entriesq\x03]q\x04}q\x05(X\x0e\x00\x00\x00profiling_nameq\x06X\x0f\x00\x00\x00nccl:"
      "all_reduceq\x07X\x11\x00\x00\x00"
      "collective_seq_idq\x08K\x01X\x0b\x00\x00\x00input_sizesq\x09]q\x0ah\x0a"
      "auau."s;
  const auto [code, message] =
      error_of([&] { (void)fr::parse_dump(sizes_in_themselves, "_dump_0", 0); });
  EXPECT_EQ(code, fr::codes::malformed_dump) << message;
  EXPECT_NE(message.find("input_sizes"), std::string::npos) << message;

  const auto stack_in_itself =
      "\x80\x02}q\x00(X\x07\x00\x00\x00versionq\x01X\x03\x00\x00\x00"
      "2.4q\x02X\x07\x00\x00\x00"
      "entriesq\x03]q\x04}q\x05(X\x0e\x00\x00\x00profiling_nameq\x06X\x0f\x00\x00\x00nccl:"
      "all_reduceq\x07X\x11\x00\x00\x00"
      "collective_seq_idq\x08K\x01X\x06\x00\x00\x00"
      "framesq\x09]q\x0a(h\x0ah\x05"
      "euau."s;
  const auto d = fr::parse_dump(stack_in_itself, "_dump_0", 0);
  ASSERT_EQ(d.entries.size(), 1u);
  const auto& stack = d.stacks.at(d.entries[0].stack);
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0].name, "");
  EXPECT_EQ(stack[1].file, "");
}

// A JSON dump's parse holds about three times its text: the budget is held against that.
TEST(FrLoad, AJsonDumpIsHeldToTheBudgetByWhatItsParseHolds) {
  std::string json = R"({"version": "2.4", "pg_config": {}, "entries": [], "pad": ")";
  json += std::string(400'000, 'x') + "\"}";
  setenv("TDIAG_MEMORY_LIMIT", "1M", 1);
  const auto [code, message] = error_of([&] { (void)fr::parse_dump(json, "_dump_0", 0); });
  unsetenv("TDIAG_MEMORY_LIMIT");
  EXPECT_EQ(code, "TDIAG-CORE-006") << message;
  EXPECT_NE(message.find("_dump_0: a JSON dump of"), std::string::npos) << message;
  EXPECT_EQ(fr::parse_dump(json, "_dump_0", 0).status, fr::dump_status::empty_ring);
}

// What an innocent rank could be blamed for, were it read as something: a seq that is absent,
// None, a bool or below 1, dtypes that are no list of names, sizes of None, a `rank` that is no
// rank, a name longer than PyTorch writes. Each is a damaged dump (lost evidence), not a call.
TEST(FrLoad, FieldsThatWouldMisleadTheMatchingAreADamagedDump) {
  const auto code_of = [](const std::string& entry, const std::string& top = "") {
    const auto json = R"({"version": "2.4", )" + top + R"("entries": [)" + entry + "]}";
    return error_of([&] { (void)fr::parse_dump(json, "_dump_0", 0); });
  };
  const std::string call = R"({"profiling_name": "nccl:all_reduce", )";
  for (const std::string seq :
       {R"("collective_seq_id": null)", R"("collective_seq_id": -1)", R"("collective_seq_id": 0)",
        R"("collective_seq_id": true)", R"("p2p_seq_id": 3)"}) {
    const auto [code, message] = code_of(call + seq + "}");
    EXPECT_EQ(code, fr::codes::malformed_dump) << seq;
    EXPECT_NE(message.find("`collective_seq_id` is"), std::string::npos) << message;
  }
  EXPECT_EQ(
      code_of(R"({"profiling_name": "nccl:send 0->1", "is_p2p": true, "p2p_seq_id": -1})").first,
      fr::codes::malformed_dump);
  // The calls of a first batch_isend_irecv are recorded before PyTorch counts any: p2p #0.
  EXPECT_EQ(
      code_of(R"({"profiling_name": "nccl:send 0->1", "is_p2p": true, "p2p_seq_id": 0})").first,
      "(no error)");
  const std::string seq = call + R"("collective_seq_id": 5, )";
  for (const std::string field :
       {R"("input_dtypes": "Float")", R"("input_dtypes": [1])", R"("output_dtypes": null)",
        R"("input_sizes": null)", R"("output_sizes": [4])", R"("input_sizes": [[-1]])",
        R"("input_sizes": [[true]])"}) {
    const auto [code, message] = code_of(seq + field + "}");
    EXPECT_EQ(code, fr::codes::malformed_dump) << field << ": " << message;
  }
  EXPECT_EQ(code_of(seq + R"("input_dtypes": ["Float"]})").first, "(no error)");
  for (const std::string rank :
       {R"("rank": -1, )", R"("rank": 3000000000, )", R"("rank": "x", )", R"("rank": true, )"}) {
    const auto [code, message] = code_of(call + R"("collective_seq_id": 5})", rank);
    EXPECT_EQ(code, fr::codes::malformed_dump) << rank;
    EXPECT_NE(message.find("`rank` is not a rank"), std::string::npos) << message;
  }
  // One entry numbered out of its place: the ring's sequence runs backwards in record order.
  const auto entry_at = [](int record, int number) {
    return fmt::format(R"({{"profiling_name": "nccl:all_reduce", "record_id": {}, )"
                       R"("collective_seq_id": {}}})",
                       record, number);
  };
  const auto backwards = code_of(entry_at(0, 1) + ", " + entry_at(1, 189) + ", " + entry_at(2, 3));
  EXPECT_EQ(backwards.first, fr::codes::malformed_dump) << backwards.second;
  EXPECT_NE(backwards.second.find("`collective_seq_id` 3 comes after 189"), std::string::npos)
      << backwards.second;
  // Listed unrotated (a wrapped ring in buffer order) is read in record order: no damage.
  EXPECT_EQ(code_of(entry_at(7, 8) + ", " + entry_at(5, 6) + ", " + entry_at(6, 7)).first,
            "(no error)");
  const auto [code, message] = code_of(R"({"profiling_name": "nccl:)" + std::string(70'000, 'a') +
                                       R"(", "collective_seq_id": 1})");
  EXPECT_EQ(code, fr::codes::malformed_dump) << message;
  EXPECT_NE(message.find("holds a name of 70005 bytes"), std::string::npos) << message;
}

// A ranks text with a word in it states no membership (the group's users stand for it), never
// the members left after dropping the word.
TEST(FrLoad, ARanksTextThatIsNoListStatesNoMembership) {
  const auto d = fr::parse_dump(
      R"j({"version": "2.4", "pg_config": {"0": {"name": "0", "desc": "default_pg",
          "ranks": "[0, 1, x, 3]"}, "1": {"name": "1", "desc": "tp", "ranks": "[-1, 2]"},
          "2": {"name": "2", "desc": "dp", "ranks": "(0, 2)"}}, "entries": []})j",
      "_dump_0", 0);
  ASSERT_EQ(d.groups.size(), 3u);
  EXPECT_TRUE(d.groups[0].ranks.empty());
  EXPECT_TRUE(d.groups[1].ranks.empty());
  EXPECT_EQ(d.groups[2].ranks, (std::vector<int>{0, 2}));
}

TEST(FrLoad, APickleOverItsLimitsIsRefused) {
  const auto bytes = read(data_dir / "host_stuck/_dump_0");
  tdiag::trace::pickle_limits limits;
  limits.max_values = 20;
  const auto [code, message] = error_of([&] { (void)fr::parse_dump(bytes, "_dump_0", 0, limits); });
  EXPECT_EQ(code, "TDIAG-TR-104") << message;
}

TEST(FrLoad, FoldersTakeFilesEndingInARankAndGlobsExpand) {
  const auto files =
      fr::expand_inputs(std::vector<std::string>{(data_dir / "host_stuck").string()});
  ASSERT_EQ(files.size(), 4u); // truth.json is not a dump
  EXPECT_TRUE(files[3].ends_with("_dump_3"));
  const auto globbed =
      fr::expand_inputs(std::vector<std::string>{(data_dir / "host_stuck/_dump_[12]").string()});
  EXPECT_EQ(globbed.size(), 2u);
  EXPECT_EQ(
      error_of([] { (void)fr::expand_inputs(std::vector<std::string>{"/nonexistent/_d*"}); }).first,
      fr::codes::no_dump_file);
}

TEST(FrLoad, TwoDumpsOfOneRankAreRefused) {
  const std::vector<std::string> inputs{(data_dir / "host_stuck/_dump_1").string(),
                                        (data_dir / "size_mismatch/_dump_1").string()};
  EXPECT_EQ(error_of([&] { (void)fr::load_dumps(inputs); }).first, fr::codes::rank_claimed_twice);
}

// A copy of tests/data/fr/host_stuck in a folder of this process's own, removed when the copy
// goes (an assertion that fails leaves nothing behind).
struct host_stuck_copy {
  explicit host_stuck_copy(const std::string& name)
      : dir(std::filesystem::temp_directory_path() /
            ("tdiag_fr_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir);
    std::filesystem::copy(data_dir / "host_stuck", dir);
  }
  host_stuck_copy(const host_stuck_copy&) = delete;
  host_stuck_copy& operator=(const host_stuck_copy&) = delete;
  ~host_stuck_copy() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  // `rank`'s dump cut short, as a rank dying as it writes leaves it.
  void cut(int rank) const {
    const auto file = dir / ("_dump_" + std::to_string(rank));
    std::filesystem::resize_file(file, std::filesystem::file_size(file) / 2);
  }
  void write(const std::string& name, std::string_view bytes) const {
    std::ofstream(dir / name, std::ios::binary) << bytes;
  }
  std::filesystem::path dir;
};

TEST(FrLoad, ADumpCutShortIsThatRanksLostEvidenceAndTheOthersLoad) {
  const host_stuck_copy job("cut_one");
  job.cut(1);
  const auto dumps = load(job.dir.string());
  ASSERT_EQ(dumps.size(), 4u);
  EXPECT_EQ(dumps[1].rank, 1);
  EXPECT_EQ(dumps[1].status, fr::dump_status::unreadable);
  EXPECT_NE(dumps[1].problem.find("_dump_1"), std::string::npos) << dumps[1].problem;
  EXPECT_TRUE(dumps[1].entries.empty());
  for (const int r : {0, 2, 3})
    EXPECT_EQ(dumps[static_cast<std::size_t>(r)].status, fr::dump_status::ok);
  const auto report = fr::analyze(dumps);
  ASSERT_EQ(report.culprits.size(), 1u) << fr::to_text(report); // rank 2 stays named
  EXPECT_EQ(report.culprits[0].rank, 2);
  EXPECT_NE(fr::to_text(report).find("warning: rank 1's dump cannot be read"), std::string::npos);
}

TEST(FrLoad, WhenNoDumpReadsTheFirstFailureIsTheAnswer) {
  const host_stuck_copy job("cut_all");
  for (const int r : {0, 1, 2, 3})
    job.cut(r);
  const auto [code, message] = error_of([&] { (void)load(job.dir.string()); });
  EXPECT_EQ(code.substr(0, 10), "TDIAG-TR-1") << message;
  EXPECT_NE(message.find("_dump_0"), std::string::npos) << message;
}

// Only damage stands as a rank's lost evidence: a file that is no dump, or a version this reader
// does not know, is the user's to see, naming the file, not a rank that left nothing.
TEST(FrLoad, AFileThatIsNoDumpIsAnErrorNotLostEvidence) {
  {
    const host_stuck_copy job("not_a_dump");
    job.write("trace_rank7.json", R"({"traceEvents": []})");
    const auto [code, message] = error_of([&] { (void)load(job.dir.string()); });
    EXPECT_EQ(code, fr::codes::not_a_dump) << message;
    EXPECT_NE(message.find("trace_rank7.json"), std::string::npos) << message;
  }
  const host_stuck_copy job("version");
  job.write("_dump_1", R"({"version": "3.0", "pg_config": {}, "entries": []})");
  const auto [code, message] = error_of([&] { (void)load(job.dir.string()); });
  EXPECT_EQ(code, fr::codes::unsupported_version) << message;
}

TEST(FrLoad, AJobWhoseDumpsHoldNoEntryIsNoVerdict) {
  host_stuck_copy job("all_empty");
  for (const int r : {0, 1, 2, 3})
    job.write("_dump_" + std::to_string(r), "");
  const auto [code, message] = error_of([&] { (void)load(job.dir.string()); });
  EXPECT_EQ(code, fr::codes::no_entries) << message;
  EXPECT_NE(message.find("none of the 4 dump(s) holds an entry (4 empty, 0 unreadable)"),
            std::string::npos)
      << message;
}

// A folder's entry named like a dump that is no file (a directory, a FIFO, a link to nothing) is
// that rank's lost evidence, never opened (a FIFO would wait for a writer); the others load.
TEST(FrLoad, AFolderEntryThatIsNoFileIsThatRanksLostEvidence) {
  const host_stuck_copy job("no_file");
  std::filesystem::remove(job.dir / "_dump_0");
  std::filesystem::create_directory(job.dir / "_dump_0");
  std::filesystem::remove(job.dir / "_dump_1");
  ASSERT_EQ(::mkfifo((job.dir / "_dump_1").c_str(), 0600), 0);
  std::filesystem::remove(job.dir / "_dump_3");
  std::filesystem::create_symlink(job.dir / "gone", job.dir / "_dump_3");
  const auto dumps = load(job.dir.string());
  ASSERT_EQ(dumps.size(), 4u);
  for (const int r : {0, 1, 3}) {
    const auto& d = dumps[static_cast<std::size_t>(r)];
    EXPECT_EQ(d.status, fr::dump_status::unreadable) << r;
    EXPECT_NE(d.problem.find("_dump_" + std::to_string(r)), std::string::npos) << d.problem;
  }
  EXPECT_NE(dumps[0].problem.find("is a directory, not a dump file"), std::string::npos);
  EXPECT_NE(dumps[1].problem.find("is a FIFO, not a dump file"), std::string::npos);
  EXPECT_EQ(dumps[2].status, fr::dump_status::ok);
}

// JSON after a UTF-8 byte-order mark is read; a file that is neither a pickle nor JSON says so.
TEST(FrLoad, AByteOrderMarkIsSkippedAndNeitherFormIsSaidSo) {
  const auto json = read(data_dir / "json_form/_dump_1.json");
  EXPECT_EQ(fr::parse_dump("\xEF\xBB\xBF" + json, "_dump_1", 1).status, fr::dump_status::ok);
  const auto [code, message] = error_of([] { (void)fr::parse_dump("null", "_dump_1", 1); });
  EXPECT_EQ(code, fr::codes::not_a_dump) << message;
  EXPECT_NE(message.find("opens with byte 0x6e"), std::string::npos) << message;
}

TEST(FrLoad, DumpsLoadSortedByRank) {
  const auto dumps = load((data_dir / "missing_dump").string());
  ASSERT_EQ(dumps.size(), 3u);
  for (int r = 0; r < 3; ++r)
    EXPECT_EQ(dumps[static_cast<std::size_t>(r)].rank, r);
}

TEST(FrLoad, DumpsAreToldFromTracesBySight) {
  const auto looks = [](const std::filesystem::path& p) {
    return fr::looks_like_dumps(std::vector<std::string>{p.string()});
  };
  EXPECT_TRUE(looks(data_dir / "host_stuck"));
  EXPECT_TRUE(looks(data_dir / "json_form"));
  EXPECT_TRUE(looks(data_dir / "empty_dump")); // one empty file among dumps
  EXPECT_TRUE(looks(data_dir.parent_path() / "fr_real/killed/_dump_0"));
  const auto traces = data_dir.parent_path() / "trace";
  EXPECT_FALSE(looks(traces / "kineto_leak.json"));
  EXPECT_FALSE(looks(traces / "leaking_train_snapshot.pickle"));
  EXPECT_FALSE(looks(traces / "real_shapes"));
  EXPECT_FALSE(looks("/nonexistent/_dump_0"));
}

} // namespace
