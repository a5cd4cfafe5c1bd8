// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/summary_analysis.hpp>
#include <tensordiag/viewer/allocation_bands.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace tdiag::view {
namespace {

double d(std::int64_t v) {
  return static_cast<double>(v);
}
double d(std::uint64_t v) {
  return static_cast<double>(v);
}

} // namespace

std::string site_name(const trace::trace& t, trace::stack_id stack) {
  return trace::describe_site(t, stack);
}

table_model kernels_table(const trace::trace& t) {
  table_model m("Kernels", {"Kernel", "Count", "Total", "Mean", "Max"});
  for (const auto& k : trace::kernel_stats(t)) {
    table_row r;
    const double mean = d(k.total_ns) / d(k.count);
    r.cells = {std::string(t.name(k.name)), fmt::format("{}", k.count),
               format_duration(d(k.total_ns)), format_duration(mean), format_duration(d(k.max_ns))};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), d(k.count), d(k.total_ns), mean,
              d(k.max_ns)};
    r.target = {event_kind::kernel, static_cast<std::uint32_t>(k.longest)};
    m.add_row(std::move(r));
  }
  m.sort(2, false);
  return m;
}

table_model allocation_sites_table(const trace::trace& t) {
  table_model m("Allocation sites", {"Site", "Allocations", "Bytes", "Largest"});
  for (const auto& s : trace::allocation_sites(t)) {
    table_row r;
    r.cells = {trace::describe_frame(t, s.site), fmt::format("{}", s.count),
               format_bytes(d(s.bytes)), format_bytes(d(s.largest))};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), d(std::uint64_t{s.count}), d(s.bytes),
              d(s.largest)};
    r.target = {event_kind::memory, static_cast<std::uint32_t>(s.largest_event)};
    m.add_row(std::move(r));
  }
  m.sort(2, false);
  return m;
}

table_model leaks_table(const trace::trace& t) {
  return leaks_table(t, trace::find_leaks(t));
}

table_model leaks_table(const trace::trace& t, const trace::leak_result& leaks) {
  // A row leads to the alloc event of the site's largest live allocation, when recorded.
  std::map<std::tuple<std::int32_t, std::uint64_t, std::int64_t>, std::uint32_t> alloc_event;
  const auto all = t.memory.all();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].action == trace::memory_action::alloc)
      alloc_event[{all[i].device, all[i].address, all[i].time}] = static_cast<std::uint32_t>(i);
  std::map<trace::frame_id, const trace::live_allocation*> largest;
  for (const auto& a : leaks.live) {
    auto& l = largest[trace::user_frame(t, a.stack)];
    if (l == nullptr || a.bytes > l->bytes)
      l = &a;
  }
  table_model m("Leaks (alive at end)",
                {"Site", "Live allocations", "Live bytes", "Growth per iteration", "Verdict"});
  for (const auto& s : leaks.sites) {
    table_row r;
    const std::string verdict = s.growing ? "growing" : "not growing";
    r.cells = {trace::describe_frame(t, s.site), fmt::format("{}", s.live_count),
               format_bytes(d(s.live_bytes)),
               s.growing ? format_bytes(d(s.growth_per_iteration)) : std::string("-"), verdict};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), d(std::uint64_t{s.live_count}),
              d(s.live_bytes), d(s.growth_per_iteration), s.growing ? 1.0 : 0.0};
    r.filter_text = r.cells[0] + " " + verdict;
    if (const auto* a = largest[s.site]) {
      const auto it = alloc_event.find({a->device, a->address, a->time});
      if (it != alloc_event.end())
        r.target = {event_kind::memory, it->second};
    }
    m.add_row(std::move(r));
  }
  return m;
}

table_model oom_table(const trace::trace& t) {
  return oom_table(t, trace::find_ooms(t));
}

