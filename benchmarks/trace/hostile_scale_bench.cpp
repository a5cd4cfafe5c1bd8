// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Scale of the analyses that were quadratic on hostile input (issue 18 item 4): a Kineto trace
// with N threads, each with an event and a thread_name (at f37b310 every name scanned every
// lane: 250k threads in 2.5 MB ran past 60 s); a timeline and the live allocations over a trace
// with N devices, each with a dumped segment and a memory event (every per-device replay
// scanned the whole dump, every device's alloc/free pairing the span of the whole trace).
// The oom forensics over a history that alternates an allocation and an oom N times over N
// dumped segments (at 06d39b8 each oom read the whole state: 20,000 pairs took 13.5 s). The
// summary and the oom findings over one segment of N blocks (at 5e99692: 160k allocations freed
// oldest first 12.8 s; an oom every ten allocations, 200k events 10.6 s), the same beside a
// segment of size 0 (at ef50808 `trace summary` of 40k such allocations took 0.96 s, 20k 0.23 s),
// a --window of it, and an expandable segment growing while it holds blocks.
// Prints seconds per size and the growth from N/2 to N: about 2 is linear, 4 quadratic. CTest
// runs --small under a 30 s timeout, which a quadratic version at 200k cannot meet.
//
//   tdiag_bench_trace_hostile_scale_bench [--small]
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

using namespace tdiag::trace;
using clock_type = std::chrono::steady_clock;

std::string threads_json(int n) {
  std::string json = R"({"traceEvents": [)";
  json.reserve(static_cast<std::size_t>(n) * 160);
  for (int tid = 0; tid < n; ++tid)
    json += fmt::format(R"({{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":{0},"ts":{0},)"
                        R"("dur":1}},{{"ph":"M","name":"thread_name","pid":1,"tid":{0},)"
                        R"("args":{{"name":"t{0}"}}}},)",
                        tid);
  json.back() = ']';
  return json + "}";
}

double kineto_seconds(int n) {
  const auto json = threads_json(n);
  const auto t0 = clock_type::now();
  const auto r = import_kineto(std::as_bytes(std::span(json)), "threads.json");
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (r.trace.lanes.size() != static_cast<std::size_t>(n))
    fmt::print(stderr, "unexpected lane count {}\n", r.trace.lanes.size());
  return s;
}

// N devices, each with one memory event and a dumped segment holding it.
trace devices_trace(int n) {
  trace t;
  allocator_state dump;
  for (int d = 0; d < n; ++d) {
    memory_event m;
    m.device = d;
    m.lane = t.lanes.memory(d);
    m.time = d;
    m.address = 0x1000;
    m.size = 0x100;
    t.memory.push_back(m);
    segment s;
    s.device = d;
    s.address = 0x1000;
    s.total_size = 0x1000;
    s.blocks.push_back({0x1000, 0x100, 0x100, block_state::active_allocated, no_stack});
    s.blocks.push_back({0x1100, 0xF00, 0, block_state::inactive, no_stack});
    dump.segments.push_back(std::move(s));
  }
  t.final_allocator_state = std::move(dump);
  t.finalize();
  return t;
}

double timeline_seconds(int n) {
  const auto t = devices_trace(n);
  const auto t0 = clock_type::now();
  const auto r = timeline_at(t, n);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (r.lanes.size() != static_cast<std::size_t>(n))
    fmt::print(stderr, "unexpected timeline lane count {}\n", r.lanes.size());
  return s;
}

double leaks_seconds(int n) {
  const auto t = devices_trace(n);
  const auto t0 = clock_type::now();
  const auto live = live_allocations(t);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (live.size() != static_cast<std::size_t>(n))
    fmt::print(stderr, "unexpected live allocation count {}\n", live.size());
  return s;
}

