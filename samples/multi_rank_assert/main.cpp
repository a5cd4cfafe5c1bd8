// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Device assertions on several ranks at once, one process per rank (as torchrun starts them):
// every rank's gather reads one out-of-range index at a place of its own, each rank's report
// names its rank and device and goes to DIR/rank<r>.json, and `tdiag report merge DIR/rank*.json`
// makes one report of them. On the CPU back-end (main.cpp) the ranks share the host; built by
// nvcc (main.cu) rank r runs on GPU r mod the number of GPUs.
// Usage: multi_rank_assert [--ranks N] [--out DIR] (each rank runs as `--rank r`). Exit 0 when
// every rank reported exactly its own failure.
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>
#include <tensordiag/core/report_io.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "../gather_index_check/gather_kernel.h"
#include "../gather_index_check/sample_array.h"

extern char** environ;

namespace {

constexpr int table_size = 1000, threads = 256, blocks = 64, n = threads * blocks;

// Where rank r's bad index sits and what it holds: both tell the ranks apart in the reports.
int bad_position(int rank) {
  return 997 * rank + 7;
}
int bad_value(int rank) {
  return table_size + rank;
}

std::int64_t int_field(const tdiag::diagnostic& d, const char* name) {
  for (const auto& f : d.fields)
    if (f.name == name)
      if (const auto* v = std::get_if<std::int64_t>(&f.value.value))
        return *v;
  return -1;
}

int run_rank(int rank, const std::filesystem::path& out) {
  setenv("TDIAG_RANK", std::to_string(rank).c_str(), 1); // reports carry it (report metadata)
#if defined(__CUDACC__)
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
    return 2;
  cudaSetDevice(rank % devices);
#endif
  sample_array<float> table(table_size, 1.f), y(n, 0.f);
  sample_array<int> idx(n);
  for (int i = 0; i < n; ++i)
    idx[i] = i % table_size;
  idx[bad_position(rank)] = bad_value(rank);
  try {
    TDIAG_LAUNCH(gather_kernel<float>, blocks, threads, 0, nullptr, table.data(), table_size,
                 idx.data(), y.data(), n);
    tdiag::synchronize_and_check();
    std::fprintf(stderr, "rank %d: no failure reported\n", rank);
    return 1;
  } catch (const tdiag::device_assertion_error& e) {
    const tdiag::report& r = e.report();
    tdiag::write_text_file(out / ("rank" + std::to_string(rank) + ".json"), tdiag::to_json(r));
    const bool one = r.diagnostics.size() == 1;
    const auto& d = r.diagnostics.front();
    const bool right = one && r.metadata.rank == rank && r.metadata.device.has_value() &&
                       int_field(d, "value j") == bad_value(rank) &&
                       int_field(d, "total_failures") == 1;
    std::printf("rank %d on device %lld: %s\n", rank,
                static_cast<long long>(r.metadata.device.value_or(-1)), d.message.c_str());
    return right ? 0 : 1;
  }
}

} // namespace

int main(int argc, char** argv) {
  int ranks = 4, rank = -1;
  std::filesystem::path out = "multi_rank_reports";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      ranks = std::atoi(argv[++i]);
    else if (a == "--rank" && i + 1 < argc)
      rank = std::atoi(argv[++i]);
    else if (a == "--out" && i + 1 < argc)
      out = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--ranks N] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  if (rank >= 0) { // one rank, started by the launcher below
    try {
      return run_rank(rank, out);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
      return 2;
    }
  }
  if (ranks < 1)
    return 2;
  std::filesystem::create_directories(out);
  for (int r = 0; r < 1024; ++r) // reports of an earlier run must not join this one's
    std::filesystem::remove(out / ("rank" + std::to_string(r) + ".json"));
  std::fflush(stdout);
  // The launcher: one fresh process per rank, as torchrun or mpirun start them (a forked copy of
  // a process that loaded the GPU driver may not use the GPU).
  std::vector<pid_t> children;
  for (int r = 0; r < ranks; ++r) {
    std::string rank_arg = std::to_string(r), out_arg = out.string();
    char* child_argv[] = {argv[0],         const_cast<char*>("--rank"),
                          rank_arg.data(), const_cast<char*>("--out"),
                          out_arg.data(),  nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, child_argv, environ) != 0) {
      std::perror("posix_spawn");
      return 2;
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (int r = 0; r < ranks; ++r) {
    int status = 0;
    waitpid(children[r], &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "rank %d did not report exactly its own failure\n", r);
      ++failed;
    }
  }
  std::printf("%d of %d ranks reported their own failure; merge them with: tdiag report merge "
              "%s/rank*.json\n",
              ranks - failed, ranks, out.c_str());
  return failed == 0 ? 0 : 1;
}
