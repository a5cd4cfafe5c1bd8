// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocation_lifetimes.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/leak_analysis.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace tdiag::trace {
namespace {

constexpr std::int64_t before_history = std::numeric_limits<std::int64_t>::min();

struct key_hash {
  std::size_t operator()(const std::pair<std::int32_t, std::uint64_t>& k) const noexcept {
    return std::hash<std::uint64_t>()(k.second * 31 + static_cast<std::uint64_t>(k.first));
  }
};

} // namespace

std::vector<live_allocation>
live_allocations(const trace& t, std::pair<std::size_t, std::uint64_t>* open_not_in_dump) {
  // Per device, the allocs the program never freed (allocation_lifetimes(), the pairing the
  // viewer's bands use too).
  std::unordered_map<std::pair<std::int32_t, std::uint64_t>, allocation_lifetime, key_hash> open;
  std::vector<live_allocation> out;
  const std::int64_t trace_end = t.span().end; // once: 150k devices must not rescan the events
  for (lane_id lane = 0; lane < t.lanes.size(); ++lane) {
    if (t.lanes.at(lane).kind != lane_kind::device_memory)
      continue;
    const auto device = static_cast<std::int32_t>(t.lanes.at(lane).group);
    for (const auto& a : allocation_lifetimes(t, device, trace_end))
      if (!a.freed_by_user)
        open[{a.device, a.address}] = a;
  }
  if (t.final_allocator_state) {
    for (const auto& seg : t.final_allocator_state->segments) {
      for (const auto& b : seg.blocks) {
        if (b.state == block_state::inactive)
          continue;
        const auto it = open.find({seg.device, b.address});
        if (b.state != block_state::active_allocated) { // pending free: held, not live
          if (it != open.end())
            open.erase(it);
          continue;
        }
        live_allocation a{seg.device, b.address, b.requested_size ? b.requested_size : b.size,
                          before_history, b.stack};
        if (it != open.end()) {
          a.time = it->second.begin;
          if (a.stack == no_stack)
            a.stack = it->second.stack;
          open.erase(it);
        }
        out.push_back(a);
      }
    }
    if (open_not_in_dump != nullptr) {
      *open_not_in_dump = {open.size(), 0};
      for (const auto& [key, a] : open)
        open_not_in_dump->second += a.size;
    }
    return out;
  }
  for (const auto& [key, a] : open)
    out.push_back({a.device, a.address, a.size, a.begin, a.stack});
  std::sort(out.begin(), out.end(), [](const live_allocation& a, const live_allocation& b) {
    return a.time != b.time ? a.time < b.time : a.address < b.address;
  });
  return out;
}

std::vector<std::int64_t> iteration_starts(const trace& t, std::string* source) {
  std::vector<std::int64_t> steps;
  std::map<string_id, std::vector<std::int64_t>> external;
  for (const auto& r : t.ranges.all()) {
    if (r.kind == range_kind::step)
      steps.push_back(r.start);
    else if (r.kind == range_kind::external || r.kind == range_kind::user_annotation)
      external[r.name].push_back(r.start);
  }
  if (steps.size() >= 2) {
    if (source)
      *source = "ProfilerStep ranges";
  } else {
    // The annotation that repeats most (e.g. Optimizer.step#AdamW.step once per iteration).
    const std::vector<std::int64_t>* best = nullptr;
    string_id best_name = no_string;
    for (const auto& [name, starts] : external)
      if (starts.size() >= 2 && (best == nullptr || starts.size() > best->size()))
        best = &starts, best_name = name;
    if (best == nullptr)
      return {};
    steps = *best;
    if (source)
      *source = fmt::format("annotation '{}'", t.name(best_name));
  }
  std::sort(steps.begin(), steps.end());
  steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
  return steps;
}

