// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag trace summary` against `tdiag trace leaks` (issue 36.5: summary no slower than leaks):
// loads FILE once, then runs what each command computes after the load, summarize() and
// find_leaks(), in turn N times in this process, and prints each one's median and best with
// the load's time, so that each whole command's time is the load plus its analysis. The peer is
// leaks, run beside summary in the same process on the same trace.
//
//   tdiag_bench_trace_analysis_bench FILE [--repeat N]     (N: 7 by default)
//   tdiag_bench_trace_analysis_bench --small               (a generated 20k-entry snapshot)
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

} // namespace

int main(int argc, char** argv) {
  std::filesystem::path path;
  int repeat = 7;
  bool small = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--small") == 0)
      small = true;
    else
      path = argv[i];
  }
  if (small) {
    path = std::filesystem::temp_directory_path() /
           fmt::format("tdiag_analysis_bench_{}.pickle", ::getpid());
    tdiag::trace::synthetic_file_options o;
    o.events = 20'000;
    (void)tdiag::trace::write_synthetic_snapshot(path, o);
    repeat = 3;
  }
  if (path.empty()) {
    fmt::print(stderr, "usage: tdiag_bench_trace_analysis_bench FILE [--repeat N] | --small\n");
    return 2;
  }
  const auto t0 = clock_type::now();
  const auto loaded = tdiag::trace::load_trace(path);
  const auto load_s = seconds_since(t0);
  const auto& t = loaded.trace;
  std::vector<double> summary_s, leaks_s;
  std::size_t lanes = 0, sites = 0;
  for (int run = 0; run < repeat; ++run) {
    auto t1 = clock_type::now();
    const auto s = tdiag::trace::summarize(t);
    summary_s.push_back(seconds_since(t1));
    t1 = clock_type::now();
    const auto l = tdiag::trace::find_leaks(t);
    leaks_s.push_back(seconds_since(t1));
    lanes = s.memory.size();
    sites = l.sites.size();
  }
  if (small)
    std::filesystem::remove(path);
  fmt::print("analysis_bench: {} ({} events, {} memory lanes, {} leak sites)\n",
             path.filename().string(), t.event_count(), lanes, sites);
  fmt::print("  load               {:.3f} s (once)\n", load_s);
  const auto ms = median(summary_s), ml = median(leaks_s);
  fmt::print("  summarize()        median {:.3f} s, best {:.3f} s of {}\n", ms,
             *std::min_element(summary_s.begin(), summary_s.end()), repeat);
  fmt::print("  peer: find_leaks() median {:.3f} s, best {:.3f} s of {}\n", ml,
             *std::min_element(leaks_s.begin(), leaks_s.end()), repeat);
  fmt::print("  summary / leaks    {:.2f}x the analysis, {:.2f}x the command (load + analysis)\n",
             ms / ml, (load_s + ms) / (load_s + ml));
  return 0;
}
