// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/printable.hpp>
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/timeline_analysis.hpp>
#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

namespace tdiag::trace {
namespace {

template <typename IndexOf>
timeline_result timeline(const trace& t, std::int64_t time, IndexOf&& index_of) {
  timeline_result r;
  r.time = time;
  for (lane_id lane = 0; lane < t.lanes.size(); ++lane) {
    if (!has_memory_history(t, lane))
      continue;
    const auto events = t.memory.lane(lane);
    timeline_lane l;
    l.lane = lane;
    l.device = static_cast<std::int32_t>(t.lanes.at(lane).group);
    l.event_count = events.size();
    l.event_index = std::min(index_of(events), events.size());
    // One pass to the index: a replay's keyframes would copy the state 256 times.
    l.state = allocator_state_after(t, lane, l.event_index);
    r.lanes.push_back(std::move(l));
  }
  return r;
}

// The state after the first index_of(lane's events) events of each lane, at the time of the
// latest event applied.
template <typename IndexOf> timeline_result after_events(const trace& t, IndexOf&& index_of) {
  auto r = timeline(t, 0, index_of);
  for (const auto& l : r.lanes)
    if (l.event_index > 0)
      r.time = std::max(r.time, t.memory.lane(l.lane)[l.event_index - 1].time);
  return r;
}

std::string_view state_name(block_state s) {
  switch (s) {
  case block_state::active_allocated:
    return "allocated";
  case block_state::active_pending_free:
    return "pending free";
  case block_state::inactive:
    return "free";
  }
  return "?";
}

} // namespace

timeline_result timeline_at(const trace& t, std::int64_t time) {
  return timeline(t, time,
                  [&](std::span<const memory_event> events) { return events_until(events, time); });
}

timeline_result timeline_after_events(const trace& t, std::size_t index) {
  return after_events(t, [&](std::span<const memory_event>) { return index; });
}

std::optional<timeline_result> timeline_at_text(const trace& t, std::string_view at,
                                                std::string* why) {
  const auto span = t.span();
  if (span.duration() == 0 && t.memory.size() > 1) {
    // A share of each lane's events, read as a share of a span of `scale` ns.
    constexpr std::int64_t scale = std::int64_t{1} << 40;
    const auto share = parse_time_offset(at, scale);
    const auto last = at.find_last_not_of(" \t");
    const bool is_share = last != std::string_view::npos && at[last] == '%';
    if (share && is_share && *share >= 0 && *share <= scale)
      return after_events(t, [&](std::span<const memory_event> events) {
        // events.size() < 2^40 (a lane's rows fit memory): the product stays exact enough.
        return static_cast<std::size_t>(
            std::llround(static_cast<double>(events.size()) * static_cast<double>(*share) /
                         static_cast<double>(scale)));
      });
    if (share) {
      if (why != nullptr)
        *why = is_share
                   ? fmt::format("'{}' lies outside the trace's events (0% to 100%)", printable(at))
                   : fmt::format("the trace's {} memory events carry no times (all at one "
                                 "instant, as in a snapshot without time_us): give a share "
                                 "of them (50%) or --event N",
                                 t.memory.size());
      return std::nullopt;
    }
  }
  const auto time = resolve_instant(at, span, why);
  if (!time)
    return std::nullopt;
  return timeline_at(t, *time);
}

report timeline_report(const trace& t, const timeline_result& r, std::size_t max_segments,
                       std::size_t max_blocks) {
  report out;
  out.metadata = make_report_metadata();
  // One span scan for the report (it walks every event); the offset saturates for any time.
  const std::int64_t since_start = detail::sat_sub(r.time, t.span().begin);
  const auto at = format_duration(since_start);
  for (const auto& l : r.lanes) {
    const auto& s = l.state;
    const state_figures f = s.figures();
    diagnostic d;
    d.level = severity::note;
    d.code = codes::allocator_state;
    d.title = "allocator state";
    d.message = fmt::format(
        "device {} at +{} (after {} of {} events): reserved {} in {} segments, allocated {} in {} "
        "blocks, free {} (largest block {})",
        l.device, at, l.event_index, l.event_count, format_bytes(f.reserved), f.segments,
        format_bytes(f.allocated), f.allocated_blocks, format_bytes(f.free),
        format_bytes(f.largest_free_block));
    d.add_field("device", l.device);
    d.add_field("time_ns", since_start);
    d.add_field("event_index", static_cast<std::int64_t>(l.event_index));
    d.add_field("reserved_bytes", static_cast<std::int64_t>(f.reserved));
    d.add_field("allocated_bytes", static_cast<std::int64_t>(f.allocated));
    d.add_field("pending_free_bytes", static_cast<std::int64_t>(f.pending_free));
    d.add_field("free_bytes", static_cast<std::int64_t>(f.free));
    d.add_field("largest_free_block_bytes", static_cast<std::int64_t>(f.largest_free_block));
    d.add_field("segments", static_cast<std::int64_t>(f.segments));
    d.add_field("allocated_blocks", static_cast<std::int64_t>(f.allocated_blocks));
    out.diagnostics.push_back(std::move(d));

    // The largest segments first.
    std::vector<const segment*> order;
    for (const auto& seg : s.segments)
      order.push_back(&seg);
    std::stable_sort(order.begin(), order.end(), [](const segment* a, const segment* b) {
      return a->total_size > b->total_size;
    });
    for (std::size_t i = 0; i < std::min(max_segments, order.size()); ++i) {
      const auto& seg = *order[i];
      diagnostic sd;
      sd.level = severity::note;
      sd.code = codes::segment;
      sd.title = "segment";
      sd.message = fmt::format(
          "segment 0x{:x} ({}, {}): {} allocated in {} blocks, largest free block {}", seg.address,
          seg.type == segment_type::small   ? "small"
          : seg.type == segment_type::large ? "large"
                                            : "pool",
          format_bytes(seg.total_size), format_bytes(seg.allocated_bytes()), seg.blocks.size(),
          format_bytes(seg.largest_free_block()));
      sd.add_field("device", seg.device);
      sd.add_field("address", fmt::format("0x{:x}", seg.address));
      sd.add_field("size_bytes", static_cast<std::int64_t>(seg.total_size));
      sd.add_field("segment_type", std::string(seg.type == segment_type::small   ? "small"
                                               : seg.type == segment_type::large ? "large"
                                                                                 : "unknown"));
      sd.add_field("allocated_bytes", static_cast<std::int64_t>(seg.allocated_bytes()));
      sd.add_field("blocks", static_cast<std::int64_t>(seg.blocks.size()));
      for (std::size_t j = 0; j < std::min(max_blocks, seg.blocks.size()); ++j) {
        const auto& b = seg.blocks[j];
        sd.notes.push_back(
            fmt::format("0x{:x} {} {}{}", b.address, format_bytes(b.size), state_name(b.state),
                        b.state == block_state::inactive
                            ? std::string()
                            : fmt::format(" at {}", describe_frame(t, user_frame(t, b.stack)))));
      }
      if (seg.blocks.size() > max_blocks)
        sd.notes.push_back(fmt::format("... {} more blocks", seg.blocks.size() - max_blocks));
      out.diagnostics.push_back(std::move(sd));
    }
    if (order.size() > max_segments) {
      diagnostic more;
      more.level = severity::note;
      more.code = codes::segment;
      more.title = "segment";
      more.message = fmt::format("... and {} smaller segments", order.size() - max_segments);
      out.diagnostics.push_back(std::move(more));
    }
  }
  return out;
}

} // namespace tdiag::trace