namespace {

// The median of `v` (0 when empty): robust to one large static allocation in the mix.
std::uint64_t median(std::vector<std::uint64_t> v) {
  if (v.empty())
    return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

} // namespace

leak_result find_leaks(const trace& t) {
  leak_result r;
  std::pair<std::size_t, std::uint64_t> disagree;
  r.live = live_allocations(t, &disagree);
  r.from_dump = t.final_allocator_state.has_value();
  r.open_not_in_dump = disagree.first;
  r.open_not_in_dump_bytes = disagree.second;
  const auto starts = iteration_starts(t, &r.iteration_source);
  r.iterations = starts.empty() ? 0 : starts.size() + 1;
  const auto iteration_of = [&](std::int64_t time) -> std::int64_t {
    if (time == before_history)
      return -1;
    return std::upper_bound(starts.begin(), starts.end(), time) - starts.begin();
  };
  const auto span = t.span();

  struct accum {
    leak_site site;
    std::map<stack_id, std::uint64_t> bytes_by_stack;
    // Without step markers every distinct allocation time counts as one repetition.
    std::map<std::int64_t, std::uint64_t> bytes_by_iteration;
  };
  std::map<frame_id, accum> by_site;
  for (const auto& a : r.live) {
    r.live_bytes += a.bytes;
    r.has_stacks = r.has_stacks || a.stack != no_stack;
    auto& acc = by_site[user_frame(t, a.stack)];
    auto& s = acc.site;
    if (s.live_count == 0)
      s.first_time = s.last_time = a.time;
    s.live_bytes += a.bytes;
    ++s.live_count;
    s.first_time = std::min(s.first_time, a.time);
    s.last_time = std::max(s.last_time, a.time);
    acc.bytes_by_stack[a.stack] += a.bytes;
    if (a.time != before_history)
      acc.bytes_by_iteration[starts.empty() ? a.time : iteration_of(a.time)] += a.bytes;
  }
  for (auto& [frame, acc] : by_site) {
    auto& s = acc.site;
    s.site = frame;
    s.stacks = acc.bytes_by_stack.size();
    s.stack = std::max_element(acc.bytes_by_stack.begin(), acc.bytes_by_stack.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; })
                  ->first;
    const auto& kept = acc.bytes_by_iteration;
    s.iterations = kept.size();
    // Growth: the median of what each repetition after the first kept here.
    std::vector<std::uint64_t> per_iteration;
    if (!starts.empty() && !kept.empty()) {
      // Growing when most iterations since the first kept one kept something here.
      const auto first = kept.begin()->first;
      s.iteration_span = static_cast<std::size_t>(static_cast<std::int64_t>(r.iterations) - first);
      s.coverage = static_cast<double>(s.iterations) / static_cast<double>(s.iteration_span);
      s.growing = s.iterations >= 3 && s.coverage >= 0.5;
      for (auto i = first + 1; i < static_cast<std::int64_t>(r.iterations); ++i) {
        const auto it = kept.find(i);
        per_iteration.push_back(it == kept.end() ? 0 : it->second);
      }
    } else {
      // No markers: growing when kept allocations were made at 3+ moments spread over at
      // least a quarter of the history (setup-time weights are made in one burst).
      const auto spread = s.first_time == before_history ? 0 : s.last_time - s.first_time;
      s.growing = s.iterations >= 3 && span.duration() > 0 && spread * 4 >= span.duration();
      for (auto it = std::next(kept.begin(), kept.empty() ? 0 : 1); it != kept.end(); ++it)
        per_iteration.push_back(it->second);
    }
    s.growth_per_iteration = s.growing ? median(std::move(per_iteration)) : 0;
    r.sites.push_back(s);
  }
  std::sort(r.sites.begin(), r.sites.end(), [](const leak_site& a, const leak_site& b) {
    if (a.growing != b.growing)
      return a.growing;
    if (a.growing && a.growth_per_iteration * a.iterations != b.growth_per_iteration * b.iterations)
      return a.growth_per_iteration * a.iterations > b.growth_per_iteration * b.iterations;
    return a.live_bytes > b.live_bytes;
  });
  return r;
}

diagnostic history_disagrees_warning(const trace& t, std::size_t open, std::uint64_t bytes) {
  diagnostic d;
  d.level = severity::warning;
  d.code = codes::history_disagrees;
  d.title = "the dumped allocator state and its history disagree";
  d.message = fmt::format("{}: {} allocation(s) ({}) that the memory events leave open are not "
                          "allocated in the dumped segments; the live figures follow the dump",
                          t.metadata.source_path, open, format_bytes(bytes));
  d.add_field("allocations", static_cast<std::int64_t>(open));
  d.add_field("bytes", static_cast<std::int64_t>(bytes));
  d.hint = "a snapshot's segments and device_traces come from one torch.cuda.memory._snapshot(); "
           "allocations on other threads while it ran, a file joined from others or an "
           "edited one disagree";
  return d;
}

