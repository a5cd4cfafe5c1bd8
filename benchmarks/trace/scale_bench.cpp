// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// One point of the scaling curve (issue 22): loads FILE (a PyTorch snapshot pickle or a Kineto
// JSON, made by tdiag_gen_traces) with load_trace() and prints events, wall and CPU time, peak
// resident memory and resident bytes per event; then, as the peer figure from the same run,
// Python's pickle.load / json.load of the same file in a child process (its own time and peak
// RSS). The file is read once before either, unmeasured, so both find it in the page cache.
// --no-peer skips the peer (at 100M events it does not fit in 24 GiB).
//
//   tdiag_bench_trace_scale_bench FILE [--no-peer] [--python /usr/bin/python3]
#include <tensordiag/trace/load.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace {

double mib(double kib) {
  return kib / 1024.0;
}

// Resident KiB of this process now (VmRSS) and at its peak (VmHWM).
std::pair<double, double> rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  double now = 0, peak = 0;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      now = std::stod(line.substr(6));
    if (line.rfind("VmHWM:", 0) == 0)
      peak = std::stod(line.substr(6));
  }
  return {now, peak};
}

bool is_pickle(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return in.get() == 0x80;
}

// Reads the file once, unmeasured, so that both loads start from the same page cache: the first
// read of a file not read for a while took 0.18 s for 116 MiB here, the next 0.05 s, and the
// peer always ran second. Without heap allocations (its buffer is on the stack), so the peak RSS
// measured after it is the load's.
void warm(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return; // load_trace says why
  char buffer[1 << 16];
  while (::read(fd, buffer, sizeof buffer) > 0) {
  }
  ::close(fd);
}

// Runs the Python peer; returns false (after saying why) when it cannot run.
bool run_peer(const std::string& python, const std::filesystem::path& path, double& seconds,
              double& cpu_seconds, double& peak_kib) {
  const std::string code =
      is_pickle(path)
          ? "import pickle,sys,time\nt=time.perf_counter()\nwith open(sys.argv[1],'rb') as f: "
            "pickle.load(f)\nprint(time.perf_counter()-t)"
          : "import gzip,json,sys,time\nt=time.perf_counter()\nop=gzip.open if "
            "sys.argv[1].endswith('.gz') else open\nwith op(sys.argv[1],'rb') as f: "
            "json.load(f)\nprint(time.perf_counter()-t)";
  const std::string out =
      (std::filesystem::temp_directory_path() / fmt::format("tdiag_scale_peer_{}.txt", ::getpid()))
          .string();
  std::vector<std::string> args = {python, "-c", code, path.string()};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, python.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err != 0) {
    fmt::print("  peer: cannot run {}: {}\n", python, std::strerror(err));
    return false;
  }
  int status = 0;
  rusage u{};
  ::wait4(pid, &status, 0, &u);
  std::ifstream in(out);
  seconds = -1;
  in >> seconds;
  std::filesystem::remove(out);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || seconds < 0) {
    fmt::print("  peer: {} failed (status {}; out of memory?)\n", python, status);
    return false;
  }
  peak_kib = static_cast<double>(u.ru_maxrss);
  cpu_seconds = static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
                1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  return true;
}

} // namespace

int main(int argc, char** argv) {
  std::filesystem::path path;
  std::string python = "/usr/bin/python3";
  bool peer = true;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-peer") == 0)
      peer = false;
    else if (std::strcmp(argv[i], "--python") == 0 && i + 1 < argc)
      python = argv[++i];
    else
      path = argv[i];
  }
  if (path.empty()) {
    fmt::print(stderr, "usage: tdiag_bench_trace_scale_bench FILE [--no-peer] [--python PY]\n");
    return 2;
  }
  warm(path);
  const auto before = rss_kib().first;
  const auto c0 = std::clock();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = tdiag::trace::load_trace(path);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  const auto [now, peak] = rss_kib();
  const auto events = r.trace.event_count();
  const auto file_bytes = std::filesystem::file_size(path);
  fmt::print("scale_bench: {} ({:.1f} MiB, {})\n", path.filename().string(),
             static_cast<double>(file_bytes) / (1 << 20), r.trace.metadata.format);
  fmt::print("  events             {}\n", events);
  fmt::print("  tensordiag load    {:.3f} s wall, {:.3f} s CPU, {:.0f} ns/event\n", wall, cpu,
             1e9 * wall / static_cast<double>(std::max<std::size_t>(events, 1)));
  fmt::print("  peak RSS           {:.1f} MiB ({:.1f} B/event above the {:.1f} MiB at start; "
             "{:.1f} MiB held after)\n",
             mib(peak),
             1024.0 * (peak - before) / static_cast<double>(std::max<std::size_t>(events, 1)),
             mib(before), mib(now));
  if (!peer) {
    fmt::print("  peer: skipped (--no-peer)\n");
    return 0;
  }
  double seconds = 0, peer_cpu = 0, peer_kib = 0;
  if (!run_peer(python, path, seconds, peer_cpu, peer_kib))
    return 0;
  fmt::print(
      "  peer: {} {:.3f} s wall (process CPU incl. start-up {:.3f} s), peak RSS {:.1f} MiB\n",
      is_pickle(path) ? "pickle.load" : "json.load", seconds, peer_cpu, mib(peer_kib));
  fmt::print("  ratio              {:.1f}x faster (wall), {:.2f}x the peer's memory\n",
             seconds / wall, peak / peer_kib);
  return 0;
}
