// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A lane's allocator state over time: its initial state derived back from a dump, the state
// after any event (allocator_replay's keyframes), normalized states to compare.
#include <tensordiag/trace/allocator_replay.hpp>

#include <algorithm>
#include <span>

#include "replay_split.hpp"
#include "replay_state.hpp"

namespace tdiag::trace {

void normalize(allocator_state& s, bool strict) {
  s.sort();
  for (auto& seg : s.segments) {
    std::vector<block> merged;
    for (auto b : seg.blocks) {
      if (!strict) {
        b.requested_size = 0;
        b.stack = no_stack;
      }
      if (b.state == block_state::inactive) {
        b.requested_size = 0;
        b.stack = no_stack;
        if (!merged.empty() && merged.back().state == block_state::inactive &&
            merged.back().address + merged.back().size == b.address) {
          merged.back().size += b.size;
          continue;
        }
      }
      merged.push_back(b);
    }
    seg.blocks = std::move(merged);
    if (!strict)
      seg.stack = no_stack;
  }
}

namespace {

std::size_t state_bytes(const allocator_state& s) {
  std::size_t n = sizeof(s) + s.segments.size() * sizeof(segment);
  for (const auto& seg : s.segments)
    n += seg.blocks.size() * sizeof(block);
  return n;
}

// The final state's segments of `device`. finalize() sorts them by (device, address), so a
// finalized trace takes one binary search: a replay per memory lane of a trace with 150k devices
// stays linear overall instead of scanning every segment per lane.
std::vector<segment> device_segments(const trace& t, std::int32_t device) {
  const auto& all = t.final_allocator_state->segments;
  if (t.finalized()) {
    // std::ranges::equal_range would do, but clang 14 with libstdc++ 12 rejects its subrange.
    struct by_device {
      bool operator()(const segment& s, std::int32_t d) const noexcept { return s.device < d; }
      bool operator()(std::int32_t d, const segment& s) const noexcept { return d < s.device; }
    };
    const auto [lo, hi] = std::equal_range(all.begin(), all.end(), device, by_device{});
    return {lo, hi};
  }
  std::vector<segment> out;
  for (const auto& seg : all)
    if (seg.device == device)
      out.push_back(seg);
  return out;
}

bool has_two_step_frees(std::span<const memory_event> events) {
  return std::any_of(events.begin(), events.end(), [](const memory_event& e) {
    return e.action == memory_action::free_requested;
  });
}

// The state before `events` (one device's lane): the final state with every event undone,
// newest first, or an empty one. `at_cut` (where given) receives the state before event
// cuts[k] as the pass reaches it (cuts ascending: the last first).
allocator_state derive_start(const trace& t, std::span<const memory_event> events,
                             std::int32_t device, bool two_step, std::size_t& mismatches,
                             std::size_t& final_bytes, std::span<const std::size_t> cuts = {},
                             const detail::cut_visitor* at_cut = nullptr) {
  allocator_state start;
  if (t.final_allocator_state) {
    start.segments = device_segments(t, device);
    start.sort();
    final_bytes = state_bytes(start);
    detail::replay_state r(std::move(start), device);
    auto next = cuts.size();
    for (std::size_t i = events.size(); i-- > 0;) {
      mismatches += r.step(events[i], true, two_step) ? 0 : 1;
      if (next > 0 && cuts[next - 1] == i)
        (*at_cut)(--next, r.state());
    }
    start = std::move(r).take();
  }
  start.time = events.empty() ? (t.final_allocator_state ? t.final_allocator_state->time : 0)
                              : events.front().time;
  return start;
}

} // namespace

bool has_memory_history(const trace& t, lane_id lane) noexcept {
  if (lane >= t.lanes.size() || t.lanes.at(lane).kind != lane_kind::device_memory)
    return false;
  if (!t.memory.lane(lane).empty())
    return true;
  if (!t.final_allocator_state)
    return false;
  const auto device = static_cast<std::int32_t>(t.lanes.at(lane).group);
  const auto& all = t.final_allocator_state->segments;
  if (t.finalized()) // sorted by (device, address): one search
    return std::binary_search(all.begin(), all.end(), device, [](const auto& a, const auto& b) {
      if constexpr (std::is_same_v<std::decay_t<decltype(a)>, segment>)
        return a.device < b;
      else
        return a < b.device;
    });
  return std::any_of(all.begin(), all.end(), [&](const segment& s) { return s.device == device; });
}

lane_id memory_lane_of(const trace& t, std::int32_t device) noexcept {
  const auto lane = t.lanes.find_memory(device);
  return lane == no_lane ? static_cast<lane_id>(t.lanes.size()) : lane;
}

allocator_state initial_allocator_state(const trace& t, lane_id lane, std::size_t* mismatches) {
  return detail::derive_start_cut(t, lane, {}, {}, mismatches);
}

namespace detail {

allocator_state derive_start_cut(const trace& t, lane_id lane, std::span<const std::size_t> cuts,
                                 const cut_visitor& at_cut, std::size_t* mismatches) {
  const auto events = t.memory.lane(lane);
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  std::size_t missed = 0, final_bytes = 0;
  auto start = derive_start(t, events, device, has_two_step_frees(events), missed, final_bytes,
                            cuts, &at_cut);
  if (mismatches != nullptr)
    *mismatches = missed;
  return start;
}

} // namespace detail

allocator_state allocator_state_after(const trace& t, lane_id lane, std::size_t index,
                                      std::size_t* mismatches) {
  const auto events = t.memory.lane(lane).first(std::min(index, t.memory.lane(lane).size()));
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  std::size_t missed = 0;
  detail::replay_state r(initial_allocator_state(t, lane, &missed), device);
  for (const auto& e : events)
    missed += r.step(e, false, false) ? 0 : 1;
  if (mismatches != nullptr)
    *mismatches = missed;
  return std::move(r).take();
}

allocator_replay::allocator_replay(const trace& t, lane_id lane, std::size_t interval) {
  replay_options o;
  // Explicit, or about 256 keyframes at most.
  o.keyframe_interval =
      interval != 0 ? interval : std::max<std::size_t>(256, t.memory.lane(lane).size() / 256 + 1);
  build(t, lane, o);
}

allocator_replay::allocator_replay(const trace& t, lane_id lane, const replay_options& options) {
  build(t, lane, options);
}

void allocator_replay::build(const trace& t, lane_id lane, const replay_options& options) {
  events_ = t.memory.lane(lane);
  first_index_ =
      events_.empty() ? 0 : static_cast<std::size_t>(events_.data() - t.memory.all().data());
  device_ = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  two_step_ = has_two_step_frees(events_);
  std::size_t final_bytes = 0; // this device's share of the final state
  allocator_state start = derive_start(t, events_, device_, two_step_, mismatches_, final_bytes);

  detail::replay_state r(start, device_);
  const bool adaptive = options.keyframe_interval == 0;
  interval_ = options.keyframe_interval;
  const auto budget = std::max<std::size_t>(options.keyframe_budget_bytes, 1);
  if (adaptive) {
    // Sized from the larger of the first and last states, so the thinning below is rare. A
    // source without a dump (Kineto, CUPTI) has no last state: where a pass is cheap (the map
    // replay) one finds the largest, or keyframes every 64 events would copy a state of
    // 100,000 blocks thousands of times before the thinning caught up.
    std::size_t estimate = std::max(state_bytes(start), final_bytes);
    if (!t.final_allocator_state) {
      auto probe = r;
      std::size_t largest = 0;
      for (const auto& e : events_) {
        probe.step(e, false, two_step_);
        largest = std::max(largest, probe.segment_count());
      }
      // At least a block a segment.
      estimate =
          std::max(estimate, sizeof(allocator_state) + largest * (sizeof(segment) + sizeof(block)));
    }
    const std::size_t wanted =
        events_.size() / budget * estimate + events_.size() % budget * estimate / budget;
    interval_ = 64;
    while (interval_ < wanted)
      interval_ *= 2;
  }
  keyframes_.reserve(events_.size() / interval_ + 1);
  std::size_t bytes = state_bytes(start);
  max_reserved_ = start.reserved_bytes();
  keyframes_.push_back(std::move(start));
  allocator_state s;
  for (std::size_t i = 0; i < events_.size(); ++i) {
    mismatches_ += r.step(events_[i], false, two_step_) ? 0 : 1;
    if ((i + 1) % interval_ != 0)
      continue;
    s = r.state();
    max_reserved_ = std::max(max_reserved_, s.reserved_bytes());
    keyframes_.push_back(s);
    bytes += state_bytes(s);
    // Over the budget: keep every other keyframe and double the interval.
    while (adaptive && bytes > budget && keyframes_.size() > 2) {
      std::vector<allocator_state> kept;
      bytes = 0;
      for (std::size_t k = 0; k < keyframes_.size(); k += 2) {
        bytes += state_bytes(keyframes_[k]);
        kept.push_back(std::move(keyframes_[k]));
      }
      keyframes_ = std::move(kept);
      interval_ *= 2;
    }
  }
  max_reserved_ = std::max(max_reserved_, std::move(r).take().reserved_bytes());
}

void allocator_replay::replay_forward(allocator_state& s, std::size_t from, std::size_t to) const {
  const auto events = events_.subspan(from, to - from);
  // A few events go straight onto the vector. More go through replay_state, which keeps the
  // lane's segments in a map: on the vector each segment made or dropped moves every later one
  // (a seek among 1,000,000 live blocks took minutes), and the map's set-up costs one pass.
  if (events.size() <= 64) {
    for (const auto& e : events)
      apply_memory_event(s, e);
    return;
  }
  detail::replay_state r(std::move(s), device_);
  for (const auto& e : events)
    r.step(e, false, two_step_);
  s = std::move(r).take();
}

allocator_state allocator_replay::state_at(std::size_t index) const {
  index = std::min(index, events_.size());
  const auto k = std::min(index / interval_, keyframes_.size() - 1);
  allocator_state s = keyframes_[k];
  replay_forward(s, k * interval_, index);
  return s;
}

allocator_state allocator_replay::replay_from_start(std::size_t index) const {
  index = std::min(index, events_.size());
  allocator_state s = keyframes_.front();
  for (std::size_t i = 0; i < index; ++i)
    apply_memory_event(s, events_[i]);
  return s;
}

std::size_t events_until(std::span<const memory_event> events, std::int64_t time) noexcept {
  return static_cast<std::size_t>(
      std::partition_point(events.begin(), events.end(),
                           [&](const memory_event& e) { return e.time <= time; }) -
      events.begin());
}

std::size_t allocator_replay::index_at_time(std::int64_t t) const noexcept {
  return events_until(events_, t);
}

replay_cursor::replay_cursor(const allocator_replay& replay)
    : replay_(&replay), state_(replay.initial_state()) {}

const allocator_state& replay_cursor::seek(std::size_t index) {
  index = std::min(index, replay_->size());
  const auto interval = replay_->keyframe_interval();
  // Forward and within one keyframe interval: replay from here; otherwise restart from the
  // keyframe at or before the target.
  if (index < position_ || index - position_ > interval)
    state_ = replay_->state_at(index);
  else
    replay_->replay_forward(state_, position_, index);
  position_ = index;
  return state_;
}

} // namespace tdiag::trace
