// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The lookup tables behind the event columns' ids, read-only and copied once per call: the
// strings (name_id, category_id, ...), the lanes (lane, target_lane), the frames and the stacks
// (stack_id), and the collectives of communication kernels (by correlation). tensordiag.trace
// resolves the columns into pandas categoricals with them.
#include <tensordiag/trace/lane_table.hpp>
#include <tensordiag/trace/stack_table.hpp>
#include <tensordiag/trace/string_table.hpp>
#include <tensordiag/trace/trace.hpp>

#include <pybind11/stl.h>
#include <string>
#include <utility>

#include "bindings.hpp"

namespace tdiag::python {
namespace {

using namespace tdiag::trace;

const char* lane_kind_name(lane_kind kind) {
  switch (kind) {
  case lane_kind::gpu_stream:
    return "gpu_stream";
  case lane_kind::host_thread:
    return "host_thread";
  case lane_kind::device_memory:
    return "device_memory";
  }
  return "unknown";
}

py::list strings(const tdiag::trace::trace& t) {
  py::list out(t.strings.size());
  for (std::size_t i = 0; i < t.strings.size(); ++i)
    out[i] = py::str(std::string(t.name(static_cast<string_id>(i))));
  return out;
}

// One row per lane: (kind, group, id, name); group is the device or the process, id the stream
// or the thread.
py::list lanes(const tdiag::trace::trace& t) {
  py::list out;
  for (const auto& l : t.lanes.lanes())
    out.append(py::make_tuple(lane_kind_name(l.kind), l.group, l.id, std::string(t.name(l.name))));
  return out;
}

// One row per frame id: (function, file, line); frame 0 is the empty frame.
py::list frames(const tdiag::trace::trace& t) {
  py::list out;
  for (std::size_t i = 0; i < t.stacks.frame_count(); ++i) {
    const auto& f = t.stacks.frame_at(static_cast<frame_id>(i));
    out.append(
        py::make_tuple(std::string(t.name(f.function)), std::string(t.name(f.file)), f.line));
  }
  return out;
}

// One tuple of frame ids per stack id, innermost first; stack 0 is the empty stack.
py::list stacks(const tdiag::trace::trace& t) {
  py::list out;
  for (std::size_t i = 0; i < t.stacks.stack_count(); ++i) {
    const auto ids = t.stacks.stack(static_cast<stack_id>(i));
    py::tuple row(ids.size());
    for (std::size_t k = 0; k < ids.size(); ++k)
      row[k] = ids[k];
    out.append(std::move(row));
  }
  return out;
}

// One row per communication kernel whose source named its collective (Kineto's "Process Group
// Name", "Process Group Ranks", "Collective name", "Group size", "Seq"): (correlation, group,
// group_ranks, collective, group_size, seq); -1 where the source gave no number.
py::list collectives(const tdiag::trace::trace& t) {
  py::list out;
  for (const auto& c : t.collectives)
    out.append(py::make_tuple(c.correlation, std::string(t.name(c.group)),
                              std::string(t.name(c.group_ranks)), std::string(t.name(c.collective)),
                              c.group_size, c.seq));
  return out;
}

} // namespace

void bind_trace_tables(py::module_& m, const trace_accessor& trace_of) {
  m.def(
      "trace_strings", [trace_of](py::handle h) { return strings(trace_of(h)); }, py::arg("trace"),
      "Every string of the trace, indexed by string id.");
  m.def(
      "trace_lanes", [trace_of](py::handle h) { return lanes(trace_of(h)); }, py::arg("trace"),
      "(kind, group, id, name) per lane id.");
  m.def(
      "trace_frames", [trace_of](py::handle h) { return frames(trace_of(h)); }, py::arg("trace"),
      "(function, file, line) per frame id.");
  m.def(
      "trace_stacks", [trace_of](py::handle h) { return stacks(trace_of(h)); }, py::arg("trace"),
      "The frame ids of each stack id, innermost first.");
  m.def(
      "trace_collectives", [trace_of](py::handle h) { return collectives(trace_of(h)); },
      py::arg("trace"),
      "(correlation, group, group_ranks, collective, group_size, seq) per communication kernel.");
}

} // namespace tdiag::python
