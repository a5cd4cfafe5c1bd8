// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocation_site.hpp>
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/oom_analysis.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "oom_state.hpp"

namespace tdiag::trace {

std::string_view to_string(oom_verdict v) noexcept {
  switch (v) {
  case oom_verdict::fragmentation:
    return "fragmentation";
  case oom_verdict::process_limit:
    return "process_limit";
  case oom_verdict::device_full:
    return "device_full";
  case oom_verdict::unexplained:
    return "unexplained";
  }
  return "?";
}

namespace {

bool changes_state(memory_action a) noexcept {
  return a != memory_action::oom && a != memory_action::snapshot;
}

} // namespace

// One pass forward per lane with an oom (replay_pass): the reserved bytes are followed at every
// event, the state is copied only at an oom that an allocator event precedes. A state per event
// (or per oom, with 256 keyframes) made 100,000 ooms over 100,000 segments take minutes.
std::vector<oom_finding> find_ooms(const trace& t) {
  std::vector<oom_finding> out;
  for (lane_id lane = 0; lane < t.lanes.size(); ++lane) {
    if (t.lanes.at(lane).kind != lane_kind::device_memory)
      continue;
    const auto events = t.memory.lane(lane);
    if (std::none_of(events.begin(), events.end(),
                     [](const memory_event& e) { return e.action == memory_action::oom; }))
      continue;
    replay_pass replay(t, lane);
    std::uint64_t peak_reserved = replay.reserved();
    detail::oom_state at;
    bool stale = true;
    // From the first oom on, the figures follow the segments the steps touch.
    std::optional<detail::live_state> live;
    // Sizes of the segments released since the last alloc or oom, oldest first.
    std::vector<std::uint64_t> released;
    for (std::size_t i = 0; i < events.size(); ++i) {
      const auto& e = events[i];
      peak_reserved = std::max(peak_reserved, replay.reserved()); // the state before event i
      if (e.action != memory_action::oom) {
        if (e.action == memory_action::alloc)
          released.clear();
        else if (e.action == memory_action::segment_free ||
                 e.action == memory_action::segment_unmap)
          released.push_back(e.size);
        stale = stale || changes_state(e.action);
        (void)replay.step();
        continue;
      }
      if (!live) {
        replay.track_segments();
        live.emplace(t);
      }
      if (stale)
        at = live->read(replay);
      stale = false;
      oom_finding f;
      f.event_index = i;
      f.time = e.time;
      f.device = e.device;
      f.requested = e.size;
      f.segment = caching_segment_size(e.size);
      f.device_free = t.detail_of(e).device_free;
      f.stack = e.stack;
      f.reserved = at.figures.reserved;
      f.allocated = at.figures.allocated;
      f.free_in_reserved = at.figures.free;
      f.largest_free_block = at.figures.largest_free_block;
      f.fragmentation = at.figures.fragmentation();
      f.peak_reserved = peak_reserved;
      f.sites = at.sites;
      f.site_count = at.site_count;
      // What the allocator gave back to the driver since the last successful allocation: the
      // caching allocator frees its cached segments and retries before reporting an oom.
      f.released_before = std::move(released);
      released.clear();
      if (f.largest_free_block >= f.requested)
        f.verdict = oom_verdict::unexplained;
      else if (f.free_in_reserved >= f.requested)
        f.verdict = oom_verdict::fragmentation;
      else if (f.device_free >= f.segment) // free cached blocks and new memory do not add up
        f.verdict = oom_verdict::process_limit;
      else
        f.verdict = oom_verdict::device_full;
      out.push_back(std::move(f));
      (void)replay.step();
    }
  }
  return out;
}

report oom_report(const trace& t, const std::vector<oom_finding>& findings, std::size_t top_sites) {
  report out;
  out.metadata = make_report_metadata();
  if (findings.empty()) {
    diagnostic d;
    d.level = severity::note;
    d.code = codes::no_oom_event;
    d.title = "no out-of-memory event";
    d.message = fmt::format("{}: the trace records no 'oom' event", t.metadata.source_path);
    out.diagnostics.push_back(std::move(d));
    return out;
  }
  const auto begin = t.span().begin; // once: it scans every event
  for (const auto& f : findings) {
    diagnostic d;
    d.level = severity::error;
    d.code = codes::out_of_memory;
    d.title = fmt::format("out of memory: {}", to_string(f.verdict));
    const auto ask = format_bytes(f.requested);
    std::string verdict;
    switch (f.verdict) {
    case oom_verdict::process_limit:
      verdict = fmt::format(
          "a per-process memory limit was hit, not a full device: the device still had {} free, "
          "enough for the {} segment the {} request needs, but the process already held {} "
          "reserved and {} + {} = {} is over its cap (the cap lies between {} and {})",
          format_bytes(f.device_free), format_bytes(f.segment), ask, format_bytes(f.reserved),
          format_bytes(f.reserved), format_bytes(f.segment), format_bytes(f.reserved + f.segment),
          format_bytes(f.peak_reserved), format_bytes(f.reserved + f.segment));
      d.hint = "raise or remove the cap (torch.cuda.set_per_process_memory_fraction, or the job's "
               "memory limit), "
               "or make the request smaller";
      break;
    case oom_verdict::fragmentation:
      verdict = fmt::format(
          "fragmentation: the reserved segments hold {} free in total, enough for the {} request, "
          "but the largest free block is only {}",
          format_bytes(f.free_in_reserved), ask, format_bytes(f.largest_free_block));
      d.hint = "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (or a max_split_size_mb) so "
               "free space "
               "can be reused for large requests";
      break;
    case oom_verdict::device_full:
      verdict = fmt::format(
          "the device is genuinely out of memory: it had {} free for the {} segment a {} request "
          "needs, with {} reserved by this process ({} allocated to tensors)",
          format_bytes(f.device_free), format_bytes(f.segment), ask, format_bytes(f.reserved),
          format_bytes(f.allocated));
      d.hint = "reduce the batch size or model footprint (activation checkpointing, lower "
               "precision), or free "
               "what the largest sites below hold";
      break;
    case oom_verdict::unexplained:
      // A request of 0 B never fails in the caching allocator: the event's size is what is off.
      verdict = f.requested == 0
                    ? std::string("a request of 0 B cannot fail: the oom event's size is "
                                  "missing or damaged")
                    : fmt::format("a free block of {} was large enough for the {} request by "
                                  "the replayed state; the recorded history may be incomplete",
                                  format_bytes(f.largest_free_block), ask);
      break;
    }
    d.message = fmt::format("device {}: a request for {} failed: {}", f.device, ask, verdict);
    const auto site = user_frame(t, f.stack);
    d.location = frame_location(t, site);
    d.stack = report_stack(t, f.stack);
    d.add_field("verdict", std::string(to_string(f.verdict)));
    d.add_field("requested_bytes", static_cast<std::int64_t>(f.requested));
    d.add_field("segment_bytes", static_cast<std::int64_t>(f.segment));
    d.add_field("device_free_bytes", static_cast<std::int64_t>(f.device_free));
    d.add_field("reserved_bytes", static_cast<std::int64_t>(f.reserved));
    d.add_field("allocated_bytes", static_cast<std::int64_t>(f.allocated));
    d.add_field("free_in_reserved_bytes", static_cast<std::int64_t>(f.free_in_reserved));
    d.add_field("largest_free_block_bytes", static_cast<std::int64_t>(f.largest_free_block));
    d.add_field("fragmentation", f.fragmentation);
    d.add_field("peak_reserved_bytes", static_cast<std::int64_t>(f.peak_reserved));
    field_value::list released;
    for (const auto b : f.released_before)
      released.emplace_back(static_cast<std::int64_t>(b));
    d.add_field("released_before_bytes", released);
    d.add_field("time_ns", f.time - begin);
    if (!f.released_before.empty()) {
      std::uint64_t total = 0;
      for (const auto b : f.released_before)
        total += b;
      d.notes.push_back(
          fmt::format("just before, the allocator released {} cached segment(s) ({}) to the driver "
                      "and retried",
                      f.released_before.size(), format_bytes(total)));
    }
    d.add_field("live_sites", static_cast<std::int64_t>(f.site_count));
    for (std::size_t i = 0; i < std::min(top_sites, f.sites.size()); ++i)
      d.notes.push_back("live: " + describe_oom_site(t, f.sites[i]));
    out.diagnostics.push_back(std::move(d));
  }
  return out;
}

std::string describe_oom_site(const trace& t, const oom_site& site) {
  return fmt::format("{} in {} allocation(s) at {}", format_bytes(site.bytes), site.count,
                     describe_frame(t, site.site));
}

} // namespace tdiag::trace
