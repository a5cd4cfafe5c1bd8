// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Flight Recorder analysis speed (issue 37). Default: a job of 10,000 ranks x 2,000 entries
// generated in memory (one world group and one group per 8 ranks; rank 4321 stuck on its host
// one collective short), analysed; prints the time and checks the verdict names rank 4321 only.
// Goal: <= 10 s on a 2-core machine. With --p2p, a job of point-to-point calls instead (64 ranks
// x 2,000 sends and recvs around a ring by default, every call in flight, rank 16 one recv
// short): the pairing of sends and recvs, which names rank 16 only. With --dir, loads and
// analyses real dump files instead and prints a peer's time beside ours: --peer-seconds S, or
// the figure printed by benchmarks/python/fr_trace_peer.py (PyTorch's fr_trace on the same
// folder).
//
//   tdiag_bench_trace_fr_bench [--p2p] [--ranks N] [--entries K] [--small]
//   tdiag_bench_trace_fr_bench --dir DUMPS [--peer-seconds S]
#include <tensordiag/trace/flight_recorder.hpp>

#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fr = tdiag::trace::fr;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// A generated rank's dump, before its groups and entries; `all` the job's ranks.
fr::dump generated_rank(int rank, int ranks, std::vector<int>& all) {
  fr::dump d;
  d.rank = rank;
  d.source = fmt::format("<generated rank {}>", rank);
  d.version = "2.10";
  all.resize(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    all[static_cast<std::size_t>(r)] = r;
  return d;
}

// One rank's dump: `entries` collectives alternating between its group of 8 and the world
// group, all completed but the last (a world all_reduce the others wait in); the stuck rank
// stops one collective short, before that all_reduce.
fr::dump make_rank(int rank, int ranks, int entries, int stuck) {
  std::vector<int> all;
  fr::dump d = generated_rank(rank, ranks, all);
  const int base = rank / 8 * 8;
  std::vector<int> local;
  for (int r = base; r < std::min(base + 8, ranks); ++r)
    local.push_back(r);
  d.groups = {{"0", "default_pg", std::move(all)},
              {fmt::format("tp{}", base / 8), "tp", std::move(local)}};
  d.ops = {"nccl:all_reduce", "nccl:_all_gather_base"};
  d.shapes = {{{{1024, 1024}}, {{1024, 1024}}, {"Float"}, {"Float"}},
              {{{1024}}, {{8192}}, {"BFloat16"}, {"BFloat16"}}};
  d.stacks.push_back({{"all_reduce", "torch/distributed/distributed_c10d.py", 2696},
                      {"train_step", "train.py", 42}});
  const int total = rank == stuck ? entries - 1 : entries;
  d.entries.reserve(static_cast<std::size_t>(total));
  std::int64_t seq[2] = {0, 0};
  for (int i = 0; i < total; ++i) {
    fr::entry e;
    const int g = (i + 1) % 2;
    e.record_id = i;
    e.group = static_cast<std::uint32_t>(g);
    e.pg_id = g;
    e.op = static_cast<std::uint32_t>(g);
    e.shapes = static_cast<std::uint32_t>(g);
    e.stack = 1;
    e.collective_seq_id = ++seq[g];
    e.time_created_ns = 1'000'000'000LL + i * 1'000'000LL;
    const bool last_world = i == entries - 1;
    e.state = last_world ? fr::entry_state::started : fr::entry_state::completed;
    e.time_started_ns = e.time_created_ns + 10;
    e.time_completed_ns = last_world ? -1 : e.time_created_ns + 100;
    d.entries.push_back(e);
  }
  return d;
}

// One rank's dump of point-to-point calls around a ring of `ranks` (even) in the world group:
// an even rank sends to the next (p2p #1, #3, ...) then receives from the previous (#2, #4,
// ...), an odd one receives first; a send and its recv share their number. Every call is in
// flight (batched isend/irecv: the most pairing work) but on `holder`, whose calls completed
// and which never posts its last recv: the previous rank's last send has no match.
fr::dump make_p2p_rank(int rank, int ranks, int entries, int holder) {
  std::vector<int> all;
  fr::dump d = generated_rank(rank, ranks, all);
  d.groups = {{"0", "default_pg", std::move(all)}};
  d.ops = {fmt::format("nccl:send {}->{}", rank, (rank + 1) % ranks),
           fmt::format("nccl:recv {}<-{}", rank, (rank + ranks - 1) % ranks)};
  d.shapes = {{{{1024}}, {{1024}}, {"BFloat16"}, {"BFloat16"}}};
  d.stacks.push_back({{"batch_isend_irecv", "torch/distributed/distributed_c10d.py", 2836},
                      {"pipeline_step", "train.py", 57}});
  const int total = rank == holder ? entries - 1 : entries;
  d.entries.reserve(static_cast<std::size_t>(total));
  for (int i = 0; i < total; ++i) {
    fr::entry e;
    e.record_id = i;
    e.p2p_seq_id = i + 1;
    e.is_p2p = true;
    e.pg_id = 0;
    e.op = static_cast<std::uint32_t>((i + rank) % 2); // even ranks send first
    e.stack = 1;
    e.time_created_ns = 1'000'000'000LL + i * 1'000LL;
    e.time_started_ns = e.time_created_ns + 10;
    e.state = rank == holder ? fr::entry_state::completed : fr::entry_state::started;
    e.time_completed_ns = rank == holder ? e.time_created_ns + 100 : -1;
    d.entries.push_back(e);
  }
  return d;
}

int run_p2p(int ranks, int entries) {
  ranks += ranks % 2;                                    // even: the ring alternates
  const int holder = (ranks > 16 ? 16 : ranks / 2) & ~1; // even: its missing last call a recv
  std::vector<fr::dump> dumps;
  dumps.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    dumps.push_back(make_p2p_rank(r, ranks, entries, holder));
  const auto t0 = clock_type::now();
  const auto verdict = fr::analyze(dumps);
  const double analyse = seconds_since(t0);
  const bool right = verdict.culprits.size() == 1 && verdict.culprits[0].rank == holder &&
                     verdict.culprits[0].cause == fr::cause::not_reached &&
                     verdict.mismatches.size() == 1 && verdict.mismatches[0].p2p;
  fmt::print("fr analyze --p2p: {} ranks x {} sends and recvs, all in flight: analysed in "
             "{:.3f} s; verdict {}\n",
             ranks, entries, analyse,
             right ? fmt::format("rank {} not_reached (right)", holder) : "WRONG");
  if (!right)
    fmt::print("{}", fr::to_text(verdict));
  return right ? 0 : 1;
}

int run_generated(int ranks, int entries) {
  const int stuck = ranks > 4321 ? 4321 : ranks / 2;
  const auto t0 = clock_type::now();
  std::vector<fr::dump> dumps;
  dumps.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r)
    dumps.push_back(make_rank(r, ranks, entries, stuck));
  const double generate = seconds_since(t0);
  const auto t1 = clock_type::now();
  const auto verdict = fr::analyze(dumps);
  const double analyse = seconds_since(t1);
  const bool right = verdict.culprits.size() == 1 && verdict.culprits[0].rank == stuck &&
                     verdict.culprits[0].cause == fr::cause::not_reached;
  fmt::print("fr analyze: {} ranks x {} entries ({} groups): generated in {:.2f} s, analysed in "
             "{:.2f} s; verdict {}\n",
             ranks, entries, verdict.groups.size(), generate, analyse,
             right ? fmt::format("rank {} not_reached (right)", stuck) : "WRONG");
  if (!right)
    fmt::print("{}", fr::to_text(verdict));
  return right ? 0 : 1;
}