table_model oom_table(const trace::trace& t, const std::vector<trace::oom_finding>& ooms) {
  table_model m("Out of memory",
                {"Time", "Device", "Requested", "Device free", "Allocated", "Reserved", "Verdict"});
  const std::int64_t origin = t.span().begin;
  const auto all = t.memory.all();
  for (const auto& f : ooms) {
    const auto lane = trace::memory_lane_of(t, f.device);
    const auto events = t.memory.lane(lane);
    const std::string verdict(trace::to_string(f.verdict));
    table_row r;
    r.cells = {format_duration(d(f.time - origin)),
               fmt::format("{}", f.device),
               format_bytes(d(f.requested)),
               format_bytes(d(f.device_free)),
               format_bytes(d(f.allocated)),
               format_bytes(d(f.reserved)),
               verdict};
    r.keys = {d(f.time),
              d(static_cast<std::int64_t>(f.device)),
              d(f.requested),
              d(f.device_free),
              d(f.allocated),
              d(f.reserved),
              std::numeric_limits<double>::quiet_NaN()};
    r.filter_text = verdict;
    if (f.event_index < events.size())
      r.target = {event_kind::memory,
                  static_cast<std::uint32_t>(&events[f.event_index] - all.data())};
    m.add_row(std::move(r));
  }
  return m;
}

bool diagnostic_time(const trace::trace& t, const diagnostic& dg, std::int64_t& time) {
  auto as_int = [](const field_value* v) -> const std::int64_t* {
    return v ? std::get_if<std::int64_t>(&v->value) : nullptr;
  };
  if (const auto* ns = as_int(dg.find_field("time_ns"))) {
    time = *ns;
    return true;
  }
  if (const auto* launch = as_int(dg.find_field("launch_id"))) {
    for (const auto& k : t.kernels.all())
      if (k.launch_id != 0 && k.launch_id == static_cast<std::uint64_t>(*launch)) {
        time = k.start;
        return true;
      }
  }
  return false;
}

table_model assertions_table(const trace::trace& t, std::span<const report> reports) {
  table_model m("Assertion failures", {"Site", "Message", "Block", "Thread", "Source"});
  const auto all = t.assertions.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& a = all[i];
    table_row r;
    r.cells = {std::string(t.name(a.site)), std::string(t.name(a.message)),
               fmt::format("[{}, {}, {}]", a.block[0], a.block[1], a.block[2]),
               fmt::format("[{}, {}, {}]", a.thread[0], a.thread[1], a.thread[2]), "trace"};
    r.target = {event_kind::assertion, static_cast<std::uint32_t>(i)};
    m.add_row(std::move(r));
  }
  for (std::size_t ri = 0; ri < reports.size(); ++ri) {
    const auto& diags = reports[ri].diagnostics;
    for (std::size_t di = 0; di < diags.size(); ++di) {
      const auto& dg = diags[di];
      if (!dg.code.starts_with("TDIAG-DSA"))
        continue;
      table_row r;
      const auto field_text = [&](std::string_view name) {
        const auto* v = dg.find_field(name);
        return v ? to_text(*v) : std::string();
      };
      r.cells = {dg.location.known() ? fmt::format("{}:{}", dg.location.file, dg.location.line)
                                     : dg.code,
                 dg.message, field_text("block"), field_text("thread"), "report"};
      r.filter_text = r.cells[0] + " " + dg.message;
      r.report = ri;
      r.diagnostic = di;
      r.has_time = diagnostic_time(t, dg, r.time);
      m.add_row(std::move(r));
    }
  }
  return m;
}

table_model diagnostics_table(std::span<const report> reports) {
  table_model m("Report diagnostics", {"Severity", "Code", "Title", "Location"});
  for (std::size_t ri = 0; ri < reports.size(); ++ri) {
    const auto& diags = reports[ri].diagnostics;
    for (std::size_t di = 0; di < diags.size(); ++di) {
      const auto& dg = diags[di];
      table_row r;
      r.cells = {std::string(to_string(dg.level)), dg.code, dg.title,
                 dg.location.known() ? fmt::format("{}:{}", dg.location.file, dg.location.line)
                                     : std::string()};
      r.keys = {static_cast<double>(dg.level), std::numeric_limits<double>::quiet_NaN(),
                std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
      r.filter_text = fmt::format("{} {} {}", dg.code, dg.title, dg.message);
      r.report = ri;
      r.diagnostic = di;
      m.add_row(std::move(r));
    }
  }
  return m;
}

} // namespace tdiag::view