report leak_report(const trace& t, const leak_result& r, std::size_t top) {
  report out;
  out.metadata = make_report_metadata();
  std::size_t growing = 0;
  for (const auto& s : r.sites)
    growing += s.growing;
  {
    diagnostic d;
    d.level = severity::note;
    d.code = codes::live_at_end;
    d.title = "live allocations at the end";
    d.message = fmt::format("{}: {} in {} allocations alive at the end, from {} sites ({} growing)",
                            t.metadata.source_path, format_bytes(r.live_bytes), r.live.size(),
                            r.sites.size(), growing);
    d.add_field("live_bytes", static_cast<std::int64_t>(r.live_bytes));
    d.add_field("live_allocations", static_cast<std::int64_t>(r.live.size()));
    d.add_field("sites", static_cast<std::int64_t>(r.sites.size()));
    d.add_field("growing_sites", static_cast<std::int64_t>(growing));
    d.add_field("iterations", static_cast<std::int64_t>(r.iterations));
    if (!r.iteration_source.empty())
      d.notes.push_back(fmt::format("iterations from {}", r.iteration_source));
    else
      d.notes.push_back("no step markers: each distinct allocation time counts as one repetition");
    if (!r.from_dump)
      d.notes.push_back("no allocator dump: 'alive at the end' means alive when the recording "
                        "stopped, and allocations made before it started are not seen");
    if (!r.live.empty() && !r.has_stacks)
      d.notes.push_back("the trace records no allocation stacks (Kineto [memory] events): "
                        "allocations of every origin share one site");
    out.diagnostics.push_back(std::move(d));
  }
  if (r.open_not_in_dump != 0)
    out.diagnostics.push_back(
        history_disagrees_warning(t, r.open_not_in_dump, r.open_not_in_dump_bytes));
  const std::int64_t begin = t.span().begin; // once: each call reads every event
  for (std::size_t i = 0; i < std::min(top, r.sites.size()); ++i) {
    const auto& s = r.sites[i];
    diagnostic d;
    d.level = s.growing ? severity::warning : severity::note;
    d.code = s.growing ? codes::growing_site : codes::alive_site;
    d.title = s.growing ? "memory grows at this site" : "memory alive at the end";
    d.location = frame_location(t, s.site);
    const auto where = describe_frame(t, s.site);
    if (s.growing && s.iteration_span != 0)
      d.message = fmt::format("{}: {} alive in {} allocations, growing {} per iteration (kept "
                              "allocations from {} of the last {} iterations)",
                              where, format_bytes(s.live_bytes), s.live_count,
                              format_bytes(s.growth_per_iteration), s.iterations, s.iteration_span);
    else if (s.growing)
      d.message = fmt::format(
          "{}: {} alive in {} allocations, growing {} per repetition over {} allocation times",
          where, format_bytes(s.live_bytes), s.live_count, format_bytes(s.growth_per_iteration),
          s.iterations);
    else
      d.message = fmt::format("{}: {} alive in {} allocations (not growing)", where,
                              format_bytes(s.live_bytes), s.live_count);
    d.add_field("site", where);
    d.add_field("live_bytes", static_cast<std::int64_t>(s.live_bytes));
    d.add_field("live_allocations", static_cast<std::int64_t>(s.live_count));
    d.add_field("iterations", static_cast<std::int64_t>(s.iterations));
    d.add_field("growth_per_iteration_bytes", static_cast<std::int64_t>(s.growth_per_iteration));
    d.add_field("stacks", static_cast<std::int64_t>(s.stacks));
    if (s.iteration_span != 0) {
      d.add_field("iteration_span", static_cast<std::int64_t>(s.iteration_span));
      d.add_field("coverage", s.coverage);
    }
    if (!s.growing && s.iterations >= 3 && s.iteration_span != 0)
      d.notes.push_back(fmt::format(
          "kept allocations from {} of the last {} iterations: made once each, not a growing list",
          s.iterations, s.iteration_span));
    if (s.growing && !r.has_stacks)
      d.notes.push_back("unsure: without stacks this site mixes allocations of every origin; "
                        "record a memory snapshot (torch.cuda.memory._record_memory_history) to "
                        "see which line keeps them");
    if (s.first_time != std::numeric_limits<std::int64_t>::min())
      d.add_field("first_alloc_ns", s.first_time - begin);
    else
      d.notes.push_back("some of these allocations predate the recorded history");
    d.add_field("last_alloc_ns",
                s.last_time == std::numeric_limits<std::int64_t>::min() ? 0 : s.last_time - begin);
    if (s.growing)
      d.hint =
          "something keeps a reference to a tensor made here every iteration (a list that grows, a "
          "history of losses without .item() or .detach()); drop it or store a Python number";
    d.stack = report_stack(t, s.stack);
    out.diagnostics.push_back(std::move(d));
  }
  return out;
}

} // namespace tdiag::trace
