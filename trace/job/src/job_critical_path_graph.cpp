// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The critical-path graph of HTA (hta/analyzers/critical_path_analysis.py, CPGraph), built
// over flat arrays: two nodes per event sorted by time, edges in one vector (an edge added twice
// is merged once the graph is built, as networkx replaces it), and the longest path by one pass
// over a topological order (Kahn's), as networkx's dag_longest_path computes it.
#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "job_critical_path.hpp"

namespace tdiag::trace::detail {

namespace {

// HTA's KERNEL_KERNEL_DELAY_THRESHOLD_US: a longer gap is an unrecognised dependency.
constexpr std::int64_t kernel_kernel_threshold_ns = 1'500'000;
// HTA resets weights of -1 us and below to 0 in the graph (not in its breakdown).
constexpr std::int64_t reset_weight_ns = -1000;

} // namespace

cp_graph::cp_graph(std::vector<cp_event> events) : events_(std::move(events)) {
  for (std::size_t i = 0; i < events_.size(); ++i)
    if (events_[i].node) {
      const auto e = static_cast<std::int32_t>(i);
      nodes_.push_back({events_[i].start, e, true});
      nodes_.push_back({events_[i].end, e, false});
    }
  std::sort(nodes_.begin(), nodes_.end(), [](const cp_node& a, const cp_node& b) {
    if (a.ts != b.ts)
      return a.ts < b.ts;
    if (a.event != b.event)
      return a.event < b.event;
    return a.is_start && !b.is_start;
  });
  start_.assign(events_.size(), 0);
  end_.assign(events_.size(), 0);
  for (std::size_t n = 0; n < nodes_.size(); ++n)
    (nodes_[n].is_start ? start_ : end_)[nodes_[n].event] = static_cast<std::uint32_t>(n);
  edges_.reserve(nodes_.size() * 2);
}

std::size_t cp_graph::add(std::uint32_t from, std::uint32_t to, cp_edge_type type,
                          bool zero_weight) {
  const bool weightless =
      type == cp_edge_type::dependency || type == cp_edge_type::sync || zero_weight;
  edges_.push_back({from, to, type, weightless ? 0 : nodes_[to].ts - nodes_[from].ts, -1});
  return edges_.size() - 1;
}

void cp_graph::finish() {
  // Edges grouped by source (a counting sort keeps their order); a second edge between the same
  // two nodes replaces the first's type and weight in the first's place, as networkx does.
  const auto n = nodes_.size();
  std::vector<std::uint32_t> begin(n + 1, 0), by_source(edges_.size());
  for (const auto& e : edges_)
    ++begin[e.from + 1];
  for (std::size_t i = 0; i < n; ++i)
    begin[i + 1] += begin[i];
  std::vector<std::uint32_t> fill(begin.begin(), begin.end() - 1);
  for (std::size_t i = 0; i < edges_.size(); ++i)
    by_source[fill[edges_[i].from]++] = static_cast<std::uint32_t>(i);
  constexpr auto none = static_cast<std::uint32_t>(-1);
  std::vector<std::uint32_t> first(n, none);
  std::vector<bool> dropped(edges_.size(), false);
  for (std::size_t u = 0; u < n; ++u) {
    for (auto k = begin[u]; k < begin[u + 1]; ++k) {
      const auto i = by_source[k];
      auto& f = first[edges_[i].to];
      if (f == none) {
        f = i;
        continue;
      }
      const auto attributed =
          edges_[i].attributed >= 0 ? edges_[i].attributed : edges_[f].attributed;
      edges_[f] = edges_[i];
      edges_[f].attributed = attributed;
      dropped[i] = true;
    }
    for (auto k = begin[u]; k < begin[u + 1]; ++k)
      first[edges_[by_source[k]].to] = none;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < edges_.size(); ++i)
    if (!dropped[i])
      edges_[kept++] = edges_[i];
  edges_.resize(kept);
}

void cp_graph::attribute(std::size_t edge, std::int32_t src_parent) {
  auto& e = edges_[edge];
  if (e.type != cp_edge_type::operator_kernel && e.type != cp_edge_type::kernel_kernel)
    return;
  const auto& src = nodes_[e.from];
  const auto& dst = nodes_[e.to];
  // The time between two nodes lies in the source when it starts (a child's or a kernel's own
  // time), in the destination when both end (unwinding), else in the source's parent (the gap
  // between two children). A kernel-kernel gap goes to the previous kernel.
  if (e.type == cp_edge_type::kernel_kernel || src.is_start)
    e.attributed = src.event;
  else if (!dst.is_start)
    e.attributed = dst.event;
  else
    e.attributed = src_parent;
}

cp_graph::path cp_graph::longest_path() const {
  path out;
  const auto n = nodes_.size();
  for (const auto& e : edges_)
    if (e.type == cp_edge_type::sync) {
      const auto& a = events_[nodes_[e.from].event];
      const auto& b = events_[nodes_[e.to].event];
      if (a.gpu && b.gpu && a.thread == b.thread) {
        out.error = "a sync edge between two rows of one stream";
        return out;
      }
    }
  // Incoming edges per node in insertion order (networkx's predecessor order): counting sort.
  std::vector<std::uint32_t> in_begin(n + 1, 0), in_edges(edges_.size()), indegree(n, 0);
  for (const auto& e : edges_)
    ++in_begin[e.to + 1];
  for (std::size_t i = 0; i < n; ++i)
    in_begin[i + 1] += in_begin[i];
  std::vector<std::uint32_t> fill(in_begin.begin(), in_begin.end() - 1);
  std::vector<std::uint32_t> out_begin(n + 1, 0), out_edges(edges_.size());
  for (std::size_t i = 0; i < edges_.size(); ++i) {
    in_edges[fill[edges_[i].to]++] = static_cast<std::uint32_t>(i);
    ++out_begin[edges_[i].from + 1];
    ++indegree[edges_[i].to];
  }
  for (std::size_t i = 0; i < n; ++i)
    out_begin[i + 1] += out_begin[i];
  fill.assign(out_begin.begin(), out_begin.end() - 1);
  for (std::size_t i = 0; i < edges_.size(); ++i)
    out_edges[fill[edges_[i].from]++] = static_cast<std::uint32_t>(i);

  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t v = 0; v < n; ++v)
    if (indegree[v] == 0)
      order.push_back(v);
  for (std::size_t head = 0; head < order.size(); ++head)
    for (auto k = out_begin[order[head]]; k < out_begin[order[head] + 1]; ++k)
      if (--indegree[edges_[out_edges[k]].to] == 0)
        order.push_back(edges_[out_edges[k]].to);
  if (order.size() != n) {
    out.error = "the graph has a cycle";
    return out;
  }
  auto weight = [](const cp_edge& e) { return e.weight <= reset_weight_ns ? 0 : e.weight; };
  constexpr auto none = static_cast<std::uint32_t>(-1);
  std::vector<std::int64_t> dist(n, 0);
  std::vector<std::uint32_t> via(n, none); // the edge into the node on its longest path
  for (const auto v : order) {
    std::int64_t best = 0;
    std::uint32_t best_edge = none;
    for (auto k = in_begin[v]; k < in_begin[v + 1]; ++k) {
      const auto& e = edges_[in_edges[k]];
      const auto d = dist[e.from] + weight(e);
      if (best_edge == none || d > best) {
        best = d;
        best_edge = in_edges[k];
      }
    }
    if (best_edge != none && best >= 0) {
      dist[v] = best;
      via[v] = best_edge;
    }
  }
  std::uint32_t last = order.empty() ? none : order.front();
  for (const auto v : order)
    last = dist[v] > dist[last] ? v : last;
  if (last == none)
    return out;
  out.length = dist[last];
  for (auto v = last; via[v] != none; v = edges_[via[v]].from)
    out.edges.push_back(via[v]);
  std::reverse(out.edges.begin(), out.edges.end());
  return out;
}

