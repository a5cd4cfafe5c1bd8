// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag_bench_assertions_gpu_launch: (1) host cost of tdiag::launch over a raw <<<>>> launch of an
// empty kernel, ns per launch, with and without launch-site stack capture (goals: <= +50 ns and
// <= +250 ns), on the legacy stream and on a user stream (which costs a capture query), in
// interleaved rounds, and what its extra runtime calls cost alone; (2) time from a
// device failure to its report with the watchdog at 10 ms (goal: <= 20 ms); (3) a plain launch
// bound through CUPTI (TDIAG_BIND=cupti). Batches of 256 launches
// with a synchronize in between, so the launch queue never fills; median over batches. `--quick`:
// fewer batches and samples.
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

__global__ void empty_kernel(int) {}

// Thread 0 says it started, then fails; thread 32 spins until the report's handler releases it.
__global__ void report_latency_kernel(volatile int* flags) {
  if (threadIdx.x == 0) {
    flags[0] = 1;
    __threadfence_system();
    TDIAG_ASSERT(false, "latency probe");
  }
  if (threadIdx.x == 32) {
    unsigned long long start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
      __nanosleep(1000);
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (flags[1] == 0 && now - start < 2'000'000'000ull);
  }
}

template <typename Launch> double ns_per_launch(Launch&& launch, int batches) {
  constexpr int per_batch = 256;
  std::vector<double> ns;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = clock_type::now();
    for (int i = 0; i < per_batch; ++i)
      launch();
    const auto t1 = clock_type::now();
    cudaDeviceSynchronize();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / per_batch);
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2];
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Interleaved rounds: each round times one batch of every variant in turn, so drift of the
// machine (clocks, other tenants) hits all of them alike; medians over rounds.
double launch_cost(int rounds) {
  tdiag::assertions::runtime_config off, on;
  off.capture_stacks = false;
  on.capture_stacks = true;
  tdiag::assertions::configure(off);
  cudaStream_t stream = nullptr; // a user stream: capture status is asked at every launch
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  tdiag::launch(empty_kernel, 1, 32)(0); // binds the buffer, caches the kernel's limits
  tdiag::launch(empty_kernel, 1, 32, 0, stream)(0);
  cudaDeviceSynchronize();
  std::vector<double> raw, plain, stacks, raw_stream, plain_stream;
  for (int r = 0; r < rounds; ++r) {
    raw.push_back(ns_per_launch([] { empty_kernel<<<1, 32>>>(0); }, 1));
    tdiag::assertions::configure(off);
    plain.push_back(ns_per_launch([] { tdiag::launch(empty_kernel, 1, 32)(0); }, 1));
    tdiag::assertions::configure(on);
    stacks.push_back(ns_per_launch([] { tdiag::launch(empty_kernel, 1, 32)(0); }, 1));
    raw_stream.push_back(ns_per_launch([&] { empty_kernel<<<1, 32, 0, stream>>>(0); }, 1));
    tdiag::assertions::configure(off);
    plain_stream.push_back(
        ns_per_launch([&] { tdiag::launch(empty_kernel, 1, 32, 0, stream)(0); }, 1));
  }
  const double raw_ns = median(raw), plain_ns = median(plain), stacks_ns = median(stacks);
  const double raw_stream_ns = median(raw_stream), plain_stream_ns = median(plain_stream);
  std::printf(
      "host launch cost, empty kernel <<<1,32>>>, median of %d interleaved rounds of 256:\n",
      rounds);
  std::printf("  raw <<<>>>                       %8.0f ns/launch\n", raw_ns);
  std::printf("  tdiag::launch, no stack capture  %8.0f ns/launch (%+.0f ns, goal <= +50)\n",
              plain_ns, plain_ns - raw_ns);
  std::printf("  tdiag::launch, stack capture     %8.0f ns/launch (%+.0f ns, goal <= +250)\n",
              stacks_ns, stacks_ns - raw_ns);
  std::printf("  raw <<<>>> on a user stream      %8.0f ns/launch\n", raw_stream_ns);
  std::printf("  tdiag::launch, user stream       %8.0f ns/launch (%+.0f ns, no stack capture)\n",
              plain_stream_ns, plain_stream_ns - raw_stream_ns);
  cudaStreamDestroy(stream);
  return raw_ns;
}

