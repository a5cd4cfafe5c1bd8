// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job's clock from the collectives: synthetic jobs whose ranks' clocks are off by up to
// +-5 ms, and HTA's two-rank sample with its clocks shifted.
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>
#include <tensordiag/trace/synthetic_job.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace tdiag::trace;

constexpr std::int64_t us = 1000;

std::vector<rank_trace> ranks_of(const synthetic_job& job) {
  std::vector<rank_trace> out;
  for (std::size_t r = 0; r < job.traces.size(); ++r)
    out.push_back({static_cast<int>(r), &job.traces[r], 0}); // base time: all clocks agree
  return out;
}

void expect_recovered(const synthetic_job& job, const job_analysis_result& r) {
  ASSERT_EQ(r.clock_offsets_ns.size(), job.traces.size());
  for (std::size_t i = 0; i < job.traces.size(); ++i) {
    EXPECT_LE(std::abs(r.clock_offsets_ns[i] - job.expected_offset_ns(i)), 2 * us)
        << "rank " << i << ": " << r.clock_offsets_ns[i] << " vs " << job.expected_offset_ns(i);
    EXPECT_EQ(r.clocks.ranks[i].offset_ns, r.clock_offsets_ns[i]);
  }
}

TEST(JobClocks, ShiftedClocksAreRecoveredFromTheCollectivesByDefault) {
  synthetic_job_options o;
  o.ranks = 8;
  o.tensor_parallel = 4; // ranks 5 and 0 share only the world all-reduce and their groups' links
  const auto job = make_synthetic_job(o);
  const auto r = analyze_job(ranks_of(job), {}, 1);
  EXPECT_EQ(r.clocks.requested, clock_alignment::automatic);
  EXPECT_EQ(r.clocks.used, clock_alignment::collectives);
  EXPECT_EQ(r.clocks.reference_rank, 0);
  expect_recovered(job, r);
  for (const auto& c : r.clocks.ranks) {
    ASSERT_TRUE(c.collective_offset_ns);
    EXPECT_GT(c.collectives, o.steps * o.layers);
    EXPECT_LE(c.median_abs_residual_us, 1.0); // the ends' jitter is +-0.3 us
    EXPECT_LE(c.max_abs_residual_us, 2.0);
  }
  // Kineto's base time says 0 for every rank: far more than the residual.
  ASSERT_EQ(r.clocks.warnings.size(), 1u);
  EXPECT_EQ(r.clocks.warnings[0].code, "TDIAG-TR-263");
  EXPECT_TRUE(r.unmatched_collectives.empty());
  // Every collective of the job is matched: 4 steps x (16 layers x 2 TP groups + 4 DP + world).
  EXPECT_EQ(r.collectives.size(), o.steps * (o.layers * 2 + 4 + 1));
}

TEST(JobClocks, SequenceNumbersAndMoreRanksAlignAsWell) {
  synthetic_job_options o;
  o.ranks = 16;
  o.tensor_parallel = 8;
  o.with_seq = true;
  o.layers = 6;
  o.seed = 7;
  const auto job = make_synthetic_job(o);
  const auto r = analyze_job(ranks_of(job), {}, 1);
  expect_recovered(job, r);
}

TEST(JobClocks, AnOutlierCollectiveDoesNotPullTheOffset) {
  synthetic_job_options o;
  o.ranks = 4;
  o.tensor_parallel = 2;
  o.max_clock_shift_ns = 3'000'000;
  auto job = make_synthetic_job(o);
  // Rank 3's NCCL kernels of one step end 400 us late (a slow link or a bad record): a mean
  // would move its offset by a tenth of that.
  int moved = 0;
  for (auto& k : job.traces[3].kernels.mutable_all())
    if (k.stream == 20 && moved < 8) {
      k.end += 400 * us;
      ++moved;
    }
  const auto r = analyze_job(ranks_of(job), {}, 1);
  expect_recovered(job, r);
  EXPECT_GE(r.clocks.ranks[3].max_abs_residual_us, 300);
  EXPECT_LE(r.clocks.ranks[3].median_abs_residual_us, 2);
}

