// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/viewer/allocation_bands.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/memory_curve.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tdiag::view {
namespace {

bool is_library_frame(std::string_view file) {
  return file.empty() || file == "??" || file.find("/torch/") != std::string_view::npos ||
         file.find("site-packages") != std::string_view::npos ||
         file.find("/lib/python") != std::string_view::npos || file.front() == '<';
}

double d(std::int64_t v) {
  return static_cast<double>(v);
}
double d(std::uint64_t v) {
  return static_cast<double>(v);
}

struct site_total {
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  std::uint64_t largest = 0;
  std::uint32_t largest_event = no_event;
};

} // namespace

std::string site_name(const trace::trace& t, trace::stack_id stack) {
  const auto frames = t.stacks.stack(stack);
  if (frames.empty())
    return "(no stack)";
  // The innermost user Python frame, else the innermost non-library frame, else the first.
  trace::frame_id pick = frames.front();
  bool found = false;
  for (const auto f : frames) {
    const std::string_view file = t.name(t.stacks.frame_at(f).file);
    if (!is_library_frame(file) && file.ends_with(".py")) {
      pick = f;
      found = true;
      break;
    }
  }
  for (const auto f : frames) {
    if (found)
      break;
    if (!is_library_frame(t.name(t.stacks.frame_at(f).file))) {
      pick = f;
      break;
    }
  }
  const auto& fr = t.stacks.frame_at(pick);
  return fmt::format("{} ({}:{})", t.name(fr.function), t.name(fr.file), fr.line);
}

table_model kernels_table(const trace::trace& t) {
  struct agg {
    std::uint64_t count = 0;
    std::int64_t total = 0;
    std::int64_t max = -1;
    std::uint32_t longest = 0;
  };
  std::unordered_map<trace::string_id, agg> by_name;
  const auto all = t.kernels.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    auto& a = by_name[all[i].name];
    const std::int64_t dur = all[i].end - all[i].start;
    ++a.count;
    a.total += dur;
    if (dur > a.max) {
      a.max = dur;
      a.longest = static_cast<std::uint32_t>(i);
    }
  }
  table_model m("Kernels", {"Kernel", "Count", "Total", "Mean", "Max"});
  for (const auto& [name, a] : by_name) {
    table_row r;
    const double mean = d(a.total) / d(a.count);
    r.cells = {std::string(t.name(name)), fmt::format("{}", a.count), format_duration(d(a.total)),
               format_duration(mean), format_duration(d(a.max))};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), d(a.count), d(a.total), mean, d(a.max)};
    r.target = {event_kind::kernel, a.longest};
    m.add_row(std::move(r));
  }
  m.sort(2, false);
  return m;
}

namespace {

// Totals per stack first (cheap), then merged per site name: many stacks share a site.
std::map<std::string, site_total>
by_site(const trace::trace& t, const std::unordered_map<trace::stack_id, site_total>& stacks) {
  std::map<std::string, site_total> sites;
  for (const auto& [stack, v] : stacks) {
    auto& s = sites[site_name(t, stack)];
    s.count += v.count;
    s.bytes += v.bytes;
    if (s.largest_event == no_event || v.largest > s.largest) {
      s.largest = v.largest;
      s.largest_event = v.largest_event;
    }
  }
  return sites;
}

void add_to(site_total& s, std::uint64_t size, std::uint32_t event) {
  ++s.count;
  s.bytes += size;
  if (s.largest_event == no_event || size > s.largest) {
    s.largest = size;
    s.largest_event = event;
  }
}

// One row per allocation site, largest bytes first; a row leads to the site's largest event.
table_model site_table(const trace::trace& t,
                       const std::unordered_map<trace::stack_id, site_total>& stacks,
                       std::string title, std::vector<std::string> columns) {
  table_model m(std::move(title), std::move(columns));
  for (const auto& [name, s] : by_site(t, stacks)) {
    table_row r;
    r.cells = {name, fmt::format("{}", s.count), format_bytes(d(s.bytes)),
               format_bytes(d(s.largest))};
    r.keys = {std::numeric_limits<double>::quiet_NaN(), d(s.count), d(s.bytes), d(s.largest)};
    r.target = {event_kind::memory, s.largest_event};
    m.add_row(std::move(r));
  }
  m.sort(2, false);
  return m;
}

} // namespace

table_model allocation_sites_table(const trace::trace& t) {
  std::unordered_map<trace::stack_id, site_total> stacks;
  const auto all = t.memory.all();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].action == trace::memory_action::alloc)
      add_to(stacks[all[i].stack], all[i].size, static_cast<std::uint32_t>(i));
  return site_table(t, stacks, "Allocation sites", {"Site", "Allocations", "Bytes", "Largest"});
}

table_model leaks_table(const trace::trace& t) {
  const std::int64_t end = t.span().end;
  std::unordered_map<trace::stack_id, site_total> stacks;
  for (const std::int32_t dev : memory_curve::devices(t))
    for (const auto& a : pair_allocations(t, dev, end))
      if (a.alive_at_end)
        add_to(stacks[a.stack], a.size, a.alloc_event);
  return site_table(t, stacks, "Leaks (alive at end)",
                    {"Site", "Live allocations", "Live bytes", "Largest"});
}

table_model oom_table(const trace::trace& t) {
  table_model m("Out of memory",
                {"Time", "Device", "Requested", "Device free", "Allocated", "Reserved", "Verdict"});
  const auto all = t.memory.all();
  const std::int64_t origin = t.span().begin;
  std::map<std::int32_t, memory_curve> curves;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& e = all[i];
    if (e.action != trace::memory_action::oom)
      continue;
    auto it = curves.find(e.device);
    if (it == curves.end())
      it = curves.emplace(e.device, memory_curve::build(t, e.device)).first;
    const memory_column c = it->second.at(e.time);
    const std::int64_t cached_free = c.reserved_max - c.allocated_max;
    std::string verdict;
    if (e.device_free >= e.size)
      verdict = "device has room: a per-process limit (or fragmentation) refused it";
    else if (cached_free >= static_cast<std::int64_t>(e.size))
      verdict = "fragmentation: enough cached bytes, no block large enough";
    else
      verdict = "genuinely out of memory";
    table_row r;
    r.cells = {format_duration(d(e.time - origin)),
               fmt::format("{}", e.device),
               format_bytes(d(e.size)),
               format_bytes(d(e.device_free)),
               format_bytes(d(c.allocated_max)),
               format_bytes(d(c.reserved_max)),
               verdict};
    r.keys = {d(e.time),
              d(static_cast<std::int64_t>(e.device)),
              d(e.size),
              d(e.device_free),
              d(c.allocated_max),
              d(c.reserved_max),
              std::numeric_limits<double>::quiet_NaN()};
    r.filter_text = verdict;
    r.target = {event_kind::memory, static_cast<std::uint32_t>(i)};
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
