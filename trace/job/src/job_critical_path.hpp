// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The critical-path graph (private to job_critical_path*.cpp): flat arrays of events, nodes and
// edges, no per-edge objects. Built by job_critical_path.cpp from one iteration's rows, solved
// by job_critical_path_graph.cpp in linear time over a topological order.
#pragma once

#include <tensordiag/trace/job_analysis.hpp>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tdiag::trace::detail {

enum class cp_edge_type : std::uint8_t {
  operator_kernel = 0, ///< an operator's or kernel's own time, or a stretch inside a parent
  dependency = 1,      ///< nesting order of top-level operators, runtime lock (weight 0)
  launch_delay = 2,    ///< launch call start to kernel start on an idle stream
  kernel_kernel = 3,   ///< previous kernel's end to this kernel's start on a stream
  sync = 4,            ///< GPU work to the host call that waited for it (weight 0)
};
static_assert(static_cast<int>(cp_edge_type::sync) == static_cast<int>(path_edge_kind::sync) &&
                  static_cast<int>(cp_edge_type::kernel_kernel) ==
                      static_cast<int>(path_edge_kind::kernel_kernel) &&
                  static_cast<int>(cp_edge_type::launch_delay) ==
                      static_cast<int>(path_edge_kind::launch_delay),
              "path_edge_kind mirrors cp_edge_type");

/// An event of the iteration: a host row (operator, runtime call, annotation) or a GPU row.
struct cp_event {
  std::int64_t start = 0, end = 0; ///< ns (whole us in HTA mode)
  string_id name = no_string;
  std::int64_t process = 0;
  std::uint64_t thread = 0; ///< host thread, or the GPU stream
  std::uint32_t correlation = 0;
  std::int32_t partner = -1; ///< GPU row: its launch call (an event index); -1 = none
  bool gpu = false;
  bool node = false;             ///< has a start and an end node in the graph
  bool blocking = false;         ///< a synchronising runtime call (its time is the GPU's)
  bool lock = false;             ///< takes the CUDA runtime lock
  bool kernel = false;           ///< GPU kernel, memcpy or memset (not a sync)
  bool op_or_annotation = false; ///< a cpu_op or user_annotation (HTA's forward/backward test)
  bool data_load = false;        ///< named like one of HTA's data_load_events
};

struct cp_node {
  std::int64_t ts = 0;
  std::int32_t event = 0;
  bool is_start = false;
};

struct cp_edge {
  std::uint32_t from = 0, to = 0;
  cp_edge_type type = cp_edge_type::dependency;
  std::int64_t weight = 0;      ///< ns; what HTA's breakdown sums (may be negative)
  std::int32_t attributed = -1; ///< the event the time belongs to; -1 = none
};

class cp_graph {
public:
  explicit cp_graph(std::vector<cp_event> events);

  [[nodiscard]] const std::vector<cp_event>& events() const noexcept { return events_; }
  [[nodiscard]] const std::vector<cp_node>& nodes() const noexcept { return nodes_; }
  [[nodiscard]] const std::vector<cp_edge>& edges() const noexcept { return edges_; }
  [[nodiscard]] std::uint32_t start_of(std::int32_t event) const { return start_[event]; }
  [[nodiscard]] std::uint32_t end_of(std::int32_t event) const { return end_[event]; }

  /// Adds the edge from -> to; returns its index (valid until finish()).
  std::size_t add(std::uint32_t from, std::uint32_t to, cp_edge_type type,
                  bool zero_weight = false);
  /// Merges edges added twice between the same nodes (the later one's type and weight, as
  /// networkx replaces an edge's attributes). Call once, after the last add().
  void finish();
  /// HTA's edge attribution (CPGraph._attribute_edge) with the source's parent event.
  void attribute(std::size_t edge, std::int32_t src_parent);

  /// The longest path (networkx dag_longest_path over weights with -1 us reset to 0): its
  /// edges in order, or an error message for an invalid graph (a cycle, a sync on one stream).
  struct path {
    std::vector<std::size_t> edges;
    std::int64_t length = 0;
    std::string error;
  };
  [[nodiscard]] path longest_path() const;

private:
  std::vector<cp_event> events_;
  std::vector<cp_node> nodes_; ///< sorted by (ts, event)
  std::vector<std::uint32_t> start_, end_;
  std::vector<cp_edge> edges_;
};

/// The graph's edges from host rows: runtime lock, then call stacks per thread.
void add_host_edges(cp_graph& g, const trace& t);
/// CUDA event synchronisation, by correlation ids: the kernel a recorded event follows, for the
/// kernel launched after a cudaStreamWaitEvent on the waiting stream (`wait`) and for a
/// cudaEventSynchronize or cudaEventQuery call (`sync`, read where an Event Sync row names it).
/// Where the trace keeps Kineto's record of a wait (trace::sync_waits), the kernel is the last
/// one launched on the recorded stream before that cudaEventRecord, as HTA takes it; else the
/// record is the thread's last cudaEventRecord before the wait, and its stream that of the
/// thread's last launch before the record (PyTorch records on the current stream).
struct event_links {
  std::unordered_map<std::uint32_t, std::uint32_t> wait; ///< dest kernel -> src kernel
  std::unordered_map<std::uint32_t, std::uint32_t> sync; ///< the host call -> src kernel
};

/// The graph's edges from GPU rows: kernels, launch and kernel-kernel delays, syncs.
void add_gpu_edges(cp_graph& g, const trace& t, const event_links& links,
                   const std::unordered_map<std::uint32_t, int>& at_enqueue,
                   const std::unordered_map<std::uint32_t, int>& at_start);

} // namespace tdiag::trace::detail