TEST(JobClocks, BaseTimeAsAskedOrWithoutCollectives) {
  synthetic_job_options o;
  o.ranks = 4;
  o.tensor_parallel = 2;
  const auto job = make_synthetic_job(o);
  analysis_options base;
  base.align = clock_alignment::base_time;
  const auto r = analyze_job(ranks_of(job), base, 1);
  EXPECT_EQ(r.clocks.used, clock_alignment::base_time);
  EXPECT_EQ(r.clock_offsets_ns, (std::vector<std::int64_t>(4, 0)));
  // The collectives' offsets are still there to compare, with the warning.
  ASSERT_TRUE(r.clocks.ranks[2].collective_offset_ns);
  EXPECT_LE(std::abs(*r.clocks.ranks[2].collective_offset_ns - job.expected_offset_ns(2)), 2 * us);
  EXPECT_EQ(r.clocks.warnings.size(), 1u);

  // No communication kernel at all: the base time, silently.
  trace a, b;
  a.finalize();
  b.finalize();
  const std::vector<rank_trace> plain{{0, &a, 0}, {1, &b, 7 * us}};
  const auto p = analyze_job(plain, {}, 1);
  EXPECT_EQ(p.clocks.used, clock_alignment::base_time);
  EXPECT_EQ(p.clock_offsets_ns, (std::vector<std::int64_t>{0, 7 * us}));
  EXPECT_FALSE(p.clocks.ranks[1].collective_offset_ns);
  EXPECT_TRUE(p.clocks.warnings.empty());
}

// One rank of a synthetic job as the PyTorch profiler writes it: epoch-us timestamps (with ns
// fractions), cpu_op / cuda_runtime / kernel / user_annotation events, the kernels' process
// groups in their args, distributedInfo.
std::string kineto_json(const trace& t, int rank, int world, bool with_groups) {
  constexpr std::int64_t epoch_us = 1'700'000'000'000'000;
  auto ts = [&](std::int64_t ns) {
    const auto us_part = ns >= 0 ? ns / 1000 : -((-ns + 999) / 1000);
    return fmt::format("{}.{:03}", epoch_us + us_part, ns - us_part * 1000);
  };
  auto dur = [](std::int64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); };
  auto quoted = [](std::string_view s) { return fmt::format("\"{}\"", s); };
  std::string out = fmt::format("{{\"schemaVersion\": 1, \"distributedInfo\": {{\"backend\": "
                                "\"nccl\", \"rank\": {}, \"world_size\": {}}},\n"
                                "\"traceEvents\": [\n",
                                rank, world);
  const char* sep = "";
  for (const auto& a : t.api_calls.all()) {
    out += fmt::format("{}{{\"ph\": \"X\", \"cat\": {}, \"name\": {}, \"pid\": {}, \"tid\": {}, "
                       "\"ts\": {}, \"dur\": {}, \"args\": {{\"correlation\": {}}}}}",
                       sep, quoted(a.kind == api_kind::cpu_op ? "cpu_op" : "cuda_runtime"),
                       quoted(t.name(a.name)), a.process, a.thread, ts(a.start),
                       dur(a.end - a.start), a.correlation);
    sep = ",\n";
  }
  for (const auto& r : t.ranges.all())
    out += fmt::format(",\n{{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": {}, "
                       "\"pid\": {}, \"tid\": 1, \"ts\": {}, \"dur\": {}}}",
                       quoted(t.name(r.name)), 1000 + rank, ts(r.start), dur(r.end - r.start));
  for (const auto& k : t.kernels.all()) {
    std::string group;
    if (const auto* c = t.collective_of(k.correlation); c && with_groups)
      group = fmt::format(", \"Process Group Name\": {}, \"Process Group Ranks\": {}",
                          quoted(t.name(c->group)), quoted(t.name(c->group_ranks)));
    out += fmt::format(",\n{{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": {}, \"pid\": {}, "
                       "\"tid\": {}, \"ts\": {}, \"dur\": {}, \"args\": {{\"device\": {}, "
                       "\"stream\": {}, \"correlation\": {}{}}}}}",
                       quoted(t.name(k.name)), k.device, k.stream, ts(k.start),
                       dur(k.end - k.start), k.device, k.stream, k.correlation, group);
  }
  return out + "\n]}\n";
}