// (3) TDIAG_BIND=cupti: plain <<<>>> launches registered by a CUPTI callback (with CUPTI's
// kernel activity, which pairs a failure's grid id with its launch), without and with the host
// stack, next to plain launches once binding is off again (CUPTI stays loaded) and the raw
// launch measured before CUPTI was ever loaded.
void bound_launch_cost(int rounds, double raw_before_ns) {
  tdiag::assertions::runtime_config bound, stacked, unbound;
  bound.capture_stacks = false;
  bound.bind = tdiag::assertions::launch_binding::cupti;
  stacked = bound;
  stacked.capture_stacks = true;
  try {
    tdiag::assertions::configure(bound);
  } catch (const tdiag::error& e) {
    std::printf("TDIAG_BIND=cupti: skipped: %s\n", e.what());
    return;
  }
  std::vector<double> plain, stacks, after;
  for (int r = 0; r < rounds; ++r) {
    tdiag::assertions::configure(bound);
    plain.push_back(ns_per_launch([] { empty_kernel<<<1, 32>>>(0); }, 1));
    tdiag::assertions::configure(stacked);
    stacks.push_back(ns_per_launch([] { empty_kernel<<<1, 32>>>(0); }, 1));
    tdiag::assertions::configure(unbound);
    after.push_back(ns_per_launch([] { empty_kernel<<<1, 32>>>(0); }, 1));
  }
  const double plain_ns = median(plain), stacks_ns = median(stacks), after_ns = median(after);
  std::printf("TDIAG_BIND=cupti, plain <<<>>> launches, median of %d interleaved rounds of 256:\n",
              rounds);
  std::printf("  bound, no stack capture          %8.0f ns/launch (%+.0f ns over raw)\n", plain_ns,
              plain_ns - raw_before_ns);
  std::printf("  bound, stack capture             %8.0f ns/launch (%+.0f ns over raw)\n", stacks_ns,
              stacks_ns - raw_before_ns);
  std::printf("  unbound again (CUPTI loaded)     %8.0f ns/launch (%+.0f ns over raw)\n", after_ns,
              after_ns - raw_before_ns);
}

// What the registered launch's visible extra calls cost alone on this machine (ns per call,
// median of batches): the capture query every launch makes, and the event one launch in 8 records.
void launch_cost_parts(int batches) {
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t event = nullptr;
  cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
  const double capturing = ns_per_launch(
      [&] {
        cudaStreamCaptureStatus status{};
        (void)cudaStreamIsCapturing(stream, &status);
      },
      batches);
  const double record = ns_per_launch([&] { (void)cudaEventRecord(event, stream); }, batches);
  const double query = ns_per_launch([&] { (void)cudaEventQuery(event); }, batches);
  // A registered launch carries its slot in the dynamic shared memory size (1..255 bytes).
  const double raw = ns_per_launch([] { empty_kernel<<<1, 32>>>(0); }, batches);
  unsigned slot = 0;
  const double sized =
      ns_per_launch([&] { empty_kernel<<<1, 32, 1 + slot++ % 255>>>(0); }, batches);
  const double constant = ns_per_launch([&] { empty_kernel<<<1, 32, 1>>>(0); }, batches);
  std::printf("parts: <<<>>> with 1..255 bytes of dynamic shared memory %+.0f ns over none "
              "(always 1 byte: %+.0f ns)\n",
              sized - raw, constant - raw);
  // The runtime's launch by host stub, and the driver's by the kernel's function, which is what
  // tdiag::launch calls (the runtime's costs about 100 ns more on the H200 host, 2026-12-03).
  int zero = 0;
  void* args[] = {&zero};
  const void* stub = reinterpret_cast<const void*>(&empty_kernel);
  const double by_stub = ns_per_launch(
      [&] { (void)cudaLaunchKernel(stub, dim3(1), dim3(32), args, 0, nullptr); }, batches);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  cudaFunction_t function = nullptr;
  if (cudaGetDriverEntryPointByVersion("cuLaunchKernel", &entry, 12000, cudaEnableDefault,
                                       &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess && cudaGetFuncBySymbol(&function, stub) == cudaSuccess) {
    const auto launch =
        reinterpret_cast<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, CUstream, void**, void**)>(entry);
    const double by_driver = ns_per_launch(
        [&] { (void)launch(function, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr); }, batches);
    std::printf("parts: cudaLaunchKernel by host stub %+.0f ns, cuLaunchKernel by function %+.0f "
                "ns over <<<>>>\n",
                by_stub - raw, by_driver - raw);
  }
  std::printf("parts: cudaStreamIsCapturing %.0f ns, cudaEventRecord %.0f ns (1 launch in 8), "
              "cudaEventQuery %.0f ns\n",
              capturing, record, query);
  cudaEventDestroy(event);
  cudaStreamDestroy(stream);
}

