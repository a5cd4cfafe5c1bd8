// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/job_load.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

} // namespace
