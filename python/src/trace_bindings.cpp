// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/diff_analysis.hpp>
#include <tensordiag/trace/job_diff.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/load.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <pybind11/stl.h>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "trace_columns.hpp"

namespace tdiag::python {
namespace {

using namespace tdiag::trace;

// What Trace holds: the loaded trace and the load's warnings, immutable once loaded (the event
// columns are views into it).
struct loaded_trace {
  load_result loaded;
  [[nodiscard]] const tdiag::trace::trace& t() const noexcept { return loaded.trace; }
};
using trace_ptr = std::shared_ptr<loaded_trace>;

// The trace a handle holds. pybind11 hands None over as an empty holder: a TypeError, never a
// null dereference (Trace(None).summary() killed the interpreter).
const tdiag::trace::trace& held(const trace_ptr& p, const char* argument) {
  if (!p)
    throw py::type_error(fmt::format("{}: expected a trace loaded by tensordiag.trace.load(), "
                                     "got None",
                                     argument));
  return p->t();
}

py::tuple span_tuple(time_span s) {
  return py::make_tuple(s.begin, s.end);
}

py::dict summary_data(const tdiag::trace::trace& t, const summary_result& s) {
  py::dict counts;
  for (const auto& [kind, n] : s.counts)
    counts[py::str(kind)] = n;
  py::list memory;
  for (const auto& m : s.memory) {
    py::dict d;
    d["device"] = m.device, d["events"] = m.events, d["peak_allocated"] = m.peak_allocated;
    d["peak_allocated_time"] = m.peak_allocated_time, d["peak_reserved"] = m.peak_reserved;
    d["peak_reserved_time"] = m.peak_reserved_time, d["final_allocated"] = m.final_allocated;
    d["final_reserved"] = m.final_reserved, d["oom_events"] = m.oom_events;
    // -1 where the source has no requested sizes (only PyTorch snapshots do).
    d["peak_requested"] = m.peak_requested, d["peak_requested_time"] = m.peak_requested_time;
    d["final_requested"] = m.final_requested, d["mismatched_events"] = m.mismatched_events;
    memory.append(std::move(d));
  }
  py::list kernels;
  for (const auto& k : s.kernels) {
    py::dict d;
    d["name"] = std::string(t.name(k.name)), d["count"] = k.count, d["total_ns"] = k.total_ns;
    d["max_ns"] = k.max_ns, d["mean_ns"] = k.mean_ns();
    kernels.append(std::move(d));
  }
  py::list streams;
  for (const auto& st : s.streams) {
    py::dict d;
    d["device"] = st.device, d["stream"] = st.stream, d["kernels"] = st.kernels;
    d["copies"] = st.copies, d["busy_ns"] = st.busy_ns, d["busy_fraction"] = st.busy_fraction;
    streams.append(std::move(d));
  }
  py::dict out;
  out["counts"] = counts, out["span"] = span_tuple(s.span),
  out["gpu_span"] = span_tuple(s.gpu_span);
  out["memory"] = memory, out["kernels"] = kernels, out["streams"] = streams;
  return out;
}

py::dict leak_data(const tdiag::trace::trace& t, const leak_result& r) {
  py::list sites;
  for (const auto& s : r.sites) {
    py::dict d;
    d["site"] = describe_frame(t, s.site), d["stacks"] = s.stacks, d["live_bytes"] = s.live_bytes;
    d["live_count"] = s.live_count, d["iterations"] = s.iterations;
    d["growth_per_iteration"] = s.growth_per_iteration, d["first_time"] = s.first_time;
    d["last_time"] = s.last_time, d["growing"] = s.growing;
    sites.append(std::move(d));
  }
  py::dict out;
  out["live_bytes"] = r.live_bytes, out["live_count"] = r.live.size();
  out["iterations"] = r.iterations, out["iteration_source"] = r.iteration_source;
  out["sites"] = sites;
  out["open_not_in_dump"] = r.open_not_in_dump;
  out["open_not_in_dump_bytes"] = r.open_not_in_dump_bytes;
  return out;
}

py::list oom_data(const tdiag::trace::trace& t, const std::vector<oom_finding>& findings) {
  py::list out;
  for (const auto& f : findings) {
    py::list sites;
    for (const auto& s : f.sites) {
      py::dict site;
      site["site"] = describe_frame(t, s.site), site["bytes"] = s.bytes, site["count"] = s.count;
      site["text"] = describe_oom_site(t, s); // as the report's "live:" notes word it
      sites.append(std::move(site));
    }
    py::dict d;
    d["time"] = f.time, d["device"] = f.device, d["requested"] = f.requested;
    d["segment"] = f.segment;
    d["device_free"] = f.device_free, d["reserved"] = f.reserved, d["allocated"] = f.allocated;
    d["free_in_reserved"] = f.free_in_reserved, d["largest_free_block"] = f.largest_free_block;
    d["fragmentation"] = f.fragmentation, d["peak_reserved"] = f.peak_reserved;
    d["released_before"] = f.released_before, d["sites"] = sites;
    d["site_count"] = f.site_count;
    d["verdict"] = std::string(to_string(f.verdict));
    out.append(std::move(d));
  }
  return out;
}

py::dict timeline_data(const timeline_result& r) {
  py::list lanes;
  for (const auto& l : r.lanes) {
    py::dict d;
    d["device"] = l.device, d["event_index"] = l.event_index, d["event_count"] = l.event_count;
    d["segments"] = l.state.segments.size(), d["reserved_bytes"] = l.state.reserved_bytes();
    d["allocated_bytes"] = l.state.allocated_bytes();
    lanes.append(std::move(d));
  }
  py::dict out;
  out["time"] = r.time, out["lanes"] = lanes;
  return out;
}

py::list diff_rows(const std::vector<diff_row>& rows) {
  py::list out;
  for (const auto& row : rows) {
    py::dict d;
    d["key"] = row.key, d["a"] = row.a, d["b"] = row.b, d["delta"] = row.delta();
    d["count_a"] = row.count_a, d["count_b"] = row.count_b;
    out.append(std::move(d));
  }
  return out;
}

py::dict diff_data(const diff_result& r) {
  py::dict out;
  out["sites"] = diff_rows(r.sites), out["kernels"] = diff_rows(r.kernels);
  out["live_a"] = r.live_a, out["live_b"] = r.live_b;
  out["peak_allocated_a"] = r.peak_allocated_a, out["peak_allocated_b"] = r.peak_allocated_b;
  out["peak_reserved_a"] = r.peak_reserved_a, out["peak_reserved_b"] = r.peak_reserved_b;
  return out;
}

// The state at `tdiag trace timeline --at`: a str as the CLI reads it (timeline_at_text:
// "1.5s", a bare number of seconds, or "40%" of the span, of the events where they carry no
// times), or ns since the start.
timeline_result timeline_of(const tdiag::trace::trace& t, const std::optional<std::string>& text,
                            std::int64_t ns) {
  std::string why;
  std::optional<timeline_result> r;
  if (text)
    r = timeline_at_text(t, *text, &why);
  else if (const auto time = resolve_instant(ns, t.span(), &why))
    r = timeline_at(t, *time);
  if (!r)
    throw py::value_error(why);
  return std::move(*r);
}

// Runs `compute` (the analysis and its report) without the GIL, then converts the result with
// `convert`: the pair (figures, report) the Python Result classes wrap.
template <typename Compute, typename Convert>
py::tuple analysed(Compute&& compute, Convert&& convert) {
  std::optional<decltype(compute())> out;
  {
    py::gil_scoped_release release;
    out.emplace(compute());
  }
  return py::make_tuple(convert(out->first), std::move(out->second));
}

py::tuple summary(const trace_ptr& p, std::size_t top) {
  const auto& t = held(p, "trace");
  return analysed(
      [&] {
        auto s = summarize(t);
        auto r = summary_report(t, s, top);
        return std::pair{std::move(s), std::move(r)};
      },
      [&](const summary_result& s) { return summary_data(t, s); });
}

py::tuple leaks(const trace_ptr& p, std::size_t top) {
  const auto& t = held(p, "trace");
  return analysed(
      [&] {
        auto l = find_leaks(t);
        auto r = leak_report(t, l, top);
        return std::pair{std::move(l), std::move(r)};
      },
      [&](const leak_result& l) { return leak_data(t, l); });
}

py::tuple ooms(const trace_ptr& p) {
  const auto& t = held(p, "trace");
  return analysed(
      [&] {
        auto f = find_ooms(t);
        auto r = oom_report(t, f);
        return std::pair{std::move(f), std::move(r)};
      },
      [&](const std::vector<oom_finding>& f) { return oom_data(t, f); });
}

py::tuple timeline(const trace_ptr& p, const py::object& at, std::optional<std::size_t> event,
                   std::size_t segments) {
  const auto& t = held(p, "trace");
  if (at.is_none() == !event.has_value())
    throw py::value_error("give exactly one of at= (a time since the start) or event=");
  const auto text =
      py::isinstance<py::str>(at) ? std::optional(at.cast<std::string>()) : std::nullopt;
  const std::int64_t ns = event || text ? 0 : at.cast<std::int64_t>();
  return analysed(
      [&] {
        auto tl = event ? timeline_after_events(t, *event) : timeline_of(t, text, ns);
        auto r = timeline_report(t, tl, segments);
        return std::pair{std::move(tl), std::move(r)};
      },
      [](const timeline_result& tl) { return timeline_data(tl); });
}

py::tuple diff(const trace_ptr& a, const trace_ptr& b, std::size_t top) {
  const auto &ta = held(a, "a"), &tb = held(b, "b");
  return analysed(
      [&] {
        // The report of `tdiag trace diff A B`, and the one pair's diff for the figures.
        const rank_trace ra{0, &ta, 0}, rb{0, &tb, 0};
        std::vector<diff_result> pair;
        auto r = run_diff_report(std::span(&ra, 1), std::span(&rb, 1),
                                 diff_ops(std::span(&ra, 1), std::span(&rb, 1)),
                                 ta.metadata.source_path, tb.metadata.source_path, top, &pair);
        return std::pair{std::move(pair.front()), std::move(r)};
      },
      [](const diff_result& d) { return diff_data(d); });
}

trace_ptr load(const std::string& path, std::optional<int> device,
               const std::optional<std::string>& window) {
  load_options options;
  options.select = selection_of(device, window);
  py::gil_scoped_release release;
  return std::make_shared<loaded_trace>(loaded_trace{load_trace(path, options)});
}

} // namespace

trace_selection selection_of(std::optional<int> device, const std::optional<std::string>& window) {
  trace_selection s;
  if (device && *device < 0)
    throw py::value_error("device=" + std::to_string(*device) + ": expected a device number >= 0");
  s.device = device;
  if (window) {
    s.window = parse_time_window(*window);
    if (!s.window)
      throw py::value_error("window=" + bad_window_message(*window));
  }
  return s;
}

void bind_trace(py::module_& m) {
  py::class_<loaded_trace, trace_ptr>(m, "Trace", "A loaded trace (immutable).")
      .def_property_readonly("path",
                             [](const loaded_trace& l) { return l.t().metadata.source_path; })
      .def_property_readonly("format", [](const loaded_trace& l) { return l.t().metadata.format; })
      .def_property_readonly("warnings", [](const loaded_trace& l) { return l.loaded.warnings; })
      .def_property_readonly("event_count",
                             [](const loaded_trace& l) { return l.t().event_count(); })
      .def_property_readonly("span", [](const loaded_trace& l) { return span_tuple(l.t().span()); })
      .def_property_readonly("time_origin_ns",
                             [](const loaded_trace& l) { return l.t().metadata.time_origin_ns; })
      .def_property_readonly("dropped_records",
                             [](const loaded_trace& l) { return l.t().metadata.dropped_records; })
      .def_property_readonly("properties",
                             [](const loaded_trace& l) {
                               py::dict out;
                               for (const auto& [k, v] : l.t().metadata.properties) {
                                 if (!out.contains(k))
                                   out[py::str(k)] = v;
                               }
                               return out;
                             })
      .def_property_readonly("string_count",
                             [](const loaded_trace& l) { return l.t().strings.size(); })
      .def(
          "string", [](const loaded_trace& l, string_id id) { return std::string(l.t().name(id)); },
          py::arg("id"), "The text of a string id ('' when out of range).")
      .def(
          "columns",
          [](const py::object& self, const std::string& kind) {
            return event_columns(self.cast<const loaded_trace&>().t(), kind, self);
          },
          py::arg("kind"));
  bind_trace_tables(m, [](py::handle h) -> const tdiag::trace::trace& {
    return h.cast<const loaded_trace&>().t();
  });
  m.def("load", &load, py::arg("path"), py::arg("device"), py::arg("window"));
  m.def("summary", &summary, py::arg("trace"), py::arg("top"));
  m.def("leaks", &leaks, py::arg("trace"), py::arg("top"));
  m.def("oom", &ooms, py::arg("trace"));
  m.def("timeline", &timeline, py::arg("trace"), py::arg("at"), py::arg("event"),
        py::arg("segments"));
  m.def("diff", &diff, py::arg("a"), py::arg("b"), py::arg("top"));
  // The print forms of units.hpp, so that Python's displays show what tdiag prints.
  m.def(
      "format_bytes",
      [](std::int64_t bytes) {
        return bytes < 0 ? format_byte_delta(bytes)
                         : format_bytes(static_cast<std::uint64_t>(bytes));
      },
      py::arg("bytes"));
  m.def("format_duration", &format_duration, py::arg("ns"));
}

} // namespace tdiag::python
