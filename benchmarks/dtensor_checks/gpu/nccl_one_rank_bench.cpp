// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A 1-rank NCCL run on one GPU (one process per rank makes more impossible on a single GPU):
// communicator creation through the file store, all_reduce / all_gather of device buffers, and
// the runtime checks of a replicated 1 GiB device tensor over the NCCL communicator with the
// CUDA scan back-end (time per check). `--small`: 64 MiB; exit 77 without a GPU.
#include <tensordiag/dtensor_checks/comm/nccl_communicator.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <cuda_runtime.h>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <unistd.h>

namespace {

template <typename Fn> double best_ms(int iterations, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < iterations; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  using namespace tdiag::dtensor;
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  if (runtime::gpu_device_count() == 0) {
    fmt::print("nccl_one_rank_bench: no CUDA device, skipped\n");
    return 77;
  }
  const std::int64_t bytes = small ? (64ll << 20) : (1ll << 30);
  const int iterations = small ? 3 : 10;
  try {
    auto store = comm::make_file_store(std::filesystem::temp_directory_path(),
                                       fmt::format("tdiag-nccl-bench-{}", ::getpid()));
    const auto t0 = std::chrono::steady_clock::now();
    auto device_comm = comm::make_nccl_communicator(0, 1, *store);
    comm::nccl_options host_options;
    host_options.host_buffers = true;
    auto host_comm = comm::make_nccl_communicator(0, 1, *store, host_options);
    const double init_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    fmt::print("NCCL {} : 2 communicators of 1 rank created in {:.1f} ms\n", comm::nccl_version(),
               init_ms);

    void* data = nullptr;
    void* gathered = nullptr;
    if (cudaMalloc(&data, static_cast<std::size_t>(bytes)) != cudaSuccess ||
        cudaMalloc(&gathered, static_cast<std::size_t>(bytes)) != cudaSuccess) {
      fmt::print(stderr, "cudaMalloc of {} bytes failed\n", bytes);
      return 1;
    }
    cudaMemset(data, 0x3c, static_cast<std::size_t>(bytes));
    const double gb = static_cast<double>(bytes) / 1e9;
    const auto floats = bytes / 4;
    const double ar = best_ms(
        iterations, [&] { device_comm->all_reduce(data, floats, dtype::float32, reduce_op::sum); });
    const double ag = best_ms(
        iterations, [&] { device_comm->all_gather(data, gathered, floats, dtype::float32); });
    fmt::print("all_reduce  {:.3f} GB: {:8.3f} ms  {:8.1f} GB/s (1 rank: a local copy)\n", gb, ar,
               gb / (ar * 1e-3));
    fmt::print("all_gather  {:.3f} GB: {:8.3f} ms  {:8.1f} GB/s (1 rank: a local copy)\n", gb, ag,
               gb / (ag * 1e-3));

    const comm::mesh_communicators mc(*host_comm, device_mesh({1}));
    auto backend = runtime::make_gpu_scan_backend();
    const tensor_spec spec{tensor_meta{{floats}, {1}, dtype::float32}, {placement::replicate()}};
    tdiag::report r;
    const double check = best_ms(iterations, [&] {
      r = runtime::check_local_tensor({data, {floats}, dtype::float32}, spec, mc, *backend);
    });
    fmt::print("runtime checks (replica hash + gather, NaN/Inf scan, shape) of {:.3f} GB over "
               "NCCL: {:8.3f} ms per "
               "check, {:.3f} ms per GiB; findings: {}\n",
               gb, check, check / (static_cast<double>(bytes) / (1ll << 30)), r.diagnostics.size());
    cudaFree(data);
    cudaFree(gathered);
    return r.diagnostics.empty() ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "nccl_one_rank_bench: {}\n", e.what());
    return 1;
  }
}
