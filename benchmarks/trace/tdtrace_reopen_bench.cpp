// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reopen time and peak RSS of a converted .tdtrace (issue 22.1), each in its own child process
// so every peak is its own: the source's load_trace() (the peer figure), the same trace written
// as zstd chunks and as a row image, each reopened with load_trace(), and the summary analysis
// on the reopened row image (what `tdiag trace summary` adds to the load). Without FILE a
// synthetic 1,000,000-entry snapshot is made (trace/synthetic_files.hpp); --small makes 20,000.
//
//   tdiag_bench_trace_tdtrace_reopen_bench [FILE] [--small] [--dir DIR] [--repeat N]
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/synthetic_files.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using tdiag::trace::load_trace;

struct measured {
  double seconds = 0;
  double rss_mib = 0;
};

// Runs `work` (returning seconds) in a child; the best time of `repeat` runs and the peak RSS.
measured in_child(int repeat, const std::function<double()>& work) {
  measured best{1e30, 0};
  for (int r = 0; r < repeat; ++r) {
    int pipe_fd[2];
    if (::pipe(pipe_fd) != 0)
      std::exit(1);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(pipe_fd[0]);
      double s = -1;
      try {
        s = work();
      } catch (const std::exception& e) {
        fmt::print(stderr, "tdtrace_reopen_bench: {}\n", e.what());
      }
      (void)!::write(pipe_fd[1], &s, sizeof s);
      ::_exit(s < 0 ? 1 : 0);
    }
    ::close(pipe_fd[1]);
    double s = -1;
    (void)!::read(pipe_fd[0], &s, sizeof s);
    ::close(pipe_fd[0]);
    int status = 0;
    rusage u{};
    ::wait4(pid, &status, 0, &u);
    if (s < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
      std::exit(1);
    best.seconds = std::min(best.seconds, s);
    best.rss_mib = std::max(best.rss_mib, static_cast<double>(u.ru_maxrss) / 1024.0);
  }
  return best;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double timed_load(const fs::path& p) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto loaded = load_trace(p);
  const double s = seconds_since(t0);
  if (loaded.trace.event_count() == 0)
    throw std::runtime_error(p.string() + " loaded no events");
  return s;
}

void convert(const fs::path& from, const fs::path& to, tdiag::trace::tdtrace_layout layout) {
  (void)in_child(1, [&] {
    const auto loaded = load_trace(from);
    const auto t0 = std::chrono::steady_clock::now();
    tdiag::trace::tdtrace_writer_options o;
    o.layout = layout;
    tdiag::trace::write_tdtrace(to, loaded.trace, o);
    return seconds_since(t0);
  });
}

} // namespace

int main(int argc, char** argv) {
  fs::path source;
  fs::path dir = fs::temp_directory_path();
  int repeat = 3;
  std::uint64_t events = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0)
      events = 20'000, repeat = 1;
    else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
      dir = argv[++i];
    else
      source = argv[i];
  }
  if (source.empty()) {
    source = dir / fmt::format("tdiag_reopen_{}.pickle", events);
    if (!fs::exists(source))
      (void)tdiag::trace::write_synthetic_snapshot(source, {.events = events});
  }
  const fs::path chunks = dir / (source.stem().string() + ".chunks.tdtrace");
  const fs::path image = dir / (source.stem().string() + ".image.tdtrace");
  convert(source, chunks, tdiag::trace::tdtrace_layout::chunks);
  convert(source, image, tdiag::trace::tdtrace_layout::row_image);

  const measured src = in_child(repeat, [&] { return timed_load(source); });
  const measured chk = in_child(repeat, [&] { return timed_load(chunks); });
  const measured img = in_child(repeat, [&] { return timed_load(image); });
  const measured sum = in_child(repeat, [&] {
    const auto loaded = load_trace(image);
    const auto t0 = std::chrono::steady_clock::now();
    const auto s = tdiag::trace::summarize(loaded.trace);
    (void)s;
    return seconds_since(t0);
  });
  auto mib = [](const fs::path& p) { return static_cast<double>(fs::file_size(p)) / 1048576.0; };
  fmt::print("tdtrace_reopen_bench: {} ({:.1f} MiB), best of {}, peak RSS per child\n",
             source.filename().string(), mib(source), repeat);
  fmt::print("  peer: load_trace(source)        {:8.3f} s  {:8.1f} MiB\n", src.seconds,
             src.rss_mib);
  fmt::print("  reopen .tdtrace chunks          {:8.3f} s  {:8.1f} MiB  (file {:.1f} MiB)\n",
             chk.seconds, chk.rss_mib, mib(chunks));
  fmt::print(
      "  reopen .tdtrace row image       {:8.3f} s  {:8.1f} MiB  (file {:.1f} MiB, mapped)\n",
      img.seconds, img.rss_mib, mib(image));
  fmt::print("  summary analysis on the image   {:8.3f} s  {:8.1f} MiB  (load excluded)\n",
             sum.seconds, sum.rss_mib);
  fmt::print("  row image reopen vs source load: {:.0f}x faster\n", src.seconds / img.seconds);
  if (argc == 1 || events == 20'000)
    fs::remove(chunks), fs::remove(image);
  return 0;
}
