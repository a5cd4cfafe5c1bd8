// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Collectives of process groups smaller than the job (job_collectives.cpp): hand-made Kineto
// traces of a 4-rank job whose NCCL kernels name their group ("Process Group Name",
// "Process Group Ranks") and, in some, their sequence number ("Seq").
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;

struct nccl_kernel {
  const char* group;
  const char* ranks; // "Process Group Ranks" as PyTorch writes it
  int seq;           // -1: no "Seq"
  int start_us, end_us;
};

trace rank_trace_of(const std::vector<nccl_kernel>& kernels) {
  std::string json = R"({"traceEvents": [)";
  std::uint32_t correlation = 1;
  for (const auto& k : kernels) {
    json += fmt::format(
        R"({{"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float",)"
        R"( "pid": 0, "tid": 7, "ts": {}, "dur": {}, "args": {{"device": 0, "stream": 7,)"
        R"( "correlation": {}, "Collective name": "allreduce", "Process Group Name": "{}",)"
        R"( "Process Group Ranks": "{}"{}}}}},)",
        k.start_us, k.end_us - k.start_us, correlation++, k.group, k.ranks,
        k.seq < 0 ? std::string() : fmt::format(R"(, "Seq": {})", k.seq));
  }
  if (!kernels.empty())
    json.pop_back(); // the last comma
  json += "]}";
  return import_kineto(std::as_bytes(std::span(json)), "rank.json").trace;
}