namespace {

bool shares_runtime_lock(const cp_graph& g, std::uint32_t a, std::uint32_t b) {
  const auto& na = g.nodes()[a];
  const auto& nb = g.nodes()[b];
  return g.events()[na.event].lock && g.events()[nb.event].lock && (na.is_start || !nb.is_start);
}

// Runtime calls that take the CUDA runtime lock complete one at a time: chain their ends, and
// every start seen before an end to that end (HTA's _construct_graph_from_cuda_runtime_events).
void add_lock_edges(cp_graph& g) {
  std::vector<std::uint32_t> starts;
  std::uint32_t last = 0;
  bool have_last = false;
  const auto& nodes = g.nodes();
  for (std::uint32_t n = 0; n < nodes.size(); ++n) {
    if (!g.events()[nodes[n].event].lock)
      continue;
    if (nodes[n].is_start) {
      starts.push_back(n);
    } else {
      while (!starts.empty()) {
        const auto s = starts.back();
        starts.pop_back();
        if (nodes[s].event == nodes[n].event)
          g.attribute(g.add(s, n, cp_edge_type::operator_kernel), nodes[n].event);
        else
          g.add(s, n, cp_edge_type::dependency);
      }
      if (have_last && !nodes[last].is_start)
        g.add(last, n, cp_edge_type::dependency);
    }
    last = n;
    have_last = true;
  }
}

// HTA's compare_events (hta/common/call_stack.py): starts before ends at one instant, the
// longer range first among starts and last among ends, then by event.
struct stack_point {
  std::int32_t event;
  std::int32_t local; ///< the event's index in its thread's list
  std::int64_t time, dur;
  bool start;
};
int compare_points(const stack_point& x, const stack_point& y) {
  if (x.event == y.event)
    return x.start ? -1 : 1;
  if (x.time != y.time)
    return x.time < y.time ? -1 : 1;
  if (x.start == y.start) {
    if (x.dur == y.dur)
      return (x.event < y.event ? -1 : 1) * (x.start ? 1 : -1);
    return (x.dur < y.dur ? 1 : -1) * (x.start ? 1 : -1);
  }
  if (x.dur > 0 && y.dur > 0)
    return x.start ? 1 : -1;
  if (x.dur == 0 && y.dur == 0)
    return x.event < y.event ? -1 : 1;
  return x.start ? -1 : 1;
}

// The children list of the thread's event l is at l + 1; the root's (l = -1) at 0.
std::size_t slot_of(std::int32_t l) {
  return l < 0 ? 0 : static_cast<std::size_t>(l) + 1;
}

// One host thread's call stack as a tree (parent, first child, next sibling), then the DFS of
// HTA's _construct_graph_from_call_stack over it. The tree is indexed by the event's place in
// `thread_events`, never by its id: arrays the size of all events, once per thread, made a
// trace of N one-event threads quadratic.
void add_stack_edges(cp_graph& g, const std::vector<std::int32_t>& thread_events) {
  std::vector<stack_point> points;
  points.reserve(thread_events.size() * 2);
  for (std::size_t l = 0; l < thread_events.size(); ++l) {
    const auto e = thread_events[l];
    const auto& ev = g.events()[e];
    const auto dur = std::max<std::int64_t>(0, ev.end - ev.start);
    const auto local = static_cast<std::int32_t>(l);
    points.push_back({e, local, ev.start, dur, true});
    points.push_back({e, local, ev.start + dur, dur, false});
  }
  std::stable_sort(points.begin(), points.end(), [](const stack_point& a, const stack_point& b) {
    return compare_points(a, b) < 0;
  });
  const auto count = thread_events.size();
  // parent: the parent's event id (-1 at the top); first, last_child, next: thread indices.
  std::vector<std::int32_t> parent(count, -1), first(count + 1, -1), last_child(count + 1, -1),
      next(count, -1);
  std::vector<std::int32_t> stack;
  for (const auto& p : points) {
    if (!p.start) {
      if (!stack.empty())
        stack.pop_back();
      continue;
    }
    const auto up = stack.empty() ? -1 : stack.back();
    parent[p.local] = up < 0 ? -1 : thread_events[up];
    const auto slot = slot_of(up);
    if (last_child[slot] < 0)
      first[slot] = p.local;
    else
      next[last_child[slot]] = p.local;
    last_child[slot] = p.local;
    stack.push_back(p.local);
  }

  std::uint32_t last = 0;
  bool have_last = false;
  int depth = 0;
  std::int32_t last_parent = -1;
  auto visit = [&](std::int32_t l, bool enter) {
    const auto e = thread_events[l];
    if (!g.events()[e].node)
      return;
    const auto node = enter ? g.start_of(e) : g.end_of(e);
    if (have_last && !shares_runtime_lock(g, last, node)) {
      const auto type =
          enter && depth == 0 ? cp_edge_type::dependency : cp_edge_type::operator_kernel;
      const bool zero = !enter && g.events()[e].blocking;
      g.attribute(g.add(last, node, type, zero), last_parent);
    }
    last = node;
    have_last = true;
    last_parent = parent[l];
    depth += enter ? 1 : -1;
  };
  // Iterative DFS: each frame holds the next child to enter.
  struct frame {
    std::int32_t local, child;
  };
  std::vector<frame> todo;
  for (auto c = first[0]; c >= 0; c = next[c]) {
    visit(c, true);
    todo.push_back({c, first[slot_of(c)]});
    while (!todo.empty()) {
      auto& f = todo.back();
      if (f.child < 0) {
        visit(f.local, false);
        todo.pop_back();
        continue;
      }
      const auto k = f.child;
      f.child = next[k];
      visit(k, true);
      todo.push_back({k, first[slot_of(k)]});
    }
  }
}

// HTA merges the backward thread into the forward one when exactly one thread has operators or
// annotations named "...forward..." and exactly one "...autograd...", and they differ.
std::optional<std::uint64_t> only_thread(const cp_graph& g, const trace& t, std::string_view word) {
  std::set<std::uint64_t> threads;
  for (const auto& e : g.events())
    if (!e.gpu && e.op_or_annotation && t.name(e.name).find(word) != std::string_view::npos)
      threads.insert(e.thread);
  if (threads.size() != 1)
    return std::nullopt;
  return *threads.begin();
}

} // namespace

