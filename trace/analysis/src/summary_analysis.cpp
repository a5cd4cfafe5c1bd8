// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/parallel_for.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/memory_series.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace tdiag::trace {
namespace {

// Against the span summarize() computed once: t.span() scans every event, and this runs per
// device (150k devices made the report quadratic).
std::string relative(const summary_result& s, std::int64_t time) {
  return fmt::format("+{}", format_duration(detail::sat_sub(time, s.span.begin)));
}

// The indices of `rows` a report lists: all of them up to `limit`, else the `limit` largest by
// `weight`, in their own order (a trace of 100,000 streams made a report of 100,000 notes and
// 200 MB, past any memory budget the import kept to).
template <typename Row, typename Weight>
std::vector<std::size_t> listed(const std::vector<Row>& rows, std::size_t limit, Weight weight) {
  std::vector<std::size_t> out(rows.size());
  std::iota(out.begin(), out.end(), std::size_t{0});
  if (rows.size() <= limit)
    return out;
  std::nth_element(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(limit), out.end(),
                   [&](std::size_t a, std::size_t b) {
                     const auto wa = weight(rows[a]), wb = weight(rows[b]);
                     return wa != wb ? wa > wb : a < b;
                   });
  out.resize(limit);
  std::sort(out.begin(), out.end());
  return out;
}

// The note for the rows a report leaves out: a code of its own, so that a consumer reading
// TR-201 / TR-203 as one device or stream each never meets one without it.
diagnostic unlisted(std::size_t all, std::size_t shown, std::string_view what,
                    std::string_view by) {
  diagnostic d;
  d.level = severity::note;
  d.code = std::string(codes::lanes_unlisted);
  d.title = fmt::format("{} not listed", what);
  d.message = fmt::format("{} more {} are not listed: the report keeps the {} {} (the "
                          "Python API's Trace.summary() has them all)",
                          all - shown, what, shown, by);
  d.add_field("unlisted", static_cast<std::int64_t>(all - shown));
  d.add_field("what", std::string(what));
  return d;
}

// One device's memory peaks, as the summary report says them.
diagnostic memory_diagnostic(const summary_result& s, const memory_peak& m) {
  diagnostic d;
  d.level = severity::note;
  d.code = codes::memory_peak;
  d.title = "memory peak";
  d.message =
      fmt::format("{}: peak allocated {} at {}, peak reserved {} at {}",
                  m.device < 0 ? std::string("host memory") : fmt::format("device {}", m.device),
                  format_bytes_or_unknown(m.peak_allocated), relative(s, m.peak_allocated_time),
                  format_bytes_or_unknown(m.peak_reserved), relative(s, m.peak_reserved_time));
  d.add_field("device", m.device);
  d.add_field("memory_events", static_cast<std::int64_t>(m.events));
  d.add_field("peak_allocated_bytes", m.peak_allocated);
  d.add_field("peak_allocated_time_ns", m.peak_allocated_time);
  d.add_field("peak_reserved_bytes", m.peak_reserved);
  d.add_field("peak_reserved_time_ns", m.peak_reserved_time);
  d.add_field("final_allocated_bytes", m.final_allocated);
  d.add_field("final_reserved_bytes", m.final_reserved);
  if (m.peak_requested >= 0) {
    d.add_field("peak_requested_bytes", m.peak_requested);
    d.add_field("final_requested_bytes", m.final_requested);
  }
  if (m.oom_events != 0)
    d.add_field("oom_events", static_cast<std::int64_t>(m.oom_events));
  if (m.mismatched_events != 0) {
    d.add_field("mismatched_events", static_cast<std::int64_t>(m.mismatched_events));
    d.notes.push_back(
        m.reported
            ? fmt::format("{} of the {} memory events report an allocated total that does not "
                          "move by their bytes: the figures are the reported totals, while "
                          "`tdiag trace leaks` pairs the events",
                          m.mismatched_events, m.events)
            : fmt::format("{} of the {} memory events do not match the allocator state "
                          "replayed to them (an allocation inside a live block, a free of a "
                          "block that is not there, a segment freed in use): the figures count "
                          "them as the replay applies them",
                          m.mismatched_events, m.events));
  }
  return d;
}

} // namespace

memory_peak memory_peak_of(const trace& t, lane_id lane, unsigned threads) {
  memory_peak p;
  p.lane = lane;
  p.device = static_cast<std::int32_t>(t.lanes.at(lane).group);
  const auto events = t.memory.lane(lane);
  p.events = events.size();
  for (const auto& e : events)
    p.oom_events += e.action == memory_action::oom;
  // One curve for every front end: memory_series (reported totals, else the replay), folded
  // as it is made.
  const auto fold = [&](const memory_sample& s) {
    if (s.allocated > p.peak_allocated)
      p.peak_allocated = s.allocated, p.peak_allocated_time = s.time;
    if (s.reserved > p.peak_reserved)
      p.peak_reserved = s.reserved, p.peak_reserved_time = s.time;
    if (s.requested > p.peak_requested)
      p.peak_requested = s.requested, p.peak_requested_time = s.time;
    p.final_allocated = s.allocated;
    p.final_reserved = s.reserved;
    p.final_requested = s.requested;
  };
  // Mismatches are counted against a dump, or between reported totals and the events' bytes;
  // a replay without a dump (a window that starts mid-run frees blocks it never saw made) is
  // not held to them.
  std::size_t mismatched = 0;
  p.reported = for_each_memory_sample(t, lane, fold, &mismatched, threads);
  if (p.reported || t.final_allocator_state)
    p.mismatched_events = mismatched;
  return p;
}

