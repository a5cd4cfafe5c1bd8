// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace tdiag::trace;

std::filesystem::path two_ranks() {
  return std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "hta" / "two_ranks";
}

std::string code_of(const tdiag::input_error& e) {
  return e.report().diagnostics.front().code;
}

TEST(JobLoad, RankFromFileName) {
  EXPECT_EQ(rank_from_file_name("sampled_rank-1.json.gz"), 1);
  EXPECT_EQ(rank_from_file_name("/x/rank_12.trace.json"), 12);
  EXPECT_EQ(rank_from_file_name("worker0.rank3.pt.trace.json"), 3);
  EXPECT_EQ(rank_from_file_name("trace.json"), -1);
  EXPECT_EQ(rank_from_file_name("ranking.json"), -1);
}

TEST(JobLoad, FolderGivesOneMemberPerRankFromDistributedInfo) {
  if (!std::filesystem::exists(two_ranks()))
    GTEST_SKIP() << "shared data absent: " << two_ranks();
  const std::vector<std::string> inputs{two_ranks().string()};
  const auto job = load_job(inputs);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].rank, 0);
  EXPECT_EQ(job[1].rank, 1);
  EXPECT_EQ(job[1].path.filename(), "sampled_rank-1.json.gz");
  EXPECT_GT(job[0].loaded.trace.kernels.size(), 1000u);
  EXPECT_EQ(*job[0].loaded.trace.metadata.property("distributed.world_size"), "128");
}

TEST(JobLoad, GlobAndPositionRanks) {
  if (!std::filesystem::exists(two_ranks()))
    GTEST_SKIP() << "shared data absent: " << two_ranks();
  const std::vector<std::string> glob{(two_ranks() / "*rank-1*").string(),
                                      (two_ranks() / "*rank-0*").string()};
  job_load_options o;
  o.ranks = rank_source::position;
  const auto job = load_job(glob, o);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].path.filename(), "sampled_rank-1.json.gz"); // position 0
}

// "-" is standard input (read whole), as every file argument of the CLI takes it; a file
// named "-" in the working folder does not shadow it.
TEST(JobLoad, DashIsStandardInput) {
  const std::vector<std::string> inputs{"-", "/nonexistent-folder-of-traces"};
  try {
    (void)expand_job_inputs(inputs);
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-260");
    EXPECT_NE(std::string(e.what()).find("/nonexistent-folder-of-traces: no such file"),
              std::string::npos)
        << e.what() << ": '-' itself must pass";
  }
  const std::vector<std::string> dash{"-"};
  const auto out = expand_job_inputs(dash);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], "-");
}

TEST(JobLoad, BadInputsGiveCodedErrors) {
  const std::vector<std::string> missing{"/nonexistent/trace.json"};
  try {
    (void)load_job(missing);
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-260");
  }
  if (!std::filesystem::exists(two_ranks()))
    GTEST_SKIP() << "shared data absent: " << two_ranks();
  const auto file = (two_ranks() / "sampled_rank-0.json.gz").string();
  const std::vector<std::string> twice{file, file};
  try {
    (void)load_job(twice);
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-261");
    EXPECT_NE(std::string(e.what()).find("rank 0"), std::string::npos) << e.what();
  }
  job_load_options from_info;
  from_info.ranks = rank_source::distributed;
  const std::vector<std::string> rocm{
      (two_ranks().parent_path() / "rocm_mi250").string()}; // no distributedInfo
  try {
    (void)load_job(rocm, from_info);
    FAIL() << "no error";
  } catch (const tdiag::input_error& e) {
    EXPECT_EQ(code_of(e), "TDIAG-TR-262");
    EXPECT_NE(std::string(e.what()).find("distributedInfo"), std::string::npos) << e.what();
  }
}

// A folder whose own files are fine, among a symlink loop, a dangling link and a FIFO: one line
// each, never an exception, never a wait on the FIFO; the good files load.
class JobFolder : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tdiag_job_folder_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& name, std::string_view text) { std::ofstream(dir_ / name) << text; }
  static std::string kineto(int rank) {
    const std::string events =
        R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )"
        R"("ts": 1, "dur": 2}]})";
    return rank < 0 ? "{" + events
                    : R"({"distributedInfo": {"rank": )" + std::to_string(rank) + "}, " + events;
  }
  std::filesystem::path dir_;
};

