// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// View-model costs without a window:
// - level of detail: building every row's items for a 1600-px frame of the shared Kineto trace
//   (266,570 events) at full zoom-out and zoomed in; the peer figure is a naive pass that
//   visits every event of the view, as a renderer without LOD would;
// - allocator scrubbing: state at successive and at random instants over a 1M-event snapshot
//   (keyframe + replay); the peer figure is a replay from the start at each step.
//   --small: 100k events (CTest, label benchmark).
// - --rows N [R]: the level of detail and the memory envelope on N generated events in R rows
//   (default 8) and N memory samples, at full zoom-out, 1 %, 0.01 % and the deepest zoom, a
//   jump each frame: the pixel-bounded cost at 1M/10M/100M events without building a trace.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/synthetic_history.hpp>
#include <tensordiag/viewer/lane_layout.hpp>
#include <tensordiag/viewer/lod.hpp>
#include <tensordiag/viewer/memory_curve.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <string>
#include <time.h>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;
using namespace tdiag::view;

double ms_since(clock_type::time_point t0) {
  return std::chrono::duration<double, std::milli>(clock_type::now() - t0).count();
}

// CPU time of the calling thread: on a shared machine, wall time also counts preemption.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

struct stats {
  double mean = 0;
  double p99 = 0;
  double max = 0;
  double median = 0;
};
stats summarise(std::vector<double> v) {
  stats s;
  if (v.empty())
    return s;
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  s.p99 = v[std::min(v.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(v.size())))];
  s.max = v.back();
  s.median = v[v.size() / 2];
  return s;
}

void bench_lod(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path)) {
    fmt::print("lod: {} not found, skipped\n", path.string());
    return;
  }
  auto t0 = clock_type::now();
  auto loaded = tdiag::trace::load_trace(path);
  const double load_ms = ms_since(t0);
  t0 = clock_type::now();
  const auto layout = lane_layout::build(loaded.trace);
  const double layout_ms = ms_since(t0);
  fmt::print("lod: {} ({} events) loaded in {:.0f} ms, lanes laid out in {:.0f} ms\n",
             path.filename().string(), loaded.trace.event_count(), load_ms, layout_ms);
  time_axis axis;
  axis.set_width(1600);
  const auto span = loaded.trace.span();
  axis.set_limits(span.begin, span.end);
  std::vector<lod_item> items;
  for (const double zoom : {1.0, 100.0, 10'000.0}) {
    axis.fit_all();
    axis.zoom_at(800, zoom);
    std::vector<double> lod_ms;
    std::vector<double> naive_ms;
    std::size_t drawn = 0;
    std::size_t visited = 0;
    for (int rep = 0; rep < 30; ++rep) {
      axis.pan(rep % 2 ? 5.0 : -5.0);
      t0 = clock_type::now();
      drawn = 0;
      for (const auto& tr : layout.tracks())
        for (const auto& row : tr.rows) {
          build_lod(row, axis, {}, items);
          drawn += items.size();
        }
      lod_ms.push_back(ms_since(t0));
      t0 = clock_type::now();
      visited = 0;
      const std::int64_t a = axis.start();
      const std::int64_t b = axis.end();
      for (const auto& tr : layout.tracks())
        for (const auto& row : tr.rows)
          for (std::size_t i = 0; i < row.size(); ++i)
            visited += row.end[i] >= a && row.start[i] <= b;
      naive_ms.push_back(ms_since(t0));
    }
    const auto l = summarise(lod_ms);
    const auto n = summarise(naive_ms);
    fmt::print("lod: zoom x{:<6} {:6} items for {:6} events in view: mean {:.3f} ms, p99 {:.3f} ms "
               "(peer: visiting every event {:.3f} ms)\n",
               zoom, drawn, visited, l.mean, l.p99, n.mean);
  }
}