void add_host_edges(cp_graph& g, const trace& t) {
  add_lock_edges(g);
  const auto fwd = only_thread(g, t, "forward");
  const auto bwd = only_thread(g, t, "autograd");
  const bool remap = fwd && bwd && *fwd != *bwd;
  std::map<std::pair<std::int64_t, std::uint64_t>, std::vector<std::int32_t>> threads;
  for (std::size_t i = 0; i < g.events().size(); ++i) {
    const auto& e = g.events()[i];
    if (!e.gpu)
      threads[{e.process, remap && e.thread == *bwd ? *fwd : e.thread}].push_back(
          static_cast<std::int32_t>(i));
  }
  for (const auto& [key, events] : threads)
    add_stack_edges(g, events);
}

void add_gpu_edges(cp_graph& g, const trace& t, const event_links& links,
                   const std::unordered_map<std::uint32_t, int>& at_enqueue,
                   const std::unordered_map<std::uint32_t, int>& at_start) {
  // Kernels by start, syncs by end (a Stream Sync may overlap the copy it waits for).
  std::vector<std::int32_t> rows;
  std::unordered_map<std::uint32_t, std::int32_t> kernel_of; // correlation -> kernel event
  for (std::size_t i = 0; i < g.events().size(); ++i)
    if (const auto& e = g.events()[i]; e.gpu && (e.node || !e.kernel)) {
      rows.push_back(static_cast<std::int32_t>(i));
      if (e.kernel)
        kernel_of.try_emplace(e.correlation, static_cast<std::int32_t>(i));
    }
  auto key = [&](std::int32_t i) {
    const auto& e = g.events()[i];
    return e.kernel ? e.start : e.end;
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](std::int32_t a, std::int32_t b) { return key(a) < key(b); });
  // The end node of the kernel an event link points at, if that kernel is in the window.
  auto linked_end = [&](const std::unordered_map<std::uint32_t, std::uint32_t>& map,
                        std::uint32_t correlation) -> std::optional<std::uint32_t> {
    const auto link = map.find(correlation);
    if (link == map.end())
      return std::nullopt;
    const auto src = kernel_of.find(link->second);
    if (src == kernel_of.end())
      return std::nullopt;
    return g.end_of(src->second);
  };
  std::map<std::uint64_t, std::uint32_t> last; // stream -> end node of its last kernel
  for (const auto i : rows) {
    const auto& e = g.events()[i];
    if (!e.kernel) {
      // Stream Sync waits for its stream, Context Sync for all, Event Sync for the kernel its
      // event follows; each edge goes to the end of the host call that waited.
      const auto name = t.name(e.name);
      if (e.partner < 0 || !g.events()[e.partner].node)
        continue;
      const bool context = name == "Context Sync";
      if (name == "Event Sync") {
        if (const auto src = linked_end(links.sync, g.events()[e.partner].correlation))
          g.add(*src, g.end_of(e.partner), cp_edge_type::sync);
      } else if (context || name == "Stream Sync") {
        for (const auto& [stream, node] : last)
          if (context || stream == e.thread)
            g.add(node, g.end_of(e.partner), cp_edge_type::sync);
      }
      continue;
    }
    const auto start = g.start_of(i);
    g.attribute(g.add(start, g.end_of(i), cp_edge_type::operator_kernel), -1);
    // A kernel after a cudaStreamWaitEvent waits for the kernel the event follows.
    const auto waited = linked_end(links.wait, e.correlation);
    if (waited)
      g.add(*waited, start, cp_edge_type::sync);
    const auto& nodes = g.nodes();
    const auto prev = last.find(e.thread);
    const auto enq = at_enqueue.find(e.correlation);
    const auto began = at_start.find(e.correlation);
    const bool idle_stream = enq != at_enqueue.end() && enq->second == 1 &&
                             began != at_start.end() && began->second == 0;
    if (idle_stream && e.partner >= 0 && g.events()[e.partner].node &&
        (prev == last.end() || nodes[prev->second].ts < g.events()[e.partner].start) &&
        (!waited || nodes[*waited].ts < g.events()[e.partner].start)) {
      g.add(g.start_of(e.partner), start, cp_edge_type::launch_delay);
    } else if (prev != last.end() &&
               nodes[start].ts - nodes[prev->second].ts < kernel_kernel_threshold_ns &&
               (!waited || nodes[*waited].ts < nodes[prev->second].ts)) {
      g.attribute(g.add(prev->second, start, cp_edge_type::kernel_kernel), -1);
    }
    last[e.thread] = g.end_of(i);
  }
}

} // namespace tdiag::trace::detail
