// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The capture pipeline after CUPTI, on the CPU: CUPTI kernel and runtime-API records (as CUPTI
// would hand them over, one 4 MiB buffer's worth per batch) -> cupti_converter -> .tdtrace
// writer. Prints sustained events per second and file bytes per kernel event, next to Tracy's
// 22-byte zone (before compression) and Kineto JSON's ~335 bytes per kernel event.
// Usage: tdiag_bench_capture_writer [kernels] (default 2,000,000; --small = 100,000).
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <cupti_runtime_cbid.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

using namespace tdiag;

template <typename Record> const CUpti_Activity& as_activity(const Record& r) {
  return reinterpret_cast<const CUpti_Activity&>(r);
}

struct result {
  double seconds = 0;
  std::uint64_t events = 0;
  std::uint64_t file_bytes = 0;
};

// Realistic shape: 48 kernel names of templated length, 4 streams, launches 2-6 us apart,
// kernels 3-40 us long, one runtime cudaLaunchKernel record per kernel when `with_api`.
result run(std::size_t kernels, bool with_api, const std::filesystem::path& path) {
  std::vector<std::string> names;
  for (int i = 0; i < 48; ++i)
    names.push_back(fmt::format("void at::native::elementwise_kernel<128, 4, at::native::"
                                "gpu_kernel_impl_nocast<at::native::AddFunctor<float>>(at::"
                                "TensorIteratorBase&, variant_{})::lambda>(int, T)",
                                i));
  std::mt19937_64 rng(7);
  const std::uint64_t base = 1'700'000'000'000'000'000ull;
  capture::converter_options o;
  o.time_base_ns = base;
  o.api_name = [](bool, std::uint32_t) { return std::string("cudaLaunchKernel"); };
  capture::cupti_converter converter(o);
  // A 4 MiB CUPTI buffer holds ~16k kernel records (~256 B each).
  const std::size_t per_batch = 16'000;

  const auto t0 = std::chrono::steady_clock::now();
  trace::tdtrace_writer writer(path, {"", "cupti", 0, 0, {}});
  std::uint64_t host_time = 0;
  std::uint64_t stream_free[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < kernels; ++i) {
    host_time += 2000 + rng() % 4000;
    const std::uint32_t stream = 7 + static_cast<std::uint32_t>(rng() % 4);
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    auto& free_at = stream_free[stream - 7];
    k.start = base + std::max(host_time + 5000, free_at);
    k.end = k.start + 3000 + rng() % 37000;
    free_at = k.end;
    k.deviceId = 0;
    k.contextId = 1;
    k.streamId = stream;
    k.gridX = 1024, k.gridY = 1, k.gridZ = 1;
    k.blockX = 128, k.blockY = 1, k.blockZ = 1;
    k.registersPerThread = 32;
    k.correlationId = static_cast<std::uint32_t>(i + 1);
    k.name = names[rng() % names.size()].c_str();
    converter.add(as_activity(k));
    if (with_api) {
      CUpti_ActivityAPI a;
      std::memset(&a, 0, sizeof(a));
      a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
      a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
      a.start = base + host_time;
      a.end = a.start + 1500 + rng() % 1000;
      a.processId = 1000;
      a.threadId = 1001;
      a.correlationId = k.correlationId;
      converter.add(as_activity(a));
    }
    if ((i + 1) % per_batch == 0)
      writer.append(converter.take_batch());
  }
  writer.append(converter.take_batch());
  writer.close();
  const auto t1 = std::chrono::steady_clock::now();
  result r;
  r.seconds = std::chrono::duration<double>(t1 - t0).count();
  r.events = writer.stats().events_written;
  r.file_bytes = std::filesystem::file_size(path);
  return r;
}

} // namespace

int main(int argc, char** argv) {
  std::size_t kernels = 2'000'000;
  if (argc > 1 && std::strcmp(argv[1], "--small") == 0)
    kernels = 100'000;
  else if (argc > 1)
    kernels = std::strtoull(argv[1], nullptr, 10);
  const auto path = std::filesystem::temp_directory_path() /
                    fmt::format("tdiag_bench_capture_writer.{}.tdtrace", getpid());
  fmt::print("capture writer: {} kernels, CUPTI records -> converter -> .tdtrace (zstd 3)\n",
             kernels);
  for (bool with_api : {false, true}) {
    const result r = run(kernels, with_api, path);
    fmt::print("  {:<28} {:>10.0f} events/s  {:>6.2f} s  {:>6.2f} file bytes per kernel event "
               "({} bytes)\n",
               with_api ? "kernels + cudaLaunchKernel:" : "kernels only:",
               static_cast<double>(r.events) / r.seconds, r.seconds,
               static_cast<double>(r.file_bytes) / static_cast<double>(kernels), r.file_bytes);
  }
  fmt::print("  peers: Tracy zone 22 B before compression; Kineto JSON ~335 B per kernel event\n");
  std::filesystem::remove(path);
  return 0;
}