int run_dir(const std::string& dir, double peer_seconds) {
  const auto t0 = clock_type::now();
  const auto dumps = fr::load_dumps(std::vector<std::string>{dir});
  const double load = seconds_since(t0);
  const auto t1 = clock_type::now();
  const auto verdict = fr::analyze(dumps);
  const double analyse = seconds_since(t1);
  std::size_t entries = 0;
  for (const auto& d : dumps)
    entries += d.entries.size();
  fmt::print("tdiag fr: {} dumps, {} entries: loaded in {:.3f} s, analysed in {:.3f} s, total "
             "{:.3f} s; {} culprit(s)\n",
             dumps.size(), entries, load, analyse, load + analyse, verdict.culprits.size());
  if (peer_seconds > 0)
    fmt::print("peer (PyTorch fr_trace): {:.3f} s; tdiag is {:.1f}x faster\n", peer_seconds,
               peer_seconds / (load + analyse));
  return 0;
}

// A positive count, or -1 for anything else (a usage error).
int count_of(const char* text) {
  const std::string_view s(text);
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v > 0 ? v : -1;
}

} // namespace

int main(int argc, char** argv) {
  int ranks = 0, entries = 0; // 0: the mode's default
  bool p2p = false, small = false;
  std::string dir;
  double peer = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--small") {
      small = true;
    } else if (arg == "--p2p") {
      p2p = true;
    } else if (arg == "--ranks" && has_value) {
      ranks = count_of(argv[++i]);
    } else if (arg == "--entries" && has_value) {
      entries = count_of(argv[++i]);
    } else if (arg == "--dir" && has_value) {
      dir = argv[++i];
    } else if (arg == "--peer-seconds" && has_value) {
      peer = std::atof(argv[++i]);
    } else {
      fmt::print(stderr,
                 "usage: {} [--p2p] [--ranks N] [--entries K] [--small] | --dir DUMPS "
                 "[--peer-seconds S]\n",
                 argv[0]);
      return 2;
    }
  }
  if (ranks < 0 || entries < 0 || (!dir.empty() && (small || p2p))) {
    fmt::print(stderr, "--ranks and --entries take a positive count; --dir takes neither --small "
                       "nor --p2p\n");
    return 2;
  }
  if (ranks == 0)
    ranks = small ? (p2p ? 16 : 64) : (p2p ? 64 : 10'000);
  if (entries == 0)
    entries = small ? 200 : 2'000;
  if (ranks < 2 || entries < 4) {
    fmt::print(stderr, "--ranks needs at least 2 and --entries at least 4\n");
    return 2;
  }
  if (!dir.empty())
    return run_dir(dir, peer);
  entries += entries % 2; // even: the last entry is the world's, or the holder's last a recv
  return p2p ? run_p2p(ranks, entries) : run_generated(ranks, entries);
}
