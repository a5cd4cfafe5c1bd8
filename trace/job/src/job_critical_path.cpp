// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// HTA's critical path analysis of one iteration (CriticalPathAnalysis.critical_path_analysis):
// the window of one annotation instance, the host rows that start in it and the GPU rows they
// launched, the graph (job_critical_path_graph.cpp), its longest path and what bounds it.
#include "job_critical_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "job_breakdown.hpp"

namespace tdiag::trace {

std::string_view to_string(path_edge_kind k) noexcept {
  switch (k) {
  case path_edge_kind::operator_kernel:
    return "critical_path_operator";
  case path_edge_kind::dependency:
    return "critical_path_dependency";
  case path_edge_kind::launch_delay:
    return "critical_path_kernel_launch_delay";
  case path_edge_kind::kernel_kernel:
    return "critical_path_kernel_kernel_delay";
  case path_edge_kind::sync:
    break;
  }
  return "critical_path_sync_dependency";
}

std::string_view to_string(path_bound b) noexcept {
  switch (b) {
  case path_bound::cpu:
    return "cpu_bound";
  case path_bound::gpu_compute:
    return "gpu_compute_bound";
  case path_bound::gpu_communication:
    return "gpu_communication_bound";
  case path_bound::kernel_kernel_overhead:
    return "gpu_kernel_kernel_overhead";
  case path_bound::kernel_launch_overhead:
    return "gpu_kernel_launch_overhead";
  case path_bound::data_loading:
    return "data_loading";
  case path_bound::none:
    break;
  }
  return "none";
}

namespace detail {

namespace {

bool is_lock_call(std::string_view n) {
  return n == "cudaHostAlloc" || n == "cudaLaunchKernel" || n == "cudaMemcpyAsync";
}

bool is_blocking_call(std::string_view n) {
  return n == "cudaDeviceSynchronize" || n == "cudaStreamSynchronize" || n == "cudaEventQuery" ||
         n == "cudaEventSynchronize" || n == "cudaMemcpy" || n == "cudaMemcpyAsync";
}

bool is_host_range(range_kind k) {
  return k == range_kind::user_annotation || k == range_kind::step || k == range_kind::other;
}

struct window {
  std::int64_t start = 0, end = 0;
  std::string name;
};

// HTA's selection: the instance-th row (by start) whose name contains the annotation, or the
// whole trace for "". Host rows follow the last-step filter; GPU annotations are kept.
std::optional<window> find_window(const trace& t, const rank_rows& rows, const row_clock& clock,
                                  const std::string& annotation, int instance,
                                  std::string& reason) {
  window w;
  if (annotation.empty()) {
    w.start = INT64_MAX;
    w.end = INT64_MIN;
    for (const auto& a : t.api_calls.all()) {
      const auto iv = clock(a.start, a.end);
      if (rows.step_filter && iv.start >= rows.last_step_start)
        continue;
      w.start = std::min(w.start, iv.start);
      w.end = std::max(w.end, iv.end);
    }
    for (const auto& g : rows.gpu) {
      w.start = std::min(w.start, g.start);
      w.end = std::max(w.end, g.end);
    }
    if (w.start > w.end) {
      reason = "the trace has no events";
      return std::nullopt;
    }
    return w;
  }
  std::vector<std::pair<interval, string_id>> found;
  for (const auto& r : t.ranges.all()) {
    if (r.kind == range_kind::gpu_sync || t.name(r.name).find(annotation) == std::string_view::npos)
      continue;
    const auto iv = clock(r.start, r.end);
    if (is_host_range(r.kind) && rows.step_filter && iv.start >= rows.last_step_start)
      continue;
    found.emplace_back(iv, r.name);
  }
  // HTA matches every row's name: operators and kernels too.
  for (const auto& a : t.api_calls.all()) {
    if (t.name(a.name).find(annotation) == std::string_view::npos)
      continue;
    const auto iv = clock(a.start, a.end);
    if (!(rows.step_filter && iv.start >= rows.last_step_start))
      found.emplace_back(iv, a.name);
  }
  for (const auto& g : rows.gpu)
    if (t.name(g.name).find(annotation) != std::string_view::npos)
      found.emplace_back(interval{g.start, g.end}, g.name);
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
  if (instance < 0 || static_cast<std::size_t>(instance) >= found.size()) {
    reason = found.empty() ? fmt::format("no annotation contains '{}'", annotation)
                           : fmt::format("'{}' has {} instance(s), not an instance {}", annotation,
                                         found.size(), instance);
    return std::nullopt;
  }
  w.start = found[instance].first.start;
  w.end = found[instance].first.end;
  w.name = std::string(t.name(found[instance].second));
  return w;
}

cp_event row_event(const interval& iv, string_id name, std::int64_t process, std::uint64_t thread) {
  cp_event e;
  e.start = iv.start;
  e.end = iv.end;
  e.name = name;
  e.process = process;
  e.thread = thread;
  return e;
}

// The events of the window, host rows first (by start), then GPU rows: HTA's clipped frame.
std::vector<cp_event> window_events(const trace& t, const rank_rows& rows, const row_clock& clock,
                                    const window& w, const std::vector<std::string>& data_load) {
  std::vector<cp_event> events;
  // HTA's find_matches: the patterns escaped, so a name containing one.
  auto loads_data = [&](string_id name) {
    const auto text = t.name(name);
    return std::any_of(data_load.begin(), data_load.end(), [&](const std::string& p) {
      return text.find(p) != std::string_view::npos;
    });
  };
  auto in_window = [&](const interval& iv) {
    return iv.start >= w.start && iv.start <= w.end && iv.end > iv.start &&
           !(rows.step_filter && iv.start >= rows.last_step_start);
  };
  for (const auto& a : t.api_calls.all()) {
    const auto iv = clock(a.start, a.end);
    if (!in_window(iv))
      continue;
    auto e = row_event(iv, a.name, a.process, a.thread);
    e.correlation = a.correlation;
    e.node =
        a.kind == api_kind::cpu_op || a.kind == api_kind::runtime || a.kind == api_kind::driver;
    e.op_or_annotation = a.kind == api_kind::cpu_op;
    e.data_load = loads_data(a.name);
    e.node = e.node || e.data_load;
    const auto name = t.name(a.name);
    e.lock = e.node && is_lock_call(name);
    e.blocking = e.node && is_blocking_call(name);
    events.push_back(e);
  }
  for (const auto& r : t.ranges.all()) {
    if (!is_host_range(r.kind) || r.lane >= t.lanes.size())
      continue;
    const auto iv = clock(r.start, r.end);
    if (!in_window(iv))
      continue;
    auto e = row_event(iv, r.name, t.lanes.at(r.lane).group, t.lanes.at(r.lane).id);
    e.op_or_annotation = r.kind != range_kind::other;
    e.data_load = loads_data(r.name);
    e.node = e.data_load;
    events.push_back(e);
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const cp_event& a, const cp_event& b) { return a.start < b.start; });
  std::unordered_map<std::uint32_t, std::int32_t> launch;
  for (std::size_t i = 0; i < events.size(); ++i)
    if (events[i].correlation != 0)
      launch.try_emplace(events[i].correlation, static_cast<std::int32_t>(i));
  for (const auto& g : rows.gpu) {
    // GPU rows launched from the window. HTA gives Stream Wait Event rows no node: they link
    // the kernels around them (event_links_of).
    const auto it = g.correlation != 0 ? launch.find(g.correlation) : launch.end();
    if (it == launch.end() || t.name(g.name) == "Stream Wait Event")
      continue;
    auto e = row_event({g.start, g.end}, g.name, 0, g.stream);
    e.correlation = g.correlation;
    e.partner = it->second;
    e.gpu = true;
    e.node = true;
    e.kernel = g.is_kernel;
    events.push_back(e);
  }
  // Event and Context Sync rows of newer Kineto have stream -1: HTA keeps them as host rows of
  // the window (no nodes) and still reads them as syncs.
  for (const auto& r : t.ranges.all()) {
    if (r.kind != range_kind::gpu_sync || r.lane >= t.lanes.size() ||
        t.lanes.at(r.lane).id != std::numeric_limits<std::uint64_t>::max())
      continue;
    const auto name = t.name(r.name);
    const auto it = r.correlation != 0 ? launch.find(r.correlation) : launch.end();
    if ((name != "Event Sync" && name != "Context Sync") || it == launch.end() ||
        !in_window(clock(r.start, r.end)))
      continue;
    auto e = row_event(clock(r.start, r.end), r.name, 0, t.lanes.at(r.lane).id);
    e.correlation = r.correlation;
    e.partner = it->second;
    e.gpu = true;
    events.push_back(e);
  }
  return events;
}

bool is_launch_call(std::string_view n) {
  return n == "cudaLaunchKernel" || n == "cudaLaunchKernelExC" || n == "cuLaunchKernel" ||
         n == "cuLaunchKernelEx" || n == "cudaMemcpyAsync" || n == "cudaMemsetAsync";
}

// Where Kineto names the record of a wait (wait_on_cuda_event_record_corr_id, with the stream
// it recorded on, wait_on_stream), HTA's rule: the event follows the last kernel launched on
// that stream, from any thread, before the cudaEventRecord call. Returns, per host call that
// waited (cudaStreamWaitEvent, cudaEventSynchronize), that kernel; 0 where none was launched.
std::unordered_map<std::uint32_t, std::uint32_t>
recorded_waits(const trace& t, const std::unordered_map<std::uint32_t, std::uint64_t>& stream_of) {
  std::unordered_map<std::uint32_t, std::uint32_t> waits;
  if (t.sync_waits.empty())
    return waits;
  std::unordered_map<std::uint32_t, std::uint64_t> record_stream;
  for (const auto& w : t.sync_waits) {
    if (w.record_correlation == 0 || w.range_index >= t.ranges.size())
      continue;
    waits.emplace(t.ranges.all()[w.range_index].correlation, w.record_correlation);
    if (w.stream >= 0)
      record_stream.try_emplace(w.record_correlation, static_cast<std::uint64_t>(w.stream));
  }
  // Launches per stream and the records, in time order over all threads.
  std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::uint32_t>>> launches;
  std::unordered_map<std::uint32_t, std::uint32_t> follows; // record -> kernel
  std::vector<const api_event*> records;
  for (const auto& a : t.api_calls.all()) {
    if (a.kind != api_kind::runtime && a.kind != api_kind::driver)
      continue;
    if (record_stream.contains(a.correlation) && t.name(a.name) == "cudaEventRecord")
      records.push_back(&a);
    else if (const auto s = stream_of.find(a.correlation);
             s != stream_of.end() && is_launch_call(t.name(a.name)))
      launches[s->second].emplace_back(a.start, a.correlation);
  }
  for (auto& [stream, list] : launches)
    std::sort(list.begin(), list.end());
  for (const auto* r : records) {
    const auto& list = launches[record_stream.at(r->correlation)];
    const auto before =
        std::lower_bound(list.begin(), list.end(), std::pair{r->start, std::uint32_t{0}});
    follows[r->correlation] = before == list.begin() ? 0 : std::prev(before)->second;
  }
  for (auto& [call, record] : waits) {
    const auto it = follows.find(record);
    record = it == follows.end() ? 0 : it->second;
  }
  return waits;
}

event_links event_links_of(const trace& t, const rank_rows& rows) {
  std::unordered_map<std::uint32_t, std::uint64_t> kernel_stream, wait_stream;
  for (const auto& g : rows.gpu)
    if (g.correlation != 0)
      (g.is_kernel ? kernel_stream : wait_stream).try_emplace(g.correlation, g.stream);
  const auto recorded_wait = recorded_waits(t, kernel_stream);
  event_links links;
  // Host calls are stored by thread (lane), in time order within one.
  lane_id lane = no_lane;
  std::uint32_t last_launch = 0, recorded = 0;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> waiting; // (stream, src kernel)
  for (const auto& a : t.api_calls.all()) {
    if (a.lane != lane) {
      lane = a.lane;
      last_launch = recorded = 0;
      waiting.clear();
    }
    if (a.kind != api_kind::runtime && a.kind != api_kind::driver)
      continue;
    const auto name = t.name(a.name);
    // The kernel the event waited on follows: as Kineto names it, else the thread's guess.
    const auto exact = recorded_wait.find(a.correlation);
    const auto src = exact != recorded_wait.end() ? exact->second : recorded;
    if (name == "cudaEventRecord") {
      recorded = last_launch;
    } else if (name == "cudaStreamWaitEvent" && src != 0) {
      const auto s = wait_stream.find(a.correlation);
      if (s != wait_stream.end() && kernel_stream.at(src) != s->second)
        waiting.emplace_back(s->second, src);
    } else if ((name == "cudaEventSynchronize" || name == "cudaEventQuery") && src != 0) {
      links.sync[a.correlation] = src;
    } else if (const auto k = kernel_stream.find(a.correlation);
               k != kernel_stream.end() && is_launch_call(name)) {
      std::erase_if(waiting, [&](const auto& w) {
        if (w.first != k->second)
          return false;
        links.wait[a.correlation] = w.second;
        return true;
      });
      last_launch = a.correlation;
    }
  }
  return links;
}

path_bound bound_of(const cp_graph& g, const trace& t, const cp_edge& e) {
  switch (e.type) {
  case cp_edge_type::kernel_kernel:
    return path_bound::kernel_kernel_overhead;
  case cp_edge_type::launch_delay:
    return path_bound::kernel_launch_overhead;
  case cp_edge_type::dependency:
  case cp_edge_type::sync:
    return path_bound::none;
  case cp_edge_type::operator_kernel:
    break;
  }
  if (e.attributed < 0)
    return path_bound::cpu;
  if (!g.events()[e.attributed].gpu)
    return g.events()[e.attributed].data_load ? path_bound::data_loading : path_bound::cpu;
  return classify_kernel(t.name(g.events()[e.attributed].name)) == kernel_class::communication
             ? path_bound::gpu_communication
             : path_bound::gpu_compute;
}

} // namespace

critical_path_result critical_path_of(const trace& t, const rank_rows& rows,
                                      const analysis_options& options) {
  critical_path_result r;
  const bool has_steps = !rows.steps.empty();
  r.annotation = options.critical_path_annotation.value_or(has_steps ? "ProfilerStep" : "");
  r.instance = options.critical_path_instance >= 0   ? options.critical_path_instance
               : has_steps && rows.steps.size() >= 2 ? 1
                                                     : 0;
  const row_clock clock(t, options);
  const auto w = find_window(t, rows, clock, r.annotation, r.instance, r.reason);
  if (!w)
    return r;
  r.instance_name = w->name;
  r.window_start_us = to_us(w->start);
  r.window_end_us = to_us(w->end);

  cp_graph g(window_events(t, rows, clock, *w, options.critical_path_data_load));
  add_host_edges(g, t);
  const auto queue = queue_points_of(t, rows);
  add_gpu_edges(g, t, event_links_of(t, rows), queue.at_enqueue, queue.at_start);
  g.finish();
  r.graph_nodes = g.nodes().size();
  r.graph_edges = g.edges().size();
  const auto path = g.longest_path();
  if (!path.error.empty()) {
    r.reason = path.error;
    return r;
  }
  r.computed = true;
  r.total_us = to_us(path.length);
  r.path_edges = path.edges.size();
  if (!path.edges.empty()) {
    r.path_start_us = to_us(g.nodes()[g.edges()[path.edges.front()].from].ts);
    r.path_end_us = to_us(g.nodes()[g.edges()[path.edges.back()].to].ts);
  }
  for (const auto i : path.edges) {
    const auto& e = g.edges()[i];
    const auto b = static_cast<std::size_t>(bound_of(g, t, e));
    r.bound_by_us[b] += to_us(e.weight);
    ++r.edges_by_bound[b];
    const auto k = static_cast<std::size_t>(e.type); // cp_edge_type is path_edge_kind's order
    r.edge_type_us[k] += to_us(e.weight);
    ++r.edges_by_type[k];
  }
  return r;
}

} // namespace detail
} // namespace tdiag::trace
