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
// --repeat N runs both N times, in turn, each load in a fresh process of its own (this program
// again, with --once): on a virtual machine the same load took 0.11 s or 0.19 s as the host
// had the fresh pages it asked for at hand or not, and the peer varied by 10%. Each run is
// printed, then the best and the median of each side and their ratios.
//
//   tdiag_bench_trace_scale_bench FILE [--no-peer] [--repeat N] [--python /usr/bin/python3]
#include <tensordiag/trace/load.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <spawn.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <tuple>
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

// Runs args[0] with `args`, its standard output to `out`, and waits: 0, or posix_spawn's error.
int run_to_file(std::vector<std::string> args, const std::string& out, int& status, rusage& u) {
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (err == 0)
    ::wait4(pid, &status, 0, &u);
  return err;
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
  int status = 0;
  rusage u{};
  if (const int err = run_to_file({python, "-c", code, path.string()}, out, status, u); err != 0) {
    fmt::print("  peer: cannot run {}: {}\n", python, std::strerror(err));
    return false;
  }
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

// One load in this process: its figures, on one line for --repeat's parent.
struct load_figures {
  double wall = 0, cpu = 0, before_kib = 0, now_kib = 0, peak_kib = 0;
  std::size_t events = 0;
  std::string format;
};

load_figures load_once(const std::filesystem::path& path) {
  load_figures f;
  f.before_kib = rss_kib().first;
  const auto c0 = std::clock();
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = tdiag::trace::load_trace(path);
  f.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  f.cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  std::tie(f.now_kib, f.peak_kib) = rss_kib();
  f.events = r.trace.event_count();
  f.format = r.trace.metadata.format;
  return f;
}

// Runs this program with --once in a child; false (after saying why) when it fails.
bool load_in_child(const std::filesystem::path& path, load_figures& f) {
  const std::string out =
      (std::filesystem::temp_directory_path() / fmt::format("tdiag_scale_once_{}.txt", ::getpid()))
          .string();
  int status = 0;
  rusage u{};
  const int err = run_to_file({"/proc/self/exe", "--once", path.string()}, out, status, u);
  std::ifstream in(out);
  in >> f.wall >> f.cpu >> f.before_kib >> f.now_kib >> f.peak_kib >> f.events >> f.format;
  std::filesystem::remove(out);
  if (err != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !in) {
    fmt::print("  load in a child failed ({})\n", err != 0 ? std::strerror(err) : "its status");
    return false;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

void print_load(const load_figures& f) {
  const auto events = static_cast<double>(std::max<std::size_t>(f.events, 1));
  fmt::print("  tensordiag load    {:.3f} s wall, {:.3f} s CPU, {:.0f} ns/event\n", f.wall, f.cpu,
             1e9 * f.wall / events);
  fmt::print("  peak RSS           {:.1f} MiB ({:.1f} B/event above the {:.1f} MiB at start; "
             "{:.1f} MiB held after)\n",
             mib(f.peak_kib), 1024.0 * (f.peak_kib - f.before_kib) / events, mib(f.before_kib),
             mib(f.now_kib));
}

} // namespace

int main(int argc, char** argv) {
  std::filesystem::path path;
  std::string python = "/usr/bin/python3";
  bool peer = true, once = false;
  int repeat = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--no-peer") == 0)
      peer = false;
    else if (std::strcmp(argv[i], "--once") == 0)
      once = true;
    else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--python") == 0 && i + 1 < argc)
      python = argv[++i];
    else
      path = argv[i];
  }
  if (path.empty()) {
    fmt::print(stderr, "usage: tdiag_bench_trace_scale_bench FILE [--no-peer] [--repeat N] "
                       "[--python PY]\n");
    return 2;
  }
  warm(path);
  if (once) {
    const auto f = load_once(path);
    fmt::print("{} {} {} {} {} {} {}\n", f.wall, f.cpu, f.before_kib, f.now_kib, f.peak_kib,
               f.events, f.format.empty() ? "-" : f.format);
    return 0;
  }
  const auto file_bytes = std::filesystem::file_size(path);
  std::vector<double> ours, theirs;
  for (int run = 0; run < repeat; ++run) {
    load_figures f;
    if (repeat == 1)
      f = load_once(path);
    else if (!load_in_child(path, f))
      return 1;
    if (run == 0) {
      fmt::print("scale_bench: {} ({:.1f} MiB, {})\n", path.filename().string(),
                 static_cast<double>(file_bytes) / (1 << 20), f.format);
      fmt::print("  events             {}\n", f.events);
    }
    if (repeat > 1)
      fmt::print("  run {}\n", run + 1);
    print_load(f);
    ours.push_back(f.wall);
    if (!peer) {
      fmt::print("  peer: skipped (--no-peer)\n");
      continue;
    }
    double seconds = 0, peer_cpu = 0, peer_kib = 0;
    if (!run_peer(python, path, seconds, peer_cpu, peer_kib))
      return 0;
    fmt::print(
        "  peer: {} {:.3f} s wall (process CPU incl. start-up {:.3f} s), peak RSS {:.1f} MiB\n",
        is_pickle(path) ? "pickle.load" : "json.load", seconds, peer_cpu, mib(peer_kib));
    fmt::print("  ratio              {:.1f}x faster (wall), {:.2f}x the peer's memory\n",
               seconds / f.wall, f.peak_kib / peer_kib);
    theirs.push_back(seconds);
  }
  if (repeat == 1)
    return 0;
  const auto best = *std::min_element(ours.begin(), ours.end());
  fmt::print("  of {} runs: tensordiag best {:.3f} s, median {:.3f} s\n", repeat, best,
             median(ours));
  if (theirs.empty())
    return 0;
  const auto peer_best = *std::min_element(theirs.begin(), theirs.end());
  fmt::print("  of {} runs: peer best {:.3f} s, median {:.3f} s\n", repeat, peer_best,
             median(theirs));
  fmt::print("  ratio              {:.1f}x faster (best against best), {:.1f}x (median against "
             "median)\n",
             peer_best / best, median(theirs) / median(ours));
  return 0;
}
