// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// .tdtrace writer figures: file bytes per kernel event after compression (peer: a Tracy zone is
// 22 bytes before compression, manual/tracy.md), sustained writer throughput in events/s, and
// read-back speed. `--small` runs a quick version (for CTest smoke runs).
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>
#include <vector>

namespace {

using namespace tdiag::trace;
using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}
// CPU seconds of the whole process (all threads): wall time is unreliable on a shared machine.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Kernels only, as CUPTI CONCURRENT_KERNEL records would give them.
trace kernels_only(std::size_t n, std::uint64_t seed) {
  synthetic_options o;
  o.kernels = n;
  o.seed = seed;
  o.copies_per_100_kernels = 0;
  o.allocations_per_100_kernels = 0;
  o.with_flows = false;
  o.with_allocator_state = false;
  trace t = make_synthetic_trace(o);
  t.api_calls.clear();
  t.ranges.clear();
  t.markers.clear();
  t.assertions.clear();
  t.finalize();
  return t;
}

void bytes_per_event(const std::filesystem::path& dir, std::size_t n) {
  fmt::print("== bytes per event ({} kernels, 36 kernel names, 4 streams) ==\n", n);
  const trace k = kernels_only(n, 1);
  for (int level : {1, 3, 9}) {
    tdtrace_writer_options o;
    o.compression_level = level;
    const auto path = dir / "kernels.tdtrace";
    write_tdtrace(path, k, o);
    const auto size = std::filesystem::file_size(path);
    fmt::print("kernels only, zstd {}: {} bytes, {:.2f} bytes/kernel event in the file "
               "(in memory: {} bytes/record)\n",
               level, size, static_cast<double>(size) / static_cast<double>(n),
               sizeof(kernel_event));
  }
  const trace full = make_synthetic_trace({.kernels = n});
  const auto path = dir / "full.tdtrace";
  tdtrace_writer_options o;
  write_tdtrace(path, full, o);
  const auto size = std::filesystem::file_size(path);
  fmt::print("kernel + launch call + flow + copies + allocations, zstd 3: {:.2f} bytes/event, "
             "{:.2f} bytes per kernel with everything around it ({} events)\n",
             static_cast<double>(size) / static_cast<double>(full.event_count()),
             static_cast<double>(size) / static_cast<double>(n), full.event_count());
  fmt::print("peer: Tracy ZoneEvent = 22 bytes per zone before compression; its zstd-3 files are "
             "6.65% of raw (manual/tracy.md)\n");
}

void throughput(const std::filesystem::path& dir, std::size_t batches, std::size_t per_batch,
                int producers) {
  fmt::print("== writer throughput ({} producer threads x {} batches x {} kernels) ==\n", producers,
             batches, per_batch);
  std::vector<trace> prototypes;
  for (int p = 0; p < producers; ++p)
    prototypes.push_back(kernels_only(per_batch, static_cast<std::uint64_t>(p + 1)));
  const auto path = dir / "throughput.tdtrace";
  tdtrace_writer_options o;
  o.queue_capacity = 64;
  tdtrace_writer writer(path, {}, o);
  const auto t0 = clock_type::now();
  const double c0 = cpu_seconds();
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p)
    threads.emplace_back([&, p] {
      for (std::size_t b = 0; b < batches; ++b) {
        trace batch = prototypes[static_cast<std::size_t>(p)]; // a CUPTI buffer's worth
        const std::int64_t shift = static_cast<std::int64_t>(b) * 1'000'000'000;
        for (auto& k : batch.kernels.mutable_all())
          k.start += shift, k.end += shift;
        writer.append(std::move(batch));
      }
    });
  for (auto& t : threads)
    t.join();
  writer.close();
  const double s = seconds_since(t0);
  const double cpu = cpu_seconds() - c0;
  const auto stats = writer.stats();
  fmt::print("{} events in {:.3f} s wall, {:.3f} s CPU (producers included): {:.2f} M events/s "
             "sustained, {:.2f} M events per CPU-second, {:.2f} bytes/event, {} chunks, {} "
             "dropped\n",
             stats.events_written, s, cpu, static_cast<double>(stats.events_written) / s / 1e6,
             static_cast<double>(stats.events_written) / cpu / 1e6,
             static_cast<double>(stats.file_bytes) / static_cast<double>(stats.events_written),
             stats.chunks_written, stats.events_dropped);

  const auto r0 = clock_type::now();
  const double rc0 = cpu_seconds();
  const auto back = read_tdtrace(path);
  const double rs = seconds_since(r0);
  const double rcpu = cpu_seconds() - rc0;
  fmt::print("read back: {} events in {:.3f} s wall, {:.3f} s CPU: {:.2f} M events/s "
             "(decode + merge + sort)\n",
             back.loaded.trace.event_count(), rs, rcpu,
             static_cast<double>(back.loaded.trace.event_count()) / rs / 1e6);
}

} // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const auto dir = std::filesystem::temp_directory_path() / "tdiag_bench_trace";
  std::filesystem::create_directories(dir);
  bytes_per_event(dir, small ? 20'000 : 1'000'000);
  throughput(dir, small ? 10 : 200, 10'000, small ? 1 : 2);
  std::filesystem::remove_all(dir);
  return 0;
}
