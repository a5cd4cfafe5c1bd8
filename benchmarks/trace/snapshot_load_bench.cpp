// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Loads a large PyTorch memory snapshot into the trace model on one thread and prints the time
// (target issue 8: a 1,000,000-event snapshot in <= 1 s) and peak memory; as the peer figure
// from the same run, the pickle reader alone (no model). Without an argument the snapshot is
// made once by write_synthetic_snapshot() (1,000,000 entries).
//
//   tdiag_bench_trace_snapshot_load_bench [FILE.pickle] [--repeat N]
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/pickle_reader.hpp>
#include <tensordiag/trace/snapshot_import.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/synthetic_files.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary | std::ios::ate);
  std::string bytes(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

} // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  fs::path path;
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else
      path = argv[i];
  }
  if (path.empty()) {
    path = fs::temp_directory_path() / "tdiag_snapshot_1m.pickle";
    if (!fs::exists(path)) {
      fmt::print("snapshot_load_bench: making {} (trace/synthetic_files.hpp)\n", path.string());
      (void)tdiag::trace::write_synthetic_snapshot(path, {});
    }
  }
  using clock = std::chrono::steady_clock;
  const auto file_bytes = fs::file_size(path);

  double best = 1e9, best_read = 1e9, best_pickle = 1e9, best_cpu = 1e9;
  std::size_t events = 0, segments = 0, stacks = 0, values = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = clock::now();
    const auto c0 = std::clock();
    auto bytes = read_all(path);
    const auto t1 = clock::now();
    auto result = tdiag::trace::import_snapshot(std::move(bytes), path.string());
    const auto t2 = clock::now();
    best_cpu = std::min(best_cpu, static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    best_read = std::min(best_read, std::chrono::duration<double>(t1 - t0).count());
    best = std::min(best, std::chrono::duration<double>(t2 - t0).count());
    events = result.trace.memory.size();
    segments = result.trace.final_allocator_state
                   ? result.trace.final_allocator_state->segments.size()
                   : 0;
    stacks = result.trace.stacks.stack_count();
  }
  const double rss = peak_rss_mib();
  for (int r = 0; r < repeat; ++r) {
    auto bytes = read_all(path);
    const auto t0 = clock::now();
    const auto doc = tdiag::trace::pickle_document::parse(std::move(bytes), path.string());
    best_pickle = std::min(best_pickle, std::chrono::duration<double>(clock::now() - t0).count());
    values = doc.value_count();
  }
  // Replay with keyframes (what `tdiag trace timeline` and the viewer build on top).
  auto result = tdiag::trace::import_snapshot(read_all(path), path.string());
  const auto t0 = clock::now();
  const auto s = tdiag::trace::summarize(result.trace);
  const double summary_s = std::chrono::duration<double>(clock::now() - t0).count();

  fmt::print("snapshot_load_bench: {} ({:.1f} MiB), best of {}\n", path.filename().string(),
             static_cast<double>(file_bytes) / (1024.0 * 1024.0), repeat);
  fmt::print("  memory events      {}\n  segments at dump   {}\n  distinct stacks    {}\n", events,
             segments, stacks);
  fmt::print("  read file          {:.3f} s\n", best_read);
  fmt::print("  load (read+import) {:.3f} s wall, {:.3f} s CPU  (target <= 1 s)\n", best, best_cpu);
  fmt::print("  peak RSS           {:.1f} MiB\n", rss);
  fmt::print("  peer: pickle reader alone {:.3f} s ({} values)\n", best_pickle, values);
  fmt::print(
      "  summary incl. backward derivation + keyframed replay: {:.3f} s (peak allocated {} B)\n",
      summary_s, s.memory.empty() ? -1 : s.memory[0].peak_allocated);
  return 0;
}
