// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>
#include <vector>

namespace tdiag::trace {

std::optional<time_window> parse_time_window(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos)
    return std::nullopt;
  time_window w{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
  // Percentages resolve against any span: 1 ns tells a malformed side from a good one.
  for (const auto& side : {w.begin, w.end})
    if (!side.empty() && !parse_time_offset(side, 1))
      return std::nullopt;
  return w;
}

std::string bad_window_message(std::string_view text) {
  return fmt::format("'{}' is not A:B, each side a time since the trace's start ({}) or a share "
                     "of its span (40%), either side empty",
                     printable(text), duration_examples);
}

namespace {

// "+2 s", "-1 ns": a time relative to the trace's start.
std::string offset_text(std::int64_t ns) {
  return ns < 0 ? "-" + format_duration(-ns) : "+" + format_duration(ns);
}

} // namespace

std::optional<time_span> resolve_window(const time_window& w, time_span span, std::string* why) {
  // Trace times lie within +-2^60 ns: clamped offsets keep the sums from overflowing.
  constexpr std::int64_t far = std::int64_t{1} << 62;
  const auto at = [&](const std::string& side,
                      std::int64_t otherwise) -> std::optional<std::int64_t> {
    if (side.empty())
      return otherwise;
    const auto offset = parse_time_offset(side, span.duration());
    if (!offset)
      return std::nullopt;
    return span.begin + std::clamp(*offset, -far, far);
  };
  const auto begin = at(w.begin, span.begin);
  const auto end = at(w.end, span.end);
  const auto say = [&](std::string text) {
    if (why != nullptr)
      *why = std::move(text);
    return std::nullopt;
  };
  const auto spans = format_duration(span.duration());
  if (!begin || !end)
    return say(bad_window_message(fmt::format("{}:{}", w.begin, w.end)));
  if (*begin > span.end || *end < span.begin)
    return say(fmt::format("{}..{} lies outside the trace, which spans {}",
                           offset_text(*begin - span.begin), offset_text(*end - span.begin),
                           spans));
  if (*begin > *end)
    return say(fmt::format("the start is after the end (the trace spans {})", spans));
  return time_span{std::max(*begin, span.begin), std::min(*end, span.end)};
}

std::optional<std::int64_t> resolve_instant(std::int64_t offset_ns, time_span span,
                                            std::string* why) {
  if (offset_ns < 0 || offset_ns > span.duration()) {
    if (why != nullptr)
      *why = fmt::format("{} lies outside the trace, which spans {}", offset_text(offset_ns),
                         format_duration(span.duration()));
    return std::nullopt;
  }
  return span.begin + offset_ns;
}

std::optional<std::int64_t> resolve_instant(std::string_view text, time_span span,
                                            std::string* why) {
  const auto offset = parse_time_offset(text, span.duration());
  if (!offset) {
    if (why != nullptr)
      *why = bad_time_message(text);
    return std::nullopt;
  }
  return resolve_instant(*offset, span, why);
}

std::string trace_selection::describe() const {
  std::string out;
  if (device)
    out = fmt::format("device {}", *device);
  if (window)
    out += fmt::format("{}window {}:{}", out.empty() ? "" : ", ", window->begin, window->end);
  return out;
}

namespace {

// Keeps the rows `keep` accepts, in order (a finalized store stays grouped and sorted); a store
// that keeps every row is left as it is (a mapped one stays mapped).
template <typename Record, typename Keep> void keep_rows(event_store<Record>& store, Keep&& keep) {
  if (!std::ranges::all_of(store.all(), keep))
    store.keep_if(keep, [](Record&) {});
}

bool overlaps(const auto& r, time_span w) {
  return end_time(r) >= w.begin && begin_time(r) <= w.end;
}

std::set<std::int32_t> devices_of(const trace& t) {
  std::set<std::int32_t> devices;
  for (const auto& l : t.lanes.lanes())
    if (l.kind != lane_kind::host_thread && l.group >= 0)
      devices.insert(static_cast<std::int32_t>(l.group));
  return devices;
}

// Keeps the rows whose lanes `renumber` keeps, on their new lanes (event_store::keep_if: in place
// when owned); nothing is touched when nothing changes (a mapped store of host rows stays mapped).
template <typename Record>
void keep_renumbered(event_store<Record>& store, const std::vector<lane_id>& renumber) {
  constexpr bool is_flow = std::is_same_v<Record, flow_event>;
  const auto kept = [&](lane_id l) { return l < renumber.size() && renumber[l] != no_lane; };
  const auto keep = [&](const Record& r) {
    if constexpr (is_flow)
      return kept(r.lane) && kept(r.target_lane);
    else
      return kept(r.lane);
  };
  const auto same = [&](const Record& r) {
    if constexpr (is_flow)
      return renumber[r.lane] == r.lane && renumber[r.target_lane] == r.target_lane;
    else
      return renumber[r.lane] == r.lane;
  };
  if (std::ranges::all_of(store.all(), [&](const Record& r) { return keep(r) && same(r); }))
    return;
  store.keep_if(keep, [&](Record& r) {
    r.lane = renumber[r.lane];
    if constexpr (is_flow)
      r.target_lane = renumber[r.target_lane];
  });
}

// Removes the lanes of other devices and renumbers the rest; every lane field follows.
void keep_device(trace& t, std::int32_t device) {
  std::vector<lane_id> renumber(t.lanes.size(), no_lane);
  lane_table lanes;
  for (lane_id id = 0; id < t.lanes.size(); ++id) {
    const auto& l = t.lanes.at(id);
    if (l.kind != lane_kind::host_thread && l.group != device)
      continue;
    renumber[id] = lanes.intern(l.kind, l.group, l.id);
    lanes.set_name(renumber[id], l.name);
  }
  t.for_each_store([&](auto& store) { keep_renumbered(store, renumber); });
  t.lanes = std::move(lanes);
  if (t.final_allocator_state)
    std::erase_if(t.final_allocator_state->segments,
                  [&](const segment& s) { return s.device != device; });
}

// Ranges with their sync_waits, which are keyed by the row's index.
void keep_ranges(trace& t, time_span w) {
  const auto rows = t.ranges.all();
  std::vector<std::uint32_t> index(rows.size(), trace::dropped_range);
  std::vector<range_event> kept;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (overlaps(rows[i], w)) {
      index[i] = static_cast<std::uint32_t>(kept.size());
      kept.push_back(rows[i]);
    }
  if (kept.size() == rows.size())
    return;
  t.move_sync_waits(index);
  t.ranges.adopt(std::move(kept));
}

// The memory events a replay of the window needs (header). The state at the window's end is the
// one the whole trace's replay has there (allocator_replay: every event undone from the dump,
// then the events up to the end applied), so the part answers as the whole does at that instant:
// undo alone is not exact (a PyTorch event carries the rounded request, and a block the
// allocator did not split is larger), replay forward from the derived start is.
std::size_t keep_memory(trace& t, time_span w) {
  if (!t.final_allocator_state) {
    keep_rows(t.memory, [&](const memory_event& e) { return e.time <= w.end; });
    return 0;
  }
  std::size_t mismatches = 0;
  // Each lane's state at the window's end, put in the dump once every lane is replayed (the
  // derivation reads the dump, sorted).
  std::vector<std::pair<std::int32_t, allocator_state>> at_end;
  for (lane_id lane = 0; lane < t.lanes.size(); ++lane) {
    const auto events = t.memory.lane(lane);
    if (events.empty() || events.back().time <= w.end)
      continue; // nothing after the window on this allocator: the dump holds there already
    // Back to the lane's start (the replay every analysis derives it by) and forward to the
    // window's end, as the timeline replays to an instant.
    std::size_t missed = 0;
    at_end.emplace_back(static_cast<std::int32_t>(t.lanes.at(lane).group),
                        allocator_state_after(t, lane, events_until(events, w.end), &missed));
    mismatches += missed;
  }
  auto& state = *t.final_allocator_state;
  for (auto& [lane_device, s] : at_end) {
    const auto device = lane_device; // (a lambda may not capture a structured binding in clang 14)
    std::erase_if(state.segments, [&](const segment& seg) { return seg.device == device; });
    std::ranges::move(s.segments, std::back_inserter(state.segments));
  }
  if (!at_end.empty()) {
    state.sort();
    state.time = std::min(state.time, w.end);
  }
  keep_rows(t.memory, [&](const memory_event& e) { return e.time >= w.begin && e.time <= w.end; });
  return mismatches;
}

void keep_window(trace& t, time_span w, selection_result& result) {
  keep_rows(t.kernels, [&](const kernel_event& r) { return overlaps(r, w); });
  keep_rows(t.copies, [&](const copy_event& r) { return overlaps(r, w); });
  keep_rows(t.api_calls, [&](const api_event& r) { return overlaps(r, w); });
  keep_ranges(t, w);
  keep_rows(t.markers, [&](const marker_event& r) { return overlaps(r, w); });
  result.undo_mismatches = keep_memory(t, w);
  keep_rows(t.assertions, [&](const assertion_event& r) { return overlaps(r, w); });
  keep_rows(t.flows, [&](const flow_event& f) {
    return std::max(f.time, f.target_time) >= w.begin && std::min(f.time, f.target_time) <= w.end;
  });
  // A counter holds its value until the next sample: the last sample before the window is its
  // value at the window's start, so it stays.
  std::vector<std::int64_t> last_before(t.lanes.size(), std::numeric_limits<std::int64_t>::min());
  for (const auto& c : t.counters.all())
    if (c.time < w.begin && c.lane < last_before.size())
      last_before[c.lane] = std::max(last_before[c.lane], c.time);
  keep_rows(t.counters, [&](const counter_event& c) {
    return overlaps(c, w) || (c.lane < last_before.size() && c.time == last_before[c.lane]);
  });
}

void keep_collectives(trace& t) {
  std::vector<std::uint32_t> correlations;
  for (const auto& k : t.kernels.all())
    if (k.correlation != 0)
      correlations.push_back(k.correlation);
  std::ranges::sort(correlations);
  std::erase_if(t.collectives, [&](const collective_info& c) {
    return !std::ranges::binary_search(correlations, c.correlation);
  });
}

} // namespace

selection_result select_part(trace& t, const trace_selection& s, std::string_view source) {
  selection_result result;
  result.events_before = t.event_count();
  t.finalize(); // grouped by lane and sorted: the undo of later memory events relies on it
  const time_span whole = t.span();
  result.window = whole;
  // Both checked before anything is cut; the window goes first, so the device step moves only
  // what the window kept.
  if (s.device) {
    const auto devices = devices_of(t);
    if (!devices.contains(*s.device))
      throw_input_error(
          codes::no_such_device, "no such device in the trace",
          fmt::format("{}: --device {}: the trace has no device {} (it has {})", printable(source),
                      *s.device, *s.device,
                      devices.empty()
                          ? std::string("no GPU devices")
                          : fmt::format("{} {}", devices.size() == 1 ? "device" : "devices",
                                        fmt::join(devices, ", "))),
          "pick one of the devices the trace has (tdiag trace summary lists them)",
          {{"file", std::string(source)}});
  }
  if (s.window) {
    std::string why;
    const auto w = resolve_window(*s.window, result.window, &why);
    if (!w)
      throw_input_error(
          codes::bad_window, "bad time window",
          fmt::format("{}: --window {}:{}: {}", printable(source), s.window->begin, s.window->end,
                      why),
          fmt::format("give --window A:B with A <= B inside the trace, each a time since its "
                      "start ({}) or a share of its span (40%); an empty side is the start or "
                      "the end",
                      duration_examples),
          {{"file", std::string(source)}});
    result.window = *w;
    keep_window(t, *w, result);
  }
  if (s.device)
    keep_device(t, *s.device);
  keep_collectives(t);
  // What was kept, with the window on the whole trace's axis: the part's own times start at its
  // first event. A part of a part (a .tdtrace written from a selection, opened with another)
  // says both.
  auto said = s.describe();
  if (s.window)
    said += fmt::format(" = {}..{} of {}", offset_text(result.window.begin - whole.begin),
                        offset_text(result.window.end - whole.begin),
                        format_duration(whole.duration()));
  auto& props = t.metadata.properties;
  const auto earlier = std::ranges::find(props, selection_property,
                                         [](const auto& p) { return std::string_view(p.first); });
  if (earlier != props.end())
    earlier->second += "; " + said;
  else
    props.emplace_back(std::string(selection_property), std::move(said));
  t.finalize();
  result.events_kept = t.event_count();
  return result;
}

} // namespace tdiag::trace
