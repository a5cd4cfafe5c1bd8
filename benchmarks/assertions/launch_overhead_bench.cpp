// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Host cost of tdiag::launch over a raw launch on the CPU back-end's empty-kernel path, in ns per
// launch, without and with launch-site stack capture (goals: <= 50 ns and <= 250 ns). The raw
// launch is the back-end's own launch hook with the same request, so the difference is exactly
// what tensordiag adds: back-end lookup, validation, registry record, stack capture.
// Usage: launch_overhead_bench [--quick]
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

namespace {

__global__ void empty_kernel(int) {}

void invoke(const void* kernel, void* const* args) {
  reinterpret_cast<void (*)(int)>(const_cast<void*>(kernel))(*static_cast<int*>(args[0]));
}

template <typename F>
double median_ns_per_call(F&& f, int calls, int repeats) {
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) f();
    const auto stop = std::chrono::steady_clock::now();
    samples.push_back(std::chrono::duration<double, std::nano>(stop - start).count() / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int calls = quick ? 2000 : 50000, repeats = quick ? 3 : 15;
  auto cpu = tdiag::assertions::cpu_backend::shared();
  tdiag::set_active_backend("cpu");

  int argument = 0;
  void* args[] = {&argument};
  tdiag::launch_request raw;
  raw.kernel = reinterpret_cast<const void*>(&empty_kernel);
  raw.args = args;
  raw.arg_count = 1;
  raw.host_invoke = &invoke;
  auto raw_launch = [&] { cpu->launch(raw); };
  auto td_launch = [&] { tdiag::launch(empty_kernel, 1, 1)(0); };

  auto config = tdiag::assertions::configuration();
  config.capture_stacks = false;
  tdiag::assertions::configure(config);
  td_launch();  // binds the buffer
  // Interleave the measurements so frequency changes hit all of them alike.
  double raw_ns = 1e300, plain_ns = 1e300, stack_ns = 1e300;
  for (int round = 0; round < 3; ++round) {
    config.capture_stacks = false;
    tdiag::assertions::configure(config);
    td_launch();
    raw_ns = std::min(raw_ns, median_ns_per_call(raw_launch, calls, repeats));
    plain_ns = std::min(plain_ns, median_ns_per_call(td_launch, calls, repeats));
    config.capture_stacks = true;
    tdiag::assertions::configure(config);
    td_launch();
    stack_ns = std::min(stack_ns, median_ns_per_call(td_launch, calls, repeats));
  }

  // The registry alone, the part of the overhead that scales with what is recorded.
  tdiag::assertions::launch_registry registry(4096);
  tdiag::assertions::launch_info info;
  const double record_ns = median_ns_per_call([&] { registry.record(info); }, calls, repeats);
  const double capture_ns = median_ns_per_call(
      [&] {
        info.stack = tdiag::capture_raw_stack(1);
        registry.record(info);
      },
      calls, repeats);

  fmt::print("launch overhead on the CPU back-end (empty kernel, 1x1), median ns per launch:\n");
  fmt::print("  raw back-end launch (peer)           {:8.1f} ns\n", raw_ns);
  fmt::print("  tdiag::launch, no stack capture      {:8.1f} ns  overhead {:+7.1f} ns (goal <= 50)\n",
             plain_ns, plain_ns - raw_ns);
  fmt::print("  tdiag::launch, with stack capture    {:8.1f} ns  overhead {:+7.1f} ns (goal <= 250)\n",
             stack_ns, stack_ns - raw_ns);
  fmt::print("  launch_registry::record alone        {:8.1f} ns\n", record_ns);
  fmt::print("  capture_raw_stack + record           {:8.1f} ns\n", capture_ns);
  (void)tdiag::take_failures();
  return 0;
}