// Every device's memory peaks, in lane order. Each lane is replayed on its own (derived back to
// its start, then forward), so lanes of several devices are replayed on several threads, and
// the threads lanes leave idle split a lane's replay (for_each_memory_sample).
std::vector<memory_peak> memory_peaks(const trace& t) {
  std::vector<lane_id> lanes;
  std::size_t events = 0;
  for (lane_id l = 0; l < t.lanes.size(); ++l)
    if (has_memory_history(t, l)) {
      lanes.push_back(l);
      events += t.memory.lane(l).size();
    }
  std::vector<memory_peak> out(lanes.size());
  // Threads only where there is work enough to pay for them (0: as many as help).
  const unsigned threads = events < 100'000 ? 1u : 0u;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const unsigned per_lane = threads == 1 || lanes.empty()
                                ? 1u
                                : std::max(1u, static_cast<unsigned>(hardware / lanes.size()));
  detail::parallel_for(lanes.size(), threads,
                       [&](std::size_t i) { out[i] = memory_peak_of(t, lanes[i], per_lane); });
  return out;
}

std::vector<kernel_stat> kernel_stats(const trace& t) {
  std::unordered_map<string_id, kernel_stat> by_name;
  const auto all = t.kernels.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& k = all[i];
    auto& s = by_name[k.name];
    s.name = k.name;
    const std::int64_t d = k.end - k.start;
    if (++s.count == 1 || d > s.max_ns)
      s.longest = i;
    s.total_ns = detail::sat_add(s.total_ns, d);
    s.max_ns = std::max(s.max_ns, d);
  }
  std::vector<kernel_stat> out;
  out.reserve(by_name.size());
  for (auto& [id, s] : by_name)
    out.push_back(s);
  std::sort(out.begin(), out.end(), [&](const kernel_stat& a, const kernel_stat& b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : t.name(a.name) < t.name(b.name);
  });
  return out;
}

summary_result summarize(const trace& t) {
  summary_result s;
  s.span = t.span();
  std::size_t memcpy_n = 0, memset_n = 0;
  for (const auto& c : t.copies.all())
    (c.kind == copy_kind::memset ? memset_n : memcpy_n) += 1;
  std::size_t api[5] = {0, 0, 0, 0, 0};
  for (const auto& a : t.api_calls.all())
    ++api[std::min<std::size_t>(static_cast<std::size_t>(a.kind), 4)];
  s.counts = {{"kernels", t.kernels.size()},
              {"memcpy", memcpy_n},
              {"memset", memset_n},
              {"runtime_calls", api[0]},
              {"driver_calls", api[1]},
              {"cpu_ops", api[2]},
              {"python_functions", api[3]},
              {"other_host_ranges", api[4]},
              {"annotations", t.ranges.size()},
              {"markers", t.markers.size()},
              {"memory_events", t.memory.size()},
              {"flows", t.flows.size()},
              {"counters", t.counters.size()},
              {"assertions", t.assertions.size()}};

  s.memory = memory_peaks(t);

  s.kernels = kernel_stats(t);

  // GPU streams: union of kernel and copy intervals, over the span of all GPU activity.
  std::int64_t gpu_begin = std::numeric_limits<std::int64_t>::max(),
               gpu_end = std::numeric_limits<std::int64_t>::min();
  for (lane_id l = 0; l < t.lanes.size(); ++l) {
    if (t.lanes.at(l).kind != lane_kind::gpu_stream)
      continue;
    const auto ks = t.kernels.lane(l);
    const auto cs = t.copies.lane(l);
    if (ks.empty() && cs.empty())
      continue;
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    spans.reserve(ks.size() + cs.size());
    for (const auto& k : ks)
      spans.emplace_back(k.start, k.end);
    for (const auto& c : cs)
      spans.emplace_back(c.start, c.end);
    std::sort(spans.begin(), spans.end());
    stream_stat st;
    st.lane = l;
    st.device = t.lanes.at(l).group;
    st.stream = t.lanes.at(l).id;
    st.kernels = ks.size();
    st.copies = cs.size();
    std::int64_t cur_begin = spans.front().first, cur_end = spans.front().second;
    for (const auto& [b, e] : spans) {
      if (b > cur_end) {
        st.busy_ns = detail::sat_add(st.busy_ns, cur_end - cur_begin);
        cur_begin = b;
      }
      cur_end = std::max(cur_end, e);
    }
    st.busy_ns += cur_end - cur_begin;
    gpu_begin = std::min(gpu_begin, spans.front().first);
    gpu_end = std::max(gpu_end, cur_end);
    s.streams.push_back(st);
  }
  if (!s.streams.empty()) {
    s.gpu_span = {gpu_begin, gpu_end};
    for (auto& st : s.streams)
      st.busy_fraction = s.gpu_span.duration() > 0 ? static_cast<double>(st.busy_ns) /
                                                         static_cast<double>(s.gpu_span.duration())
                                                   : 0;
  }
  return s;
}