// N segments of 2 MiB, each with a free block; each is allocated in turn, an oom after each.
double oom_seconds(int n) {
  trace t;
  const auto lane = t.lanes.memory(0);
  const std::uint64_t seg = 2 << 20, base = std::uint64_t{1} << 32;
  allocator_state dump;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t at = base + static_cast<std::uint64_t>(i) * seg;
    const std::vector<frame_id> frames{
        t.stacks.intern_frame({t.strings.intern("f"), t.strings.intern("train.py"),
                               static_cast<std::uint32_t>(i % 997 + 1)})};
    const auto stack = t.stacks.intern_stack(frames);
    memory_event a;
    a.action = memory_action::alloc;
    a.address = at;
    a.size = seg;
    a.stack = stack;
    a.time = 2 * i;
    memory_event oom;
    oom.action = memory_action::oom;
    oom.size = std::uint64_t{1} << 40;
    oom.time = 2 * i + 1;
    for (auto* e : {&a, &oom}) {
      e->lane = lane;
      t.memory.push_back(*e);
    }
    segment s;
    s.address = at;
    s.total_size = seg;
    s.blocks.push_back({at, seg, seg, block_state::active_allocated, stack});
    dump.segments.push_back(std::move(s));
  }
  t.final_allocator_state = std::move(dump);
  t.finalize();
  const auto t0 = clock_type::now();
  const auto findings = find_ooms(t);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (findings.size() != static_cast<std::size_t>(n) ||
      findings.back().allocated != static_cast<std::uint64_t>(n) * seg)
    fmt::print(stderr, "unexpected oom findings {}\n", findings.size());
  return s;
}

// One 1 TiB segment: N allocations of 1 KiB, each with an oom after every tenth (`ooms`), then
// (`frees`) the oldest half freed in order. In one segment's vector of blocks each free moved
// every later block: summary of 160k took 12.8 s, and each oom recounted the whole segment.
trace one_segment(int n, bool ooms, bool frees, bool empty_segment = false) {
  trace t;
  const auto lane = t.lanes.memory(0);
  const std::uint64_t base = std::uint64_t{1} << 40, kib = 1024;
  const auto push = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    memory_event e;
    e.lane = lane;
    e.action = action;
    e.address = address;
    e.size = size;
    e.time = static_cast<std::int64_t>(t.memory.size());
    e.stack = t.stacks.intern_stack(std::vector<frame_id>{
        t.stacks.intern_frame({t.strings.intern("f"), t.strings.intern("train.py"),
                               static_cast<std::uint32_t>(t.memory.size() % 50 + 1)})});
    t.memory.push_back(e);
  };
  push(memory_action::segment_alloc, base, base);
  if (empty_segment) // a segment of no bytes (damaged input): the lane was replayed on a vector
    push(memory_action::segment_alloc, base / 2, 0);
  for (int i = 0; i < n; ++i) {
    push(memory_action::alloc, base + static_cast<std::uint64_t>(i) * kib, kib);
    if (ooms && i % 10 == 9)
      push(memory_action::oom, 0, std::uint64_t{1} << 50);
  }
  for (int i = 0; frees && i < n / 2; ++i)
    push(memory_action::free_completed, base + static_cast<std::uint64_t>(i) * kib, kib);
  t.finalize();
  return t;
}

double fifo_summary_seconds(int n, bool empty_segment) {
  const auto t = one_segment(n, false, true, empty_segment);
  const auto t0 = clock_type::now();
  const auto peaks = memory_peaks(t);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (peaks.size() != 1 || peaks[0].peak_allocated != static_cast<std::int64_t>(n) * 1024)
    fmt::print(stderr, "unexpected memory peak\n");
  return s;
}

// The same history with its dump (the oldest half freed and merged, the newest half live), cut
// to its first half: the window's replay back from the dump and forward to its end ran on one
// vector of blocks (at ef50808: 100k allocations 4.4 s, 200k 22.1 s).
double window_seconds(int n) {
  auto t = one_segment(n, false, true);
  const std::uint64_t base = std::uint64_t{1} << 40, kib = 1024, half = n / 2;
  segment seg;
  seg.address = base;
  seg.total_size = base;
  seg.type = segment_type::large;
  seg.blocks.push_back({base, half * kib, 0, block_state::inactive, no_stack});
  for (std::uint64_t i = half; i < static_cast<std::uint64_t>(n); ++i)
    seg.blocks.push_back({base + i * kib, kib, kib, block_state::active_allocated, no_stack});
  const auto used = static_cast<std::uint64_t>(n) * kib;
  seg.blocks.push_back({base + used, base - used, 0, block_state::inactive, no_stack});
  t.final_allocator_state = allocator_state{};
  t.final_allocator_state->segments.push_back(std::move(seg));
  const auto t0 = clock_type::now();
  const auto r = select_part(t, {.device = {}, .window = time_window{"0ns", "50%"}}, "window");
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (r.undo_mismatches != 0 || t.final_allocator_state->segments.size() != 1)
    fmt::print(stderr, "unexpected window replay\n");
  return s;
}

