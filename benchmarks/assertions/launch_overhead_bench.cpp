// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Host cost of tdiag::launch over a raw launch on the CPU back-end's empty-kernel path, in ns per
// launch, without and with launch-site stack capture (goals: <= 50 ns and <= 250 ns). The raw
// launch is the back-end's own launch hook with the same request, so the difference is exactly
// what tensordiag adds: back-end lookup, validation, registry record, stack capture.
// Third, the CUDA/HIP back-end source (assertions/src/gpu/gpu_backend.hpp) over a pretend runtime
// whose calls cost nothing (tests/assertions/stub_gpu_api.h): tensordiag's registration path up
// to the runtime's launch call, and how many other runtime calls a launch makes on average (each
// costs 60 to 320 ns on the H200 host; the GPU benchmark, gpu_launch_bench.cu, times them).
// Usage: launch_overhead_bench [--quick]
#include <tensordiag/assertions/cpu_backend.hpp>
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>
#include <tensordiag/assertions/runtime.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <time.h>
#include <vector>

#include "../../tests/assertions/stub_gpu_api.h"

namespace {

__global__ void empty_kernel(int) {}

void invoke(const void* kernel, void* const* args) {
  reinterpret_cast<void (*)(int)>(const_cast<void*>(kernel))(*static_cast<int*>(args[0]));
}

// A back-end whose launch hook does nothing: tdiag::launch on it costs only tensordiag's part.
class null_backend final : public tdiag::backend {
  std::string_view do_name() const noexcept override { return "null"; }
  int do_device_count() const override { return 1; }
  int do_current_device() const override { return 0; }
  tdiag::device_properties do_properties(int) const override {
    return tdiag::assertions::cpu_backend_options::default_properties();
  }
  tdiag::mapped_buffer do_allocate_failure_buffer(int, std::size_t n) override {
    storage_.assign(n, 0);
    return {storage_.data(), storage_.data(), n, true};
  }
  void do_free_failure_buffer(int, const tdiag::mapped_buffer&) override {}
  void do_bind_failure_buffer(int, const tdiag::mapped_buffer&) override {}
  void do_read_device_memory(int, const void* s, void* d, std::size_t n) const override {
    std::memcpy(d, s, n);
  }
  void do_write_device_memory(int, void* d, const void* s, std::size_t n) override {
    std::memcpy(d, s, n);
  }
  tdiag::launch_status do_launch(const tdiag::launch_request&) override {
    return tdiag::launch_status::ok;
  }
  void do_synchronize(int, tdiag::stream_handle) override {}
  tdiag::stream_handle do_create_stream(int) override { return nullptr; }
  void do_destroy_stream(int, tdiag::stream_handle) override {}
  std::vector<char> storage_;
};

// CPU time of this thread: the machine is shared, and wall time would count other processes.
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

template <typename F> double median_ns_per_call(F&& f, int calls, int repeats) {
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    const double start = thread_cpu_ns();
    for (int i = 0; i < calls; ++i)
      f();
    samples.push_back((thread_cpu_ns() - start) / calls);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

struct figures {
  double raw = 1e300, plain = 1e300, stack = 1e300;
};

struct stub_figures {
  figures legacy; // the legacy stream (nullptr): no capture query
  double user_ns = 0;
  double user_queries = 0, legacy_queries = 0, records = 0, queries = 0; // per launch
};

// tdiag::launch on the GPU back-end over the stub runtime; the peer is the stub's launch call
// alone. `measure` is main's interleaved rounds; leaves the CPU back-end active.
template <typename Measure>
stub_figures measure_stub_backend(Measure& measure, void** args, int calls, int repeats) {
  using tdiag::test::stub_counts;
  using tdiag::test::stub_gpu_api;
  auto stub = std::make_shared<tdiag::assertions::detail::gpu_backend<stub_gpu_api>>();
  tdiag::register_backend(stub, -1000);
  tdiag::set_active_backend("stub");
  stub_figures f;
  f.legacy = measure([&] {
    const auto* kernel = reinterpret_cast<const void*>(&empty_kernel);
    (void)stub_gpu_api::launch_kernel(kernel, stub_gpu_api::handle_of(kernel), {}, {}, args, 0,
                                      nullptr);
  });
  tdiag::test::stub_stream user_stream;
  auto td_user = [&] { tdiag::launch(empty_kernel, 1, 1, 0, &user_stream)(0); };
  auto no_stacks = tdiag::assertions::configuration();
  no_stacks.capture_stacks = false; // measure() ends with stack capture on
  tdiag::assertions::configure(no_stacks);
  td_user();
  stub_counts.reset();
  f.user_ns = median_ns_per_call(td_user, calls, repeats);
  const double launches = static_cast<double>(stub_counts.launches.load());
  f.user_queries = static_cast<double>(stub_counts.capture_queries.load()) / launches;
  stub_counts.reset(); // the same number of launches again, on the legacy stream
  (void)median_ns_per_call([] { tdiag::launch(empty_kernel, 1, 1)(0); }, calls, repeats);
  f.legacy_queries = static_cast<double>(stub_counts.capture_queries.load()) / launches;
  f.records = static_cast<double>(stub_counts.event_records.load()) / launches;
  f.queries = static_cast<double>(stub_counts.event_queries.load()) / launches;
  tdiag::set_active_backend("cpu");
  return f;
}

void print_stub_backend(const stub_figures& f) {
  fmt::print("on the CUDA/HIP back-end source over a stub runtime, median ns per launch:\n");
  fmt::print("  stub runtime launch call (peer)      {:8.1f} ns\n", f.legacy.raw);
  fmt::print(
      "  tdiag::launch, no stack capture      {:8.1f} ns  overhead {:+7.1f} ns (goal <= 50)\n",
      f.legacy.plain, f.legacy.plain - f.legacy.raw);
  fmt::print(
      "  tdiag::launch, with stack capture    {:8.1f} ns  overhead {:+7.1f} ns (goal <= 250)\n",
      f.legacy.stack, f.legacy.stack - f.legacy.raw);
  fmt::print("  the same on a user stream, no stack  {:8.1f} ns  overhead {:+7.1f} ns\n", f.user_ns,
             f.user_ns - f.legacy.raw);
  fmt::print("  runtime calls per launch besides the launch: capture query {:.2f} (legacy stream "
             "{:.2f}), event record {:.3f}, event query {:.3f}\n",
             f.user_queries, f.legacy_queries, f.records, f.queries);
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

  // Raw launches, then tdiag::launch without and with stack capture, interleaved over three rounds
  // so that frequency changes hit all of them alike; the best median of each.
  auto measure = [&](auto&& raw_fn) {
    figures f;
    auto config = tdiag::assertions::configuration();
    for (int round = 0; round < 3; ++round) {
      config.capture_stacks = false;
      tdiag::assertions::configure(config);
      td_launch(); // binds the failure buffer
      f.raw = std::min(f.raw, median_ns_per_call(raw_fn, calls, repeats));
      f.plain = std::min(f.plain, median_ns_per_call(td_launch, calls, repeats));
      config.capture_stacks = true;
      tdiag::assertions::configure(config);
      td_launch();
      f.stack = std::min(f.stack, median_ns_per_call(td_launch, calls, repeats));
    }
    return f;
  };
  const figures cpu_figures = measure(raw_launch);
  const double raw_ns = cpu_figures.raw, plain_ns = cpu_figures.plain, stack_ns = cpu_figures.stack;

  // The same on a back-end whose launch does nothing: tensordiag's own cost, without the noise
  // of running a kernel.
  auto null = std::make_shared<null_backend>();
  tdiag::register_backend(null, -1000);
  tdiag::set_active_backend("null");
  tdiag::launch_request none = raw;
  const figures null_figures = measure([&] { null->launch(none); });
  const double null_raw_ns = null_figures.raw, null_plain_ns = null_figures.plain,
               null_stack_ns = null_figures.stack;

  // The CUDA/HIP back-end source over the stub runtime.
  tdiag::set_active_backend("cpu");
  const stub_figures stub = measure_stub_backend(measure, args, calls, repeats);

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

  fmt::print("launch overhead on the CPU back-end (empty kernel, 1x1), median thread-CPU ns per "
             "launch:\n");
  fmt::print("  raw back-end launch (peer)           {:8.1f} ns\n", raw_ns);
  fmt::print(
      "  tdiag::launch, no stack capture      {:8.1f} ns  overhead {:+7.1f} ns (goal <= 50)\n",
      plain_ns, plain_ns - raw_ns);
  fmt::print(
      "  tdiag::launch, with stack capture    {:8.1f} ns  overhead {:+7.1f} ns (goal <= 250)\n",
      stack_ns, stack_ns - raw_ns);
  fmt::print("on a null back-end (launch hook returns at once), median ns per launch:\n");
  fmt::print("  raw null launch (peer)               {:8.1f} ns\n", null_raw_ns);
  fmt::print(
      "  tdiag::launch, no stack capture      {:8.1f} ns  overhead {:+7.1f} ns (goal <= 50)\n",
      null_plain_ns, null_plain_ns - null_raw_ns);
  fmt::print(
      "  tdiag::launch, with stack capture    {:8.1f} ns  overhead {:+7.1f} ns (goal <= 250)\n",
      null_stack_ns, null_stack_ns - null_raw_ns);
  print_stub_backend(stub);
  fmt::print("  launch_registry::record alone        {:8.1f} ns\n", record_ns);
  fmt::print("  capture_raw_stack + record           {:8.1f} ns\n", capture_ns);
  (void)tdiag::take_failures();
  return 0;
}
