// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Chrome trace export figures: events/s and MB/s of write_chrome_trace on a synthetic trace
// (kernels, launch calls, flows, copies, allocations), in CPU seconds (wall time is unreliable on
// a shared machine). Peer: one fwrite of the same bytes, the I/O floor the writer sits on.
// `--small` runs a quick version (for CTest smoke runs).
#include <tensordiag/trace/chrome_export.hpp>
#include <tensordiag/trace/synthetic.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

} // namespace

int main(int argc, char** argv) {
  using namespace tdiag::trace;
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const std::size_t kernels = small ? 20'000 : 400'000;
  const int rounds = small ? 1 : 5;
  const trace t = make_synthetic_trace({.kernels = kernels});
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("tdiag_chrome_bench_{}.json", static_cast<long>(::getpid()));

  std::vector<double> export_s;
  chrome_export_stats stats;
  for (int i = 0; i < rounds; ++i) {
    const double t0 = cpu_seconds();
    stats = write_chrome_trace(t, path);
    export_s.push_back(cpu_seconds() - t0);
  }
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<double> fwrite_s;
  for (int i = 0; i < rounds; ++i) {
    const double t0 = cpu_seconds();
    std::FILE* out = std::fopen(path.c_str(), "wb");
    if (out == nullptr || std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
      return 1;
    std::fclose(out);
    fwrite_s.push_back(cpu_seconds() - t0);
  }
  std::filesystem::remove(path);
  std::sort(export_s.begin(), export_s.end());
  std::sort(fwrite_s.begin(), fwrite_s.end());
  const double e = export_s[export_s.size() / 2];
  const double w = fwrite_s[fwrite_s.size() / 2];
  const double mb = static_cast<double>(bytes.size()) / 1e6;
  fmt::print("chrome export: {} trace events, {:.1f} MB, median of {}: {:.3f} s CPU, "
             "{:.2f} M events/s, {:.0f} MB/s\n",
             stats.trace_events(), mb, rounds, e,
             static_cast<double>(stats.trace_events()) / e / 1e6, mb / e);
  fmt::print("peer: one fwrite of the same bytes: {:.3f} s CPU, {:.0f} MB/s\n", w, mb / w);
  return 0;
}
