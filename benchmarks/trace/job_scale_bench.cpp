// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The whole-job analyses at scale (issue 40): a generated job of 64 ranks x 1M events each
// (make_synthetic_job: tensor- and data-parallel training, every rank's clock off by up to
// +-5 ms, a kernel and a host gap planted on two ranks) analysed as `tdiag trace analyze
// --job-only` does: clocks from the collectives, stragglers with their causes, steps. Prints
// the wall and CPU time of the analysis and the peak resident memory of the process (the
// traces included), whether the offsets were recovered and the planted ranks named, then the
// same for HTA's two-rank sample with every analysis, and HTA's time where HTA is importable.
// Goal: <= 10 s and <= 8 GiB on the 2-core machine.
//
//   tdiag_bench_trace_job_scale_bench [--ranks N] [--events E] [--small]
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/job_load.hpp>
#include <tensordiag/trace/synthetic_job.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

using namespace tdiag::trace;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double peak_rss_gib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0); // KiB on Linux
}

// HTA's wall time for the same kind of analysis, where it is importable here.
void print_peer(const std::filesystem::path& two_ranks) {
  if (std::system("python3 -c 'import hta' >/dev/null 2>&1") != 0) {
    fmt::print("peer: HTA not installed\n");
    return;
  }
  const auto script = fmt::format(
      "python3 -c \"import time; from hta.trace_analysis import TraceAnalysis; "
      "t=time.perf_counter(); a=TraceAnalysis(trace_dir='{}'); l=time.perf_counter()-t; "
      "t=time.perf_counter(); a.get_temporal_breakdown(visualize=False); "
      "print(f'peer: HTA load {{l:.2f}} s, temporal breakdown {{time.perf_counter()-t:.2f}} s "
      "on the 2-rank job')\"",
      two_ranks.string());
  if (std::system(script.c_str()) != 0)
    fmt::print("peer: HTA importable but failed on {}\n", two_ranks.string());
}

} // namespace

int main(int argc, char** argv) {
  synthetic_job_options o;
  o.ranks = 64;
  o.tensor_parallel = 8;
  o.steps = 8;
  std::size_t events = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--small")) {
      o.ranks = 8;
      events = 20'000;
    } else if (!std::strcmp(argv[i], "--ranks") && i + 1 < argc) {
      o.ranks = static_cast<std::uint32_t>(std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--events") && i + 1 < argc) {
      events = static_cast<std::size_t>(std::atoll(argv[++i]));
    } else {
      fmt::print(stderr, "usage: {} [--ranks N] [--events E] [--small]\n", argv[0]);
      return 2;
    }
  }
  o.tensor_parallel = std::min(o.tensor_parallel, o.ranks);
  o.layers = layers_for_events(o, events);
  const int slow_rank = static_cast<int>(o.ranks) - 3, gap_rank = static_cast<int>(o.ranks / 2);
  o.delays = {{slow_rank, 3, o.layers / 2, planted_delay::kind::kernel, 3'000'000},
              {gap_rank, 5, 1, planted_delay::kind::host_gap, 4'000'000}};

  auto t0 = clock_type::now();
  const auto job = make_synthetic_job(o);
  std::size_t total = 0;
  for (const auto& t : job.traces)
    total += t.event_count();
  fmt::print("generated {} ranks x {:.2f}M events ({:.1f}M in all) in {:.1f} s; peak RSS so far "
             "{:.2f} GiB\n",
             o.ranks, static_cast<double>(total) / o.ranks / 1e6, static_cast<double>(total) / 1e6,
             seconds_since(t0), peak_rss_gib());

  std::vector<rank_trace> ranks;
  for (std::size_t r = 0; r < job.traces.size(); ++r)
    ranks.push_back({static_cast<int>(r), &job.traces[r], 0});
  analysis_options options;
  options.rank_analyses = false;
  const auto c0 = std::clock();
  t0 = clock_type::now();
  const auto result = analyze_job(ranks, options);
  const double wall = seconds_since(t0);
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;

  std::int64_t worst = 0;
  for (std::size_t r = 0; r < job.traces.size(); ++r)
    worst = std::max(worst, std::abs(result.clock_offsets_ns[r] - job.expected_offset_ns(r)));
  bool slow_named = false, gap_named = false;
  for (const auto& c : result.collectives) {
    slow_named = slow_named ||
                 (c.last_rank == slow_rank && c.step == 3 && c.cause.cause == late_cause::compute &&
                  !c.cause.kernels.empty() && c.cause.kernels[0].name == "planted_slow_kernel");
    gap_named = gap_named ||
                (c.last_rank == gap_rank && c.step == 5 && c.cause.cause == late_cause::host_gap);
  }
  fmt::print("tensordiag: {} ranks, {} collectives matched ({} unmatched): clocks, stragglers "
             "with causes, steps in {:.2f} s wall, {:.2f} s CPU; peak RSS {:.2f} GiB\n",
             o.ranks, result.collectives.size(), result.unmatched_collectives.size(), wall, cpu,
             peak_rss_gib());
  fmt::print("  clocks from the {}: worst offset error {:.3f} us over ranks shifted by up to "
             "+-5 ms; planted kernel on rank {} named: {}; planted host gap on rank {} named: {}\n",
             to_string(result.clocks.used), static_cast<double>(worst) / 1e3, slow_rank,
             slow_named ? "yes" : "NO", gap_rank, gap_named ? "yes" : "NO");

  const auto two_ranks = std::filesystem::path(TDIAG_SHARED_DIR) / "traces" / "hta" / "two_ranks";
  if (std::filesystem::exists(two_ranks)) {
    t0 = clock_type::now();
    const std::vector<std::string> inputs{two_ranks.string()};
    const auto members = load_job(inputs);
    const auto small = analyze_job(rank_traces(members));
    fmt::print("tensordiag: HTA's 2-rank job, load and every analysis in {:.3f} s ({} "
               "collectives, clocks from the {})\n",
               seconds_since(t0), small.collectives.size(), to_string(small.clocks.used));
  }
  print_peer(two_ranks);
  return worst <= 2000 && slow_named && gap_named ? 0 : 1;
}