report summary_report(const trace& t, const summary_result& s, std::size_t top) {
  report r;
  r.metadata = make_report_metadata();
  std::size_t total = 0;
  for (const auto& [name, n] : s.counts)
    total += n;
  {
    diagnostic d;
    d.level = severity::note;
    d.code = codes::summary;
    d.title = "trace summary";
    const auto* part = t.metadata.property(selection_property);
    d.message = fmt::format("{}: {} events over {} ({}{}{})", t.metadata.source_path, total,
                            format_duration(s.span.duration()), t.metadata.format,
                            part ? "; only " : "", part ? *part : "");
    d.add_field("format", t.metadata.format);
    if (part)
      d.add_field("selection", *part);
    d.add_field("span_ns", s.span.duration());
    // The times below (peak_*_time_ns) are on the trace's axis, as its events are: the text
    // shows them since `start_ns`; time_origin_ns + a time is its Unix-epoch ns where known.
    d.add_field("start_ns", s.span.begin);
    d.add_field("time_origin_ns", t.metadata.time_origin_ns);
    for (const auto& [name, n] : s.counts)
      if (n != 0)
        d.add_field(name, static_cast<std::int64_t>(n));
    if (const auto* k = t.metadata.property("kineto.events"))
      d.add_field("source_events", *k);
    r.diagnostics.push_back(std::move(d));
  }
  const auto memory =
      listed(s.memory, summary_lanes_listed, [](const memory_peak& m) { return m.peak_reserved; });
  for (const auto i : memory)
    r.diagnostics.push_back(memory_diagnostic(s, s.memory[i]));
  if (memory.size() < s.memory.size())
    r.diagnostics.push_back(unlisted(s.memory.size(), memory.size(), "memory devices",
                                     "with the highest peak reserved"));
  std::int64_t kernel_total = 0;
  for (const auto& k : s.kernels)
    kernel_total = detail::sat_add(kernel_total, k.total_ns);
  for (std::size_t i = 0; i < std::min(top, s.kernels.size()); ++i) {
    const auto& k = s.kernels[i];
    diagnostic d;
    d.level = severity::note;
    d.code = codes::kernel_time;
    d.title = "kernel time";
    const auto name = t.name(k.name);
    const double share = kernel_total > 0 ? 100.0 * static_cast<double>(k.total_ns) /
                                                static_cast<double>(kernel_total)
                                          : 0;
    d.message = fmt::format(
        "#{} {:.1f}% of kernel time: {} x{}, total {}, mean {}, max {}", i + 1, share,
        name.size() > 120 ? fmt::format("{}...", name.substr(0, 117)) : std::string(name), k.count,
        format_duration(k.total_ns), format_duration(k.mean_ns()), format_duration(k.max_ns));
    d.add_field("kernel", std::string(name));
    d.add_field("count", static_cast<std::int64_t>(k.count));
    d.add_field("total_ns", k.total_ns);
    d.add_field("mean_ns", k.mean_ns());
    d.add_field("max_ns", k.max_ns);
    r.diagnostics.push_back(std::move(d));
  }
  const auto streams =
      listed(s.streams, summary_lanes_listed, [](const stream_stat& st) { return st.busy_ns; });
  for (const auto i : streams) {
    const auto& st = s.streams[i];
    diagnostic d;
    d.level = severity::note;
    d.code = codes::stream_activity;
    d.title = "stream activity";
    d.message = fmt::format(
        "device {} stream {}: busy {:.1f}% of the GPU span ({} kernels, {} copies, {} busy)",
        st.device, st.stream, 100.0 * st.busy_fraction, st.kernels, st.copies,
        format_duration(st.busy_ns));
    d.add_field("device", st.device);
    d.add_field("stream", static_cast<std::int64_t>(st.stream));
    d.add_field("kernels", static_cast<std::int64_t>(st.kernels));
    d.add_field("copies", static_cast<std::int64_t>(st.copies));
    d.add_field("busy_ns", st.busy_ns);
    d.add_field("busy_fraction", st.busy_fraction);
    r.diagnostics.push_back(std::move(d));
  }
  if (streams.size() < s.streams.size())
    r.diagnostics.push_back(unlisted(s.streams.size(), streams.size(), "streams", "busiest"));
  return r;
}

} // namespace tdiag::trace
