// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The runtime checks on real ranks: one process per rank and GPU over NCCL (the issue-10 runs).
// `tdiag_nccl_ranks_bench --ranks N [--mib M] [--out DIR]` forks N ranks (before any CUDA call),
// each on GPU `rank`, with the NCCL unique id exchanged through files in DIR, and runs:
//   1. a replicated M MiB tensor, identical on every rank: no findings expected (time per check);
//   2. the same with one element changed on the last rank: its report names the rank and element;
//   3. a (S(0), R) tensor on a 2 x N/2 mesh (or [N]) with rank 1 holding a wrong local shape;
//   4. every plan transition S→R, P→R, P→S, S(i)→S(j) executed over NCCL against direct
//   re-sharding;
//   5. all_gather / all_reduce bus bandwidth on device buffers.
// Each rank writes DIR/rank<r>.json (merge with `tdiag report merge`). Exit 0 when every
// expectation held, 1 otherwise, 77 without a GPU. NCCL_NVLS_ENABLE=0 is set for every rank.
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/dtensor_checks/comm/nccl_communicator.hpp>
#include <tensordiag/dtensor_checks/comm/plan_executor.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace tdiag::dtensor;
using clock_type = std::chrono::steady_clock;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

bool expect(bool ok, int rank, const std::string& what) {
  fmt::print("rank {}: {:4} {}\n", rank, ok ? "ok" : "FAIL", what);
  return ok;
}