TEST_F(JobFolder, LinksLoopsAndFifosAreOneLineEach) {
  write("rank-0.json", kineto(0));
  write("rank-1.json", kineto(1));
  std::filesystem::create_symlink(dir_ / "loop_b.json", dir_ / "loop_a.json");
  std::filesystem::create_symlink(dir_ / "loop_a.json", dir_ / "loop_b.json");
  std::filesystem::create_symlink(dir_ / "gone.json", dir_ / "dangling.json");
  std::filesystem::create_symlink(dir_ / "rank-1.json", dir_ / "zz_link_to_rank1.json.bak");
  ASSERT_EQ(::mkfifo((dir_ / "rank-2.json").c_str(), 0600), 0);
  std::vector<tdiag::diagnostic> skipped;
  const std::vector<std::string> inputs{dir_.string()};
  const auto job = load_job(inputs, {}, &skipped);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].rank, 0);
  EXPECT_EQ(job[1].rank, 1);
  ASSERT_EQ(skipped.size(), 4u); // dangling, FIFO, two loop ends
  std::string all;
  for (const auto& d : skipped) {
    EXPECT_EQ(d.message.find('\n'), std::string::npos);
    all += d.message + "|";
  }
  EXPECT_NE(all.find("dangling.json: skipped: a symbolic link that leads to no file"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("loop_a.json: skipped: a symbolic link that loops"), std::string::npos) << all;
  EXPECT_NE(all.find("rank-2.json: skipped: a FIFO"), std::string::npos) << all;
  // The same through a glob.
  skipped.clear();
  const std::vector<std::string> glob{(dir_ / "*.json").string()};
  EXPECT_EQ(load_job(glob, {}, &skipped).size(), 2u);
  EXPECT_EQ(skipped.size(), 4u);
}

TEST_F(JobFolder, AutomaticRanksNeverCollide) {
  // a.json states no rank (position 0), b.json states rank 0: a takes the first free rank.
  write("a.json", kineto(-1));
  write("b.json", kineto(0));
  write("c.json", kineto(-1));
  const std::vector<std::string> inputs{dir_.string()};
  const auto job = load_job(inputs);
  ASSERT_EQ(job.size(), 3u);
  EXPECT_EQ(job[0].path.filename(), "b.json");
  EXPECT_EQ(job[1].path.filename(), "a.json");
  EXPECT_EQ(job[1].rank, 1);
  EXPECT_EQ(job[2].path.filename(), "c.json");
  EXPECT_EQ(job[2].rank, 2);
}

// A rank stated that is none (negative, past int, not below the world size, past int in the
// file name) is said in one warning naming the rank the file takes, never taken silently; with
// --rank-from distributed it is the error's reason.
TEST_F(JobFolder, RanksStatedThatAreNoneAreSaid) {
  const std::string events =
      R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )"
      R"("ts": 1, "dur": 2}]})";
  write("a.json", R"({"distributedInfo": {"rank": -1}, )" + events);
  write("b.json", R"({"distributedInfo": {"rank": 5, "world_size": 2}, )" + events);
  write("c_rank-7.json", R"({"distributedInfo": {"rank": 2147483648}, )" + events);
  write("d_rank99999999999999999999.json", kineto(-1));
  const std::vector<std::string> inputs{dir_.string()};
  const auto job = load_job(inputs);
  ASSERT_EQ(job.size(), 4u);
  std::map<std::string, std::pair<int, std::string>> by_file;
  for (const auto& m : job) {
    ASSERT_EQ(m.loaded.warnings.size(), 1u) << m.path;
    EXPECT_EQ(m.loaded.warnings[0].code, "TDIAG-TR-262");
    by_file[m.path.filename().string()] = {m.rank, m.loaded.warnings[0].message};
  }
  EXPECT_NE(by_file["a.json"].second.find("distributedInfo.rank -1 is no rank; the file takes "
                                          "the lowest rank no other file states"),
            std::string::npos)
      << by_file["a.json"].second;
  EXPECT_NE(by_file["b.json"].second.find("distributedInfo.rank 5 is not below its world_size 2"),
            std::string::npos)
      << by_file["b.json"].second;
  EXPECT_EQ(by_file["c_rank-7.json"].first, 7);
  EXPECT_NE(by_file["c_rank-7.json"].second.find("takes rank 7 from its file name"),
            std::string::npos)
      << by_file["c_rank-7.json"].second;
  EXPECT_NE(by_file["d_rank99999999999999999999.json"].second.find("is past int"),
            std::string::npos);
  job_load_options distributed;
  distributed.ranks = rank_source::distributed;
  try {
    (void)load_job(std::vector<std::string>{(dir_ / "a.json").string()}, distributed);
    FAIL();
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("distributedInfo.rank -1 is no rank"), std::string::npos)
        << e.what();
  }
}

// Base times of +-INT64_MAX (hostile, or a broken writer) gave clock offsets that wrapped
// ("[0, -2]"); they saturate to the model's +-2^60 ns, and the job still analyses.
TEST_F(JobFolder, ExtremeBaseTimesSaturate) {
  const std::string events =
      R"("traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, )"
      R"("ts": 1, "dur": 2}]})";
  write("rank-0.json", R"({"baseTimeNanoseconds": -9223372036854775807, )" + events);
  write("rank-1.json", R"({"baseTimeNanoseconds": 9223372036854775807, )" + events);
  const std::vector<std::string> inputs{dir_.string()};
  const auto job = load_job(inputs);
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].clock_offset_ns, 0);
  EXPECT_EQ(job[1].clock_offset_ns, std::int64_t{1} << 60);
  const auto result = analyze_job(rank_traces(job));
  ASSERT_EQ(result.clock_offsets_ns.size(), 2u);
  for (const auto offset : result.clock_offsets_ns)
    EXPECT_GE(offset, 0);
}

} // namespace