// An expandable segment grown N times by 8 MiB of pages, a 2 MiB block allocated in each
// before the next, with its dump: each mapping joined the whole segment's fragments, forward
// and in the derivation back from the dump (`trace summary` of such a snapshot at 2604e0c: 4k
// mappings 0.23 s, 8k 1.06 s).
double expandable_growth_seconds(int n) {
  trace t;
  const auto lane = t.lanes.memory(0);
  const std::uint64_t base = std::uint64_t{1} << 40, mib = std::uint64_t{1} << 20;
  const auto push = [&](memory_action action, std::uint64_t address, std::uint64_t size) {
    t.memory.push_back({.time = static_cast<std::int64_t>(t.memory.size()),
                        .lane = lane,
                        .action = action,
                        .address = address,
                        .size = size});
  };
  segment seg;
  seg.address = base;
  seg.total_size = 8 * mib * static_cast<std::uint64_t>(n + 1);
  seg.is_expandable = true;
  push(memory_action::segment_map, base, 8 * mib);
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
    push(memory_action::alloc, base + i * 8 * mib, 2 * mib);
    push(memory_action::segment_map, base + (i + 1) * 8 * mib, 8 * mib);
    seg.blocks.push_back(
        {base + i * 8 * mib, 2 * mib, 2 * mib, block_state::active_allocated, no_stack});
    seg.blocks.push_back({base + i * 8 * mib + 2 * mib,
                          6 * mib + (i + 1 == static_cast<std::uint64_t>(n) ? 8 * mib : 0), 0,
                          block_state::inactive, no_stack});
  }
  t.final_allocator_state = allocator_state{};
  t.final_allocator_state->segments.push_back(std::move(seg));
  t.finalize();
  const auto t0 = clock_type::now();
  const auto peaks = memory_peaks(t);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (peaks.size() != 1 || peaks[0].mismatched_events != 0 ||
      peaks[0].peak_allocated != static_cast<std::int64_t>(2 * mib) * n)
    fmt::print(stderr, "unexpected expandable replay\n");
  return s;
}

double one_segment_oom_seconds(int n) {
  const auto t = one_segment(n, true, false);
  const auto t0 = clock_type::now();
  const auto findings = find_ooms(t);
  const double s = std::chrono::duration<double>(clock_type::now() - t0).count();
  if (findings.size() != static_cast<std::size_t>(n / 10))
    fmt::print(stderr, "unexpected oom findings {}\n", findings.size());
  return s;
}

template <typename Run> void row(const char* what, const std::vector<int>& sizes, Run&& run) {
  double previous = 0;
  for (const int n : sizes) {
    const double s = run(n);
    fmt::print("{:<30} N={:>7}  {:8.3f} s  {:7.0f} ns/item", what, n, s, s * 1e9 / n);
    if (previous > 0)
      fmt::print("  x{:.1f} from N/2", s / previous);
    fmt::print("\n");
    std::fflush(stdout); // a run killed by the CTest timeout still shows its figures
    previous = s;
  }
}

} // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const std::vector<int> sizes =
      small ? std::vector<int>{100000, 200000} : std::vector<int>{50000, 100000, 200000, 400000};
  fmt::print("peer (f37b310, quadratic): 250k Kineto threads or 150k devices past 60 s\n");
  row("kineto threads + names", sizes, kineto_seconds);
  row("timeline over devices", sizes, timeline_seconds);
  row("live allocations over devices", sizes, leaks_seconds);
  row("oom findings, alloc/oom pairs", small ? std::vector<int>{50000, 100000} : sizes,
      oom_seconds);
  row("summary, one segment, FIFO frees", sizes,
      [](int n) { return fifo_summary_seconds(n, false); });
  row("the same beside a size-0 one", sizes, [](int n) { return fifo_summary_seconds(n, true); });
  row("oom findings in one segment", sizes, one_segment_oom_seconds);
  row("window of one segment", sizes, window_seconds);
  row("expandable segment growing", small ? std::vector<int>{25000, 50000} : sizes,
      expandable_growth_seconds);
  return 0;
}