bool plans(comm::communicator& world, int rank, int n) {
  const device_mesh mesh({n});
  const comm::mesh_communicators mc(world, mesh);
  const shape_t shape{static_cast<std::int64_t>(3 * n + 1), 6};
  const tensor_meta meta{shape, contiguous_strides(shape), dtype::float64};
  std::vector<double> values(static_cast<std::size_t>(numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i % 17) - 8.0;
  const auto full_int = sim::dense_tensor::from_values(shape, dtype::int64, values);
  const auto full = full_int.to(dtype::float64);
  const auto S0 = placement::shard(0);
  const auto S1 = placement::shard(1);
  const auto R = placement::replicate();
  const auto P = placement::partial(reduce_op::sum);
  bool ok = true;
  for (const auto& [from, to] :
       std::vector<std::pair<placement, placement>>{{S0, R}, {P, R}, {P, S0}, {S0, S1}, {S1, S0}}) {
    const auto plan = plan_redistribution(mesh, meta, {from}, {to}, mesh_topology::build(mesh));
    auto pieces = sim::distribute(full_int, {from}, mesh, 5);
    const auto t0 = clock_type::now();
    const auto got = comm::execute_plan(
        plan, meta, pieces[static_cast<std::size_t>(rank)].to(dtype::float64), mc);
    const auto want = sim::local_piece(full, {to}, mesh, rank);
    ok &= expect(got.shape() == want.shape() && got.values() == want.values(), rank,
                 fmt::format("plan {} → {} over NCCL equals direct re-sharding ({:.2f} ms)",
                             to_string(from), to_string(to), ms_since(t0)));
  }
  return ok;
}

int run_rank(int rank, int n, std::int64_t bytes, const std::filesystem::path& dir) {
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  const int devices = runtime::gpu_device_count();
  if (devices == 0)
    return 77;
  if (n > devices) {
    fmt::print(stderr, "rank {}: {} ranks need {} GPUs, {} present\n", rank, n, n, devices);
    return 1;
  }
  comm::nccl_options host_options;
  host_options.device = rank;
  host_options.host_buffers = true;
  auto host_store = comm::make_file_store(dir, "nccl-id-host");
  auto world = comm::make_nccl_communicator(rank, n, *host_store, host_options);
  comm::nccl_options dev_options;
  dev_options.device = rank;
  auto dev_store = comm::make_file_store(dir, "nccl-id-device");
  auto dev = comm::make_nccl_communicator(rank, n, *dev_store, dev_options);
  auto backend = runtime::make_gpu_scan_backend();
  bool ok = true;

  // 1 and 2: a replicated tensor, identical, then with one element changed on the last rank.
  const auto count = bytes / 4;
  float* data = nullptr;
  if (cudaMalloc(&data, static_cast<std::size_t>(bytes)) != cudaSuccess)
    return 1;
  cudaMemset(data, 0x3f, static_cast<std::size_t>(bytes));
  const comm::mesh_communicators flat(*world, device_mesh({n}));
  const tensor_spec replicated{tensor_meta{{count}, {1}, dtype::float32}, {placement::replicate()}};
  const runtime::local_tensor local{data, {count}, dtype::float32};
  auto t0 = clock_type::now();
  auto clean = runtime::check_local_tensor(local, replicated, flat, *backend);
  ok &= expect(clean.diagnostics.empty(), rank,
               fmt::format("identical {} MiB replica: no findings ({:.3f} ms per check)",
                           bytes >> 20, ms_since(t0)));
  const std::int64_t changed = count / 3 + 7;
  if (rank == n - 1 && n > 1) {
    const float bad = -1.0f;
    cudaMemcpy(data + changed, &bad, sizeof(bad), cudaMemcpyHostToDevice);
  }
  t0 = clock_type::now();
  auto diverged = runtime::check_local_tensor(local, replicated, flat, *backend);
  const double diverge_ms = ms_since(t0);
  if (rank == n - 1 && n > 1) {
    const auto* idx =
        diverged.diagnostics.empty() ? nullptr : diverged.diagnostics[0].find_field("flat_index");
    ok &= expect(idx != nullptr && *idx == tdiag::field_value(changed), rank,
                 fmt::format("changed element {} found ({:.3f} ms incl. second and third pass)",
                             changed, diverge_ms));
  } else {
    ok &= expect(diverged.diagnostics.empty(), rank,
                 fmt::format("agreeing replica: no findings ({:.3f} ms)", diverge_ms));
  }

  // 3: (S(0), R) with a wrong local shape on rank 1.
  const device_mesh mesh2 = n % 2 == 0 && n >= 2 ? device_mesh({2, n / 2}) : device_mesh({n});
  const comm::mesh_communicators mc2(*world, mesh2);
  placement_list ps{placement::shard(0)};
  if (mesh2.ndim() == 2)
    ps.push_back(placement::replicate());
  const tensor_spec sharded{tensor_meta{{7, 64}, {64, 1}, dtype::float32}, ps};
  auto rows = local_shape_and_offset(sharded, mesh2, mesh2.coordinate(rank)).shape[0];
  if (rank == 1)
    rows += 1;
  auto shard_report =
      runtime::check_local_tensor({data, {rows, 64}, dtype::float32}, sharded, mc2, *backend);
  if (rank == 1) {
    ok &=
        expect(!shard_report.diagnostics.empty(), rank, "wrong local shape of (S(0), R) reported");
  }

  // 4: plan transitions.
  ok &= plans(*world, rank, n);

  // 5: bandwidth on device buffers (bus bandwidth as nccl-tests defines it).
  const std::int64_t per_rank = std::min<std::int64_t>(bytes, 256ll << 20) / 4;
  float* gathered = nullptr;
  if (cudaMalloc(&gathered, static_cast<std::size_t>(per_rank) * 4 * static_cast<std::size_t>(n)) ==
      cudaSuccess) {
    dev->all_gather(data, gathered, per_rank, dtype::float32);
    t0 = clock_type::now();
    for (int i = 0; i < 5; ++i)
      dev->all_gather(data, gathered, per_rank, dtype::float32);
    const double ag = ms_since(t0) / 5;
    dev->all_reduce(data, per_rank, dtype::float32, reduce_op::max);
    t0 = clock_type::now();
    for (int i = 0; i < 5; ++i)
      dev->all_reduce(data, per_rank, dtype::float32, reduce_op::max);
    const double ar = ms_since(t0) / 5;
    const double gb = static_cast<double>(per_rank) * 4 / 1e9;
    if (rank == 0) {
      fmt::print("all_gather {:.3f} GB per rank: {:.3f} ms, bus {:.1f} GB/s\n", gb, ag,
                 gb * n / (ag * 1e-3) * (n - 1) / std::max(n, 1));
      fmt::print("all_reduce {:.3f} GB: {:.3f} ms, bus {:.1f} GB/s\n", gb, ar,
                 gb / (ar * 1e-3) * 2.0 * (n - 1) / std::max(n, 1));
    }
    cudaFree(gathered);
  }
  cudaFree(data);
  tdiag::report merged = diverged;
  for (auto& d : shard_report.diagnostics)
    merged.diagnostics.push_back(d);
  tdiag::write_text_file(dir / fmt::format("rank{}.json", rank), tdiag::to_json(merged));
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  int n = 1;
  std::int64_t mib = 1024;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / fmt::format("tdiag-nccl-ranks-{}", ::getpid());
  bool own_dir = true; // made here, not named by --out
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--ranks" && i + 1 < argc)
      n = std::atoi(argv[++i]);
    else if (a == "--mib" && i + 1 < argc)
      mib = std::atoll(argv[++i]);
    else if (a == "--out" && i + 1 < argc)
      dir = argv[++i], own_dir = false;
    else if (a == "--small")
      mib = 64;
    else {
      fmt::print(stderr,
                 "usage: tdiag_nccl_ranks_bench [--ranks N] [--mib M | --small] [--out DIR]\n");
      return 2;
    }
  }
  std::filesystem::create_directories(dir);
  for (const auto* key : {"nccl-id-host", "nccl-id-device"})
    std::filesystem::remove(dir / key);
  // No CUDA call before fork: each rank initialises its own GPU.
  std::vector<pid_t> children;
  for (int r = 0; r < n; ++r) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int code = 1;
      try {
        code = run_rank(r, n, mib << 20, dir);
      } catch (const std::exception& e) {
        fmt::print(stderr, "rank {}: {}\n", r, e.what());
      }
      std::fflush(stdout);
      ::_exit(code);
    }
    children.push_back(pid);
  }
  int worst = 0;
  for (const auto pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (code == 77 && worst == 0)
      worst = 77;
    else if (code != 0 && code != 77)
      worst = 1;
  }
  if (worst == 77 && own_dir) {
    // No rank ran (no GPU): the folder made for their reports holds nothing to keep.
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    fmt::print("{} ranks: skipped (no GPU)\n", n);
    return worst;
  }
  fmt::print("{} ranks: {}; reports in {} (tdiag report merge {}/rank*.json)\n", n,
             worst == 0 ? "all checks held" : (worst == 77 ? "skipped (no GPU)" : "FAILURES"),
             dir.string(), dir.string());
  return worst;
}
