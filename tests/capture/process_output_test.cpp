// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// capture/src/process_output.cpp: a process's rank from its launcher's environment, the file
// it claims in a job folder, and the properties that tag the trace.
#include <tensordiag/capture/process_output.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <unistd.h>

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

environment_lookup from(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

std::string property(const std::vector<std::pair<std::string, std::string>>& props,
                     const std::string& key) {
  for (const auto& [k, v] : props)
    if (k == key)
      return v;
  return "<none>";
}

TEST(ProcessOutput, RankComesFromTheLaunchersVariables) {
  auto who = identify_process(42, from({{"RANK", "3"}, {"LOCAL_RANK", "1"}, {"WORLD_SIZE", "8"}}));
  EXPECT_EQ(who.rank, 3);
  EXPECT_EQ(who.local_rank, 1);
  EXPECT_EQ(who.world_size, 8);
  EXPECT_EQ(who.rank_source, "RANK");
  EXPECT_EQ(process_file_name(who), "rank3.tdtrace");

  who = identify_process(42, from({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "6"}}));
  EXPECT_EQ(who.rank, 5);
  EXPECT_EQ(who.world_size, 6);
  EXPECT_EQ(who.rank_source, "OMPI_COMM_WORLD_RANK");

  who = identify_process(42, from({{"LOCAL_RANK", "2"}}));
  EXPECT_EQ(who.rank, 2);
  EXPECT_EQ(who.rank_source, "LOCAL_RANK");
}

TEST(ProcessOutput, WithoutARankTheProcessIdNamesTheFile) {
  // Not numbers, negative or empty: no rank.
  const auto who =
      identify_process(4242, from({{"RANK", "x1"}, {"LOCAL_RANK", "-1"}, {"PMI_RANK", ""}}));
  EXPECT_EQ(who.rank, -1);
  EXPECT_EQ(who.rank_source, "pid");
  EXPECT_EQ(process_file_name(who), "pid4242.tdtrace");
  const auto props = identity_properties(who);
  EXPECT_EQ(property(props, "distributed.rank"), "<none>");
  EXPECT_EQ(property(props, "capture.rank_source"), "pid");
}

TEST(ProcessOutput, PropertiesTagTheRank) {
  const auto props = identity_properties(
      identify_process(7, from({{"RANK", "0"}, {"LOCAL_RANK", "0"}, {"WORLD_SIZE", "4"}})));
  EXPECT_EQ(property(props, "distributed.rank"), "0");
  EXPECT_EQ(property(props, "distributed.local_rank"), "0");
  EXPECT_EQ(property(props, "distributed.world_size"), "4");
  EXPECT_EQ(property(props, "capture.rank_source"), "RANK");
}

TEST(ProcessOutput, ASecondProcessOfARankGoesToOthers) {
  const auto folder = fs::temp_directory_path() / ("tdiag-job-" + std::to_string(getpid()));
  fs::remove_all(folder);
  const auto first = claim_process_file(folder, identify_process(10, from({{"RANK", "1"}})));
  const auto second = claim_process_file(folder, identify_process(11, from({{"RANK", "1"}})));
  EXPECT_EQ(first, folder / "rank1.tdtrace");
  EXPECT_TRUE(fs::exists(first));
  EXPECT_EQ(second, folder / "others" / "rank1.11.tdtrace");
  EXPECT_TRUE(fs::is_directory(folder / "others"));
  fs::remove_all(folder);
}

} // namespace
} // namespace tdiag::capture
