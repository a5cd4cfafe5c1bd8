// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A Flight Recorder verdict beside the job's traces (fr_traces.cpp): each culprit's last
// kernels from its own trace, the stragglers as analyze_job found them, and both rendered.
#include <tensordiag/trace/fr_traces.hpp>
#include <tensordiag/trace/synthetic_job.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

namespace fr = tdiag::trace::fr;
using namespace tdiag::trace;

struct joined {
  std::vector<job_member> members;
  job_analysis_result analysis;
  fr::job_report verdict;
  fr::trace_context context;
};

// Four ranks, rank 2 computing 3 ms longer before a collective of every step; the verdict names
// rank 2 (not_reached) and rank 7, which left no trace.
joined make_joined() {
  synthetic_job_options o;
  o.ranks = 4;
  o.tensor_parallel = 4;
  o.steps = 2;
  o.layers = 4;
  for (int step = 1; step <= 2; ++step)
    o.delays.push_back({2, step, 1, planted_delay::kind::kernel, 3'000'000});
  auto job = make_synthetic_job(o);
  joined j;
  for (std::size_t r = 0; r < job.traces.size(); ++r) {
    job_member m;
    m.rank = static_cast<int>(r);
    m.path = "run/rank-" + std::to_string(r) + ".json";
    m.loaded.trace = std::move(job.traces[r]);
    j.members.push_back(std::move(m));
  }
  analysis_options options;
  options.rank_analyses = false;
  j.analysis = analyze_job(rank_traces(j.members), options, 1);
  fr::culprit held;
  held.rank = 2;
  held.cause = fr::cause::not_reached;
  fr::culprit gone;
  gone.rank = 7;
  gone.cause = fr::cause::no_dump;
  j.verdict.culprits = {held, gone};
  j.context = fr::join_traces(j.verdict, j.members, j.analysis, "run/");
  return j;
}

TEST(FrTraces, EachCulpritGetsTheLastKernelsOfItsOwnTrace) {
  const auto j = make_joined();
  const auto& c = j.context;
  EXPECT_EQ(c.run, "run/");
  EXPECT_EQ(c.ranks, 4u);
  EXPECT_EQ(c.collectives, j.analysis.collectives.size());
  ASSERT_EQ(c.culprits.size(), 2u);
  const auto& held = c.culprits[0];
  EXPECT_EQ(held.rank, 2);
  EXPECT_EQ(held.source, "run/rank-2.json");
  ASSERT_EQ(held.last_kernels.size(), 5u);
  EXPECT_TRUE(std::is_sorted(held.last_kernels.begin(), held.last_kernels.end(),
                             [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; }));
  std::int64_t latest = 0;
  for (const auto& k : j.members[2].loaded.trace.kernels.all())
    latest = std::max(latest, k.start);
  EXPECT_EQ(held.last_kernels.back().start_ns, latest);
  EXPECT_LE(held.trace_begin_ns, held.last_kernels.front().start_ns);
  EXPECT_GE(held.trace_end_ns, held.last_kernels.back().start_ns);
  EXPECT_TRUE(c.culprits[1].source.empty()); // rank 7 has no trace
  EXPECT_TRUE(c.culprits[1].last_kernels.empty());
}

TEST(FrTraces, TheStragglersAreTheTraceAnalysissWaits) {
  const auto j = make_joined();
  ASSERT_FALSE(j.context.stragglers.empty());
  const auto& first = j.context.stragglers.front();
  EXPECT_EQ(first.rank, 2);
  EXPECT_TRUE(first.culprit);
  EXPECT_EQ(first.cause, "compute");
  const auto it = std::find_if(j.analysis.waits.begin(), j.analysis.waits.end(),
                               [](const rank_wait& w) { return w.rank == 2; });
  ASSERT_NE(it, j.analysis.waits.end());
  EXPECT_EQ(first.times_last, it->times_last);
  EXPECT_DOUBLE_EQ(first.late_us, it->late_us);
  for (const auto& s : j.context.stragglers)
    EXPECT_GT(s.times_last, 0u);
}

TEST(FrTraces, TextAndJsonCarryTheTraces) {
  auto j = make_joined();
  EXPECT_EQ(fr::to_json(j.verdict).find("\"traces\""), std::string::npos);
  j.verdict.traces = j.context;
  const auto json = fr::to_json(j.verdict);
  EXPECT_NE(json.find("\"traces\""), std::string::npos);
  EXPECT_NE(json.find("\"last_kernels\""), std::string::npos);
  EXPECT_NE(json.find("\"stragglers\""), std::string::npos);
  const auto text = fr::to_text(j.verdict);
  EXPECT_NE(text.find("the job's traces (run/): 4 rank(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2 (run/rank-2.json): 5 last kernel(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 7: no trace of this rank"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 2 (a culprit): arrived last"), std::string::npos) << text;
}

} // namespace