void report_latency(int samples) {
  int* flags = nullptr; // [0] kernel started, [1] release
  cudaHostAlloc(reinterpret_cast<void**>(&flags), 2 * sizeof(int), cudaHostAllocMapped);
  int* device_flags = nullptr;
  cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flags), flags, 0);
  std::atomic<std::int64_t> reported_at{0};
  tdiag::assertions::runtime_config config;
  config.capture_stacks = false;
  config.print = false;
  config.watchdog_ms = 10;
  tdiag::assertions::configure(config);
  tdiag::assertions::set_failure_handler([&](const tdiag::report&) {
    reported_at = clock_type::now().time_since_epoch().count();
    *static_cast<volatile int*>(&flags[1]) = 1;
  });
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  std::vector<double> ms;
  int missed = 0;
  for (int s = 0; s < samples; ++s) {
    flags[0] = flags[1] = 0;
    reported_at = 0;
    tdiag::launch(report_latency_kernel, 1, 64, 0, stream)(device_flags);
    const auto launched = clock_type::now();
    while (*static_cast<volatile int*>(&flags[0]) == 0 &&
           clock_type::now() - launched < std::chrono::seconds(2)) {
    }
    const auto started = clock_type::now();
    while (reported_at == 0 && clock_type::now() - started < std::chrono::seconds(3))
      std::this_thread::yield();
    cudaStreamSynchronize(stream);
    if (reported_at == 0) {
      ++missed;
      continue;
    }
    const auto at = clock_type::time_point(clock_type::duration(reported_at.load()));
    ms.push_back(std::chrono::duration<double, std::milli>(at - started).count());
  }
  tdiag::assertions::configure(tdiag::assertions::runtime_config{}); // stops the watchdog
  tdiag::assertions::set_failure_handler({});
  std::sort(ms.begin(), ms.end());
  if (ms.empty()) {
    std::printf("failure-to-report latency: no report arrived in %d samples\n", samples);
  } else {
    std::printf("failure-to-report latency, watchdog 10 ms, %zu samples: median %.2f ms, max "
                "%.2f ms (goal <= 20 ms), %d without a report\n",
                ms.size(), ms[ms.size() / 2], ms.back(), missed);
  }
  cudaStreamDestroy(stream);
  cudaFreeHost(flags);
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("tdiag_bench_assertions_gpu_launch: no CUDA device on this machine; skipped\n");
    return 0;
  }
  const double raw_ns = launch_cost(quick ? 20 : 200);
  launch_cost_parts(quick ? 20 : 200);
  report_latency(quick ? 3 : 30);
  bound_launch_cost(quick ? 10 : 50, raw_ns); // last: once loaded, CUPTI stays in the process
  return 0;
}