TEST(JobCollectives, SubgroupsMatchOnTheirOwnRanks) {
  // Tensor-parallel groups {0, 1} and {2, 3}, each with two all-reduces, and one all-reduce of
  // the whole job; rank 1 misses its group's second all-reduce.
  const char* all = "[0, 1, 2, 3]";
  std::vector<trace> t;
  t.push_back(rank_trace_of(
      {{"1", "[0, 1]", -1, 10, 20}, {"1", "[0, 1]", -1, 30, 40}, {"0", all, -1, 50, 60}}));
  t.push_back(rank_trace_of({{"1", "[0, 1]", -1, 12, 20}, {"0", all, -1, 52, 60}}));
  t.push_back(rank_trace_of(
      {{"2", "[2, 3]", -1, 11, 21}, {"2", "[2, 3]", -1, 31, 41}, {"0", all, -1, 55, 60}}));
  t.push_back(rank_trace_of(
      {{"2", "[2, 3]", -1, 15, 21}, {"2", "[2, 3]", -1, 33, 41}, {"0", all, -1, 51, 60}}));
  std::vector<rank_trace> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back({r, &t[static_cast<std::size_t>(r)], 0});
  const auto a = analyze_job(ranks, {}, 1);

  ASSERT_EQ(a.collectives.size(), 4u); // group 1 once, group 2 twice, the whole job once
  std::vector<std::string> groups;
  for (const auto& c : a.collectives)
    groups.push_back(c.group);
  EXPECT_EQ(groups, (std::vector<std::string>{"1", "2", "2", "0"})); // by the last arrival
  const auto& tp = a.collectives[0];
  EXPECT_EQ(tp.ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(tp.members, (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(tp.last_rank, 1);
  EXPECT_EQ(tp.wait_us, (std::vector<double>{2, 0}));
  EXPECT_EQ(tp.start_ns, (std::vector<std::int64_t>{10'000, 12'000}));
  EXPECT_EQ(a.collectives[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(a.collectives[2].occurrence, 1u);
  const auto& job = a.collectives[3];
  EXPECT_EQ(job.ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(job.last_rank, 2);
  EXPECT_DOUBLE_EQ(job.spread_us, 5);

  // Only rank 0's second all-reduce of group 1 lacks a partner: ranks 2 and 3 are not in it.
  ASSERT_EQ(a.unmatched_collectives.size(), 1u);
  const auto& u = a.unmatched_collectives[0];
  EXPECT_EQ(u.rank, 0);
  EXPECT_EQ(u.group, "1");
  EXPECT_EQ(u.start_ns, 30'000);
  // Rank 0 waited 2 us in group 1 and 5 us in the whole job's; rank 2 waited 4 + 2 + 0 in
  // group 2 and the job's.
  EXPECT_DOUBLE_EQ(a.waits[0].wait_us, 7);
  EXPECT_DOUBLE_EQ(a.waits[2].wait_us, 6);
}

// The group of each NCCL kernel is kept through .tdtrace, in both layouts, ids and all.
TEST(JobCollectives, GroupsSurviveTdtraceInBothLayouts) {
  trace t = rank_trace_of({{"1", "[0, 1]", 4, 10, 20}, {"0", "[0, 1, 2, 3]", -1, 30, 40}});
  t.finalize();
  ASSERT_EQ(t.collectives.size(), 2u);
  for (const auto layout : {tdtrace_layout::chunks, tdtrace_layout::row_image}) {
    const auto path = test::temp_path("groups.tdtrace");
    tdtrace_writer_options o;
    o.layout = layout;
    write_tdtrace(path, t, o);
    const trace back = read_tdtrace(path).loaded.trace;
    ASSERT_EQ(back.collectives.size(), 2u);
    const auto* c = back.collective_of(1);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(back.name(c->group), "1");
    EXPECT_EQ(back.name(c->group_ranks), "[0, 1]");
    EXPECT_EQ(back.name(c->collective), "allreduce");
    EXPECT_EQ(c->seq, 4);
    ASSERT_NE(back.collective_of(2), nullptr);
    EXPECT_EQ(back.collective_of(2)->seq, -1);
    EXPECT_EQ(back.name(back.collective_of(2)->group), "0");
  }
}

TEST(JobCollectives, SequenceNumbersPairWhatTimesCannot) {
  // Rank 1 never ran seq 1 and its seq 2 starts after rank 0's seq 2 ended, far apart on the
  // clock: in order and by overlap that would be no collective, by number it is seq 2.
  std::vector<trace> t;
  t.push_back(rank_trace_of({{"3", "[0, 1]", 1, 10, 20}, {"3", "[0, 1]", 2, 30, 40}}));
  t.push_back(rank_trace_of({{"3", "[0, 1]", 2, 90, 95}}));
  t.push_back(rank_trace_of({}));
  const std::vector<rank_trace> ranks{{0, &t[0], 0}, {1, &t[1], 0}, {2, &t[2], 0}};
  analysis_options base;
  base.align = clock_alignment::base_time;
  const auto a = analyze_job(ranks, base, 1);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].seq, 2);
  EXPECT_EQ(a.collectives[0].ranks, (std::vector<int>{0, 1}));
  EXPECT_DOUBLE_EQ(a.collectives[0].spread_us, 60);
  // On the collectives' clock (the default) the two ends coincide: rank 1 started 5 us later.
  const auto aligned = analyze_job(ranks, {}, 1);
  EXPECT_EQ(aligned.clock_offsets_ns[1], -55'000);
  ASSERT_EQ(aligned.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(aligned.collectives[0].spread_us, 5);
  ASSERT_EQ(a.unmatched_collectives.size(), 1u);
  EXPECT_EQ(a.unmatched_collectives[0].rank, 0);
  EXPECT_EQ(a.unmatched_collectives[0].seq, 1);
}

TEST(JobCollectives, ACutRankListFallsBackOnTheRanksThatRanTheGroup) {
  // PyTorch cuts long lists ("[0, 1, ..., 63]"): the group's members are then the job's ranks
  // that ran any kernel of it, here 0 and 2 (rank 1 is in another group only).
  const char* cut = "[0, 2, 4, ..., 62]";
  std::vector<trace> t;
  t.push_back(rank_trace_of({{"5", cut, -1, 10, 20}, {"5", cut, -1, 30, 40}}));
  t.push_back(rank_trace_of({{"6", "[1, 3]", -1, 10, 20}}));
  t.push_back(rank_trace_of({{"5", cut, -1, 11, 20}}));
  const std::vector<rank_trace> ranks{{0, &t[0], 0}, {1, &t[1], 0}, {2, &t[2], 0}};
  const auto a = analyze_job(ranks, {}, 1);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].ranks, (std::vector<int>{0, 2}));
  // Rank 0's second kernel has no partner on rank 2; group 6 has one of the job's ranks.
  ASSERT_EQ(a.unmatched_collectives.size(), 1u);
  EXPECT_EQ(a.unmatched_collectives[0].rank, 0);
  EXPECT_EQ(a.unmatched_collectives[0].start_ns, 30'000);
}

} // namespace