// The same job written as Kineto JSON, one file per rank, read back as a job: the clocks the
// files' own timestamps give (each rank off by up to +-5 ms) are replaced by the collectives',
// and the planted kernel is named.
TEST(JobClocks, KinetoFilesOfAShiftedJobAlignAndNameThePlantedKernel) {
  synthetic_job_options o;
  o.ranks = 8;
  o.tensor_parallel = 8;
  o.steps = 3;
  o.layers = 8;
  o.seed = 11;
  o.delays = {{5, 2, 3, planted_delay::kind::kernel, 1'500 * us}};
  const auto job = make_synthetic_job(o);
  // With process groups in the kernels' args (PyTorch 2.2+), and without (older traces: every
  // collective is the whole job's).
  for (const bool with_groups : {true, false}) {
    const auto dir =
        std::filesystem::temp_directory_path() /
        fmt::format("tdiag_job_clocks_{}_{}", static_cast<long>(::getpid()), with_groups);
    std::filesystem::create_directories(dir);
    for (std::size_t r = 0; r < job.traces.size(); ++r) {
      std::ofstream f(dir / fmt::format("rank-{}.json", r));
      f << kineto_json(job.traces[r], static_cast<int>(r), static_cast<int>(o.ranks), with_groups);
    }
    const std::vector<std::string> inputs{dir.string()};
    const auto loaded = load_job(inputs);
    std::filesystem::remove_all(dir);
    const auto r = analyze_job(rank_traces(loaded), {}, 1);
    EXPECT_EQ(r.clocks.used, clock_alignment::collectives);
    EXPECT_EQ(r.clocks.warnings.size(), 1u);
    for (std::size_t i = 0; i < job.traces.size(); ++i) {
      // Each file's axis starts at its first timestamp: the base time carries the shift.
      const auto expected = job.expected_offset_ns(i) + r.clocks.ranks[i].base_time_offset_ns;
      EXPECT_LE(std::abs(r.clock_offsets_ns[i] - expected), 2 * us) << i << " " << with_groups;
    }
    EXPECT_TRUE(r.unmatched_collectives.empty());
    const collective_wait* latest = nullptr;
    for (const auto& c : r.collectives)
      if (!latest || c.cause.late_us > latest->cause.late_us)
        latest = &c;
    ASSERT_TRUE(latest);
    EXPECT_EQ(latest->last_rank, 5);
    EXPECT_EQ(latest->step, 2);
    EXPECT_EQ(latest->cause.cause, late_cause::compute);
    ASSERT_FALSE(latest->cause.kernels.empty());
    EXPECT_EQ(latest->cause.kernels[0].name, "planted_slow_kernel");
  }
}

TEST(JobClocks, AlignmentNames) {
  EXPECT_EQ(clock_alignment_from_name("auto"), clock_alignment::automatic);
  EXPECT_EQ(clock_alignment_from_name("base-time"), clock_alignment::base_time);
  EXPECT_EQ(clock_alignment_from_name("collectives"), clock_alignment::collectives);
  EXPECT_FALSE(clock_alignment_from_name("clocks"));
  EXPECT_EQ(to_string(clock_alignment::automatic), "auto");
}

// HTA's two-rank sample (5 true collectives among 10 kernels a rank): shifting either rank's
// clock by milliseconds moves its offset by exactly that, and pairs the same collectives.
TEST(JobClocks, TheSharedTwoRankJobRealignsAfterShifts) {
  const auto dir = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "hta" / "two_ranks";
  if (!std::filesystem::exists(dir))
    GTEST_SKIP() << "shared data absent: " << dir;
  const std::vector<std::string> inputs{dir.string()};
  const auto job = load_job(inputs);
  const auto ranks = rank_traces(job);
  const auto plain = analyze_job(ranks, {}, 1);
  ASSERT_EQ(plain.collectives.size(), 5u);
  EXPECT_EQ(plain.clocks.used, clock_alignment::collectives);
  EXPECT_TRUE(plain.clocks.warnings.empty()); // the base time agrees within the residual
  for (const auto& [shift0, shift1] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {0, 3'000'000}, {0, -4'700'000}, {2'500'000, -1'000'000}}) {
    auto shifted = ranks;
    shifted[0].clock_offset_ns += shift0;
    shifted[1].clock_offset_ns += shift1;
    const auto r = analyze_job(shifted, {}, 1);
    // Own axes are unchanged: the same offsets, the same five collectives.
    EXPECT_EQ(r.clock_offsets_ns, plain.clock_offsets_ns) << shift0 << " " << shift1;
    ASSERT_EQ(r.collectives.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i)
      EXPECT_EQ(r.collectives[i].start_ns, plain.collectives[i].start_ns);
    EXPECT_EQ(r.clocks.warnings.size(), 1u);
  }
}

} // namespace