// Rows of `events` in all, generated in place (`rows` rows of back-to-back kernels 2-40 us
// long with short gaps, a long idle gap now and then), and a memory curve of as many samples:
// the view-models of a 1M/10M/100M-event trace without building the trace itself.
void bench_synthetic_rows(std::size_t events, std::size_t rows) {
  auto t0 = clock_type::now();
  std::vector<row_index> lanes(rows);
  memory_curve curve;
  std::uint64_t h = 88172645463325252ull;
  auto next = [&h] {
    h ^= h << 13, h ^= h >> 7, h ^= h << 17;
    return h;
  };
  std::int64_t last_end = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    auto& row = lanes[r];
    const std::size_t n = events / rows;
    row.start.reserve(n), row.end.reserve(n), row.refs.reserve(n), row.busy_prefix.reserve(n + 1);
    std::int64_t t = 0;
    for (std::size_t i = 0; i < n; ++i) {
      t += 200 + static_cast<std::int64_t>(next() % 3000) +
           (next() % 5000 == 0 ? 50'000'000 : 0); // an idle stretch now and then
      const std::int64_t d = 2000 + static_cast<std::int64_t>(next() % 38'000);
      row.push_back(t, t + d, {event_kind::kernel, static_cast<std::uint32_t>(i)});
      t += d;
    }
    last_end = std::max(last_end, t);
    build_lod_summary(row); // as lane_layout::build does
  }
  for (std::size_t i = 0; i < events; ++i)
    curve.push_back(static_cast<std::int64_t>(i) * (last_end / static_cast<std::int64_t>(events)),
                    static_cast<std::int64_t>(next() % (1ull << 34)),
                    static_cast<std::int64_t>(1ull << 35));
  fmt::print("rows: {} events in {} rows and {} memory samples generated in {:.0f} ms\n", events,
             rows, curve.size(), ms_since(t0));
  time_axis axis;
  axis.set_width(1600);
  axis.set_limits(0, last_end);
  std::vector<lod_item> items;
  std::vector<memory_column> cols;
  curve.envelope(axis, cols); // builds the curve's pyramid, as memory_curve::build() does
  const double deepest = static_cast<double>(last_end) / (1600 * time_axis::min_ns_per_px);
  for (const double zoom : {1.0, 100.0, 10'000.0, deepest}) {
    std::vector<double> lod_ms;
    std::vector<double> curve_ms;
    std::size_t drawn = 0;
    for (int rep = 0; rep < 40; ++rep) {
      // A different place each time: the figure includes the cache misses of a jump.
      axis.fit_all();
      axis.zoom_at(1600.0 * static_cast<double>(next() % 1000) / 1000.0, zoom);
      double c0 = thread_cpu_ms();
      drawn = 0;
      for (const auto& row : lanes) {
        build_lod(row, axis, {}, items);
        drawn += items.size();
      }
      lod_ms.push_back(thread_cpu_ms() - c0);
      c0 = thread_cpu_ms();
      curve.envelope(axis, cols);
      curve_ms.push_back(thread_cpu_ms() - c0);
    }
    const auto l = summarise(lod_ms);
    const auto c = summarise(curve_ms);
    fmt::print("rows: zoom x{:<12.0f} {:5} items (thread CPU): lod median {:.3f} ms, max {:.3f} "
               "ms; memory envelope median {:.3f} ms, max {:.3f} ms\n",
               zoom, drawn, l.median, l.max, c.median, c.max);
  }
}

void bench_scrub(std::size_t events) {
  auto t0 = clock_type::now();
  const auto t = tdiag::trace::make_snapshot_trace(events);
  const double gen_ms = ms_since(t0);
  t0 = clock_type::now();
  const tdiag::trace::allocator_replay tl(t, tdiag::trace::memory_lane_of(t, 0),
                                          tdiag::trace::replay_options{});
  tdiag::trace::replay_cursor cursor(tl);
  const double build_ms = ms_since(t0);
  fmt::print("scrub: {} memory events generated in {:.0f} ms; timeline with {} keyframes every {} "
             "events built in {:.0f} ms\n",
             tl.size(), gen_ms, tl.keyframe_count(), tl.keyframe_interval(), build_ms);
  const std::size_t steps = 400;
  std::vector<double> forward;
  std::size_t blocks = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    const std::size_t n = tl.size() * i / steps;
    t0 = clock_type::now();
    const auto& st = cursor.seek(n);
    forward.push_back(ms_since(t0));
    blocks = 0;
    for (const auto& seg : st.segments)
      blocks += seg.blocks.size();
  }
  std::vector<double> random;
  std::uint64_t h = 1;
  for (std::size_t i = 0; i < steps; ++i) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    t0 = clock_type::now();
    (void)cursor.seek(static_cast<std::size_t>((h >> 17) % (tl.size() + 1)));
    random.push_back(ms_since(t0));
  }
  std::vector<double> scratch;
  for (std::size_t i = 1; i <= 3; ++i) {
    t0 = clock_type::now();
    (void)tl.replay_from_start(tl.size() * i / 4);
    scratch.push_back(ms_since(t0));
  }
  const auto f = summarise(forward);
  const auto r = summarise(random);
  fmt::print("scrub: forward steps of {} events: mean {:.3f} ms, p99 {:.3f} ms ({} blocks live at "
             "the end)\n",
             tl.size() / steps, f.mean, f.p99, blocks);
  fmt::print("scrub: random instants: mean {:.3f} ms, p99 {:.3f} ms (peer: replay from the start "
             "{:.1f} ms)\n",
             r.mean, r.p99, summarise(scratch).mean);
}

} // namespace

int main(int argc, char** argv) {
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  if (argc > 2 && std::strcmp(argv[1], "--rows") == 0) {
    bench_synthetic_rows(std::stoull(argv[2]), argc > 3 ? std::stoull(argv[3]) : 8);
    return 0;
  }
  bench_lod(std::filesystem::path(TDIAG_SHARED_DIR) /
            (small ? "traces/train_trace_small.json.gz" : "traces/train_trace_large.json.gz"));
  bench_scrub(small ? 100'000 : 1'000'000);
  return 0;
}
