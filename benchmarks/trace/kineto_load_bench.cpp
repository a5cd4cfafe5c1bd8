// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Loads a Kineto trace (default: the shared train_trace_large.json.gz, 89 MB of JSON) into the
// trace model on one thread and prints the time per phase and the peak resident memory; then,
// as the peer figure from the same run, a raw simdjson scan of the same JSON bytes.
// Targets (issue 8): load <= 0.5 s, peak memory <= 2x the JSON size.
//
//   tdiag_bench_trace_kineto_load_bench [FILE] [--repeat N]
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <vector>

namespace {

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0; // ru_maxrss is KiB on Linux
}

double current_rss_mib() {
  std::ifstream in("/proc/self/statm");
  long pages_total = 0, pages_resident = 0;
  in >> pages_total >> pages_resident;
  return static_cast<double>(pages_resident) * 4096.0 / (1024.0 * 1024.0);
}

std::vector<std::byte> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  std::vector<std::byte> bytes(static_cast<std::size_t>(in.tellg()));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return bytes;
}

} // namespace

int main(int argc, char** argv) {
  std::filesystem::path path = TDIAG_SHARED_DIR "/traces/train_trace_large.json.gz";
  int repeat = 3;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else
      path = argv[i];
  }
  if (!std::filesystem::exists(path)) {
    fmt::print("kineto_load_bench: {} not found; skipped\n", path.string());
    return 0;
  }
  const auto bytes = read_file(path);
  const double rss_before = current_rss_mib();
  using clock = std::chrono::steady_clock;

  double best = 1e9, best_cpu = 1e9;
  tdiag::trace::kineto_stats best_stats;
  std::size_t kernels = 0, events = 0;
  for (int r = 0; r < repeat; ++r) {
    tdiag::trace::kineto_stats stats;
    const auto t0 = clock::now();
    const auto c0 = std::clock();
    auto result = tdiag::trace::import_kineto(bytes, path.string(), {}, &stats);
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    best_cpu = std::min(best_cpu, static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
    kernels = result.trace.kernels.size();
    events = result.trace.event_count();
    if (s < best) {
      best = s;
      best_stats = stats;
    }
  }
  const double rss_peak = peak_rss_mib();
  const double json_mib = static_cast<double>(best_stats.json_bytes) / (1024.0 * 1024.0);

  // Peer: inflate again, then a raw simdjson On Demand scan counting the events.
  std::string inflated(bytes.size() * 8, '\0');
  std::size_t inflated_size = 0;
  tdiag::trace::detail::gzip_stream stream(bytes, path.string());
  while (const auto n =
             stream.read(inflated.data() + inflated_size, inflated.size() - inflated_size)) {
    inflated_size += n;
    if (inflated_size == inflated.size())
      inflated.resize(inflated.size() * 2);
  }
  const simdjson::padded_string text(inflated.data(), inflated_size);
  double scan_best = 1e9, dom_best = 1e9;
  std::size_t scanned = 0;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = clock::now();
    simdjson::ondemand::parser parser;
    auto doc = parser.iterate(text);
    scanned = 0;
    for (auto ev : doc["traceEvents"].get_array()) {
      (void)ev;
      ++scanned;
    }
    scan_best = std::min(scan_best, std::chrono::duration<double>(clock::now() - t0).count());
    const auto t1 = clock::now();
    simdjson::dom::parser dom;
    simdjson::dom::element root;
    if (dom.parse(text).get(root) == simdjson::SUCCESS)
      dom_best = std::min(dom_best, std::chrono::duration<double>(clock::now() - t1).count());
  }

  fmt::print("kineto_load_bench: {} ({:.1f} MiB gzip, {:.1f} MiB JSON), best of {}\n",
             path.filename().string(), static_cast<double>(bytes.size()) / (1024.0 * 1024.0),
             json_mib, repeat);
  fmt::print("  events read        {}\n  kernels            {}\n  model events       {}\n",
             best_stats.events, kernels, events);
  fmt::print("  inflate            {:.3f} s\n", best_stats.inflate_seconds);
  fmt::print("  parse+build        {:.3f} s  (of which raw parse ~{:.3f} s, build ~{:.3f} s)\n",
             best_stats.parse_seconds, scan_best,
             std::max(0.0, best_stats.parse_seconds - scan_best));
  fmt::print("  finalize (sort)    {:.3f} s\n", best_stats.finalize_seconds);
  fmt::print("  total load         {:.3f} s wall, {:.3f} s CPU  (target <= 0.5 s)\n", best,
             best_cpu);
  fmt::print("  peak RSS           {:.1f} MiB ({:.1f} MiB before loading; {:.2f}x the JSON size; "
             "target <= 2x)\n",
             rss_peak, rss_before, rss_peak / json_mib);
  fmt::print("  peer: simdjson On Demand scan of the same JSON: {:.3f} s ({} events), DOM parse "
             "{:.3f} s ({} "
             "implementation)\n",
             scan_best, scanned, dom_best, simdjson::get_active_implementation()->name());
  return 0;
}
