// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/allocator_replay.hpp>
#include <tensordiag/viewer/allocator_timeline.hpp>

#include <algorithm>

namespace tdiag::view {
namespace {

std::size_t state_bytes(const trace::allocator_state& s) {
  std::size_t n = sizeof(s) + s.segments.size() * sizeof(trace::segment);
  for (const auto& seg : s.segments)
    n += seg.blocks.size() * sizeof(trace::block);
  return n;
}

} // namespace

allocator_timeline allocator_timeline::build(const trace::trace& t, std::int32_t device,
                                             const allocator_timeline_options& options) {
  allocator_timeline tl;
  tl.device_ = device;
  const auto all = t.memory.all();
  std::vector<std::uint32_t> order;
  bool has_requested = false;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i].device != device || !changes_allocator_state(all[i].action))
      continue;
    order.push_back(static_cast<std::uint32_t>(i));
    has_requested |= all[i].action == trace::memory_action::free_requested;
  }
  const auto by_time = [&](std::uint32_t a, std::uint32_t b) { return all[a].time < all[b].time; };
  if (!std::is_sorted(order.begin(), order.end(), by_time))
    std::stable_sort(order.begin(), order.end(), by_time);
  tl.indices_ = order;
  tl.events_.reserve(order.size());
  tl.times_.reserve(order.size());
  for (const std::uint32_t i : order) {
    tl.events_.push_back(all[i]);
    tl.times_.push_back(all[i].time);
  }

  // The state before the first event: the final state with every event undone, newest first.
  trace::allocator_state s;
  if (t.final_allocator_state) {
    for (const auto& seg : t.final_allocator_state->segments)
      if (seg.device == device)
        s.segments.push_back(seg);
    s.sort();
    for (std::size_t i = tl.events_.size(); i-- > 0;)
      undo_event(s, tl.events_[i], has_requested);
  }
  tl.initial_time_ = tl.events_.empty()
                         ? (t.final_allocator_state ? t.final_allocator_state->time : 0)
                         : tl.events_.front().time;
  s.time = tl.initial_time_;

  // Forward pass: a keyframe every interval_ events; when they outgrow the budget, drop every
  // other one and double the interval.
  const bool adaptive = options.keyframe_interval == 0;
  tl.interval_ = options.keyframe_interval;
  if (adaptive) {
    // Size the interval from the larger of the first and last states, so the budget is
    // rarely exceeded and the pass below seldom thins its keyframes out.
    std::size_t estimate = state_bytes(s);
    if (t.final_allocator_state)
      estimate = std::max(estimate, state_bytes(*t.final_allocator_state));
    const std::size_t wanted =
        tl.events_.size() * estimate / std::max<std::size_t>(options.keyframe_budget_bytes, 1);
    tl.interval_ = 64;
    while (tl.interval_ < wanted)
      tl.interval_ *= 2;
  }
  std::size_t bytes = state_bytes(s);
  tl.keyframes_.push_back(s);
  tl.max_reserved_ = s.reserved_bytes();
  for (std::size_t n = 1; n <= tl.events_.size(); ++n) {
    apply_event(s, tl.events_[n - 1]);
    s.time = tl.events_[n - 1].time;
    if (n % tl.interval_ != 0)
      continue;
    tl.max_reserved_ = std::max(tl.max_reserved_, s.reserved_bytes());
    tl.keyframes_.push_back(s);
    bytes += state_bytes(s);
    while (adaptive && bytes > options.keyframe_budget_bytes && tl.keyframes_.size() > 2) {
      std::vector<trace::allocator_state> kept;
      bytes = 0;
      for (std::size_t k = 0; k < tl.keyframes_.size(); k += 2) {
        bytes += state_bytes(tl.keyframes_[k]);
        kept.push_back(std::move(tl.keyframes_[k]));
      }
      tl.keyframes_ = std::move(kept);
      tl.interval_ *= 2;
    }
  }
  tl.max_reserved_ = std::max(tl.max_reserved_, s.reserved_bytes());
  tl.cursor_ = std::move(s);
  tl.cursor_n_ = tl.events_.size();
  tl.cursor_valid_ = true;
  return tl;
}

std::size_t allocator_timeline::events_until(std::int64_t t) const noexcept {
  return static_cast<std::size_t>(std::upper_bound(times_.begin(), times_.end(), t) -
                                  times_.begin());
}

std::int64_t allocator_timeline::time_after(std::size_t n) const noexcept {
  return n == 0 ? initial_time_ : events_[n - 1].time;
}

void allocator_timeline::advance(trace::allocator_state& s, std::size_t from,
                                 std::size_t to) const {
  for (std::size_t i = from; i < to; ++i)
    apply_event(s, events_[i]);
  s.time = time_after(to);
}

const trace::allocator_state& allocator_timeline::state_at(std::size_t n) {
  n = std::min(n, events_.size());
  if (!cursor_valid_ || n < cursor_n_ || n - cursor_n_ > interval_) {
    const std::size_t k = std::min(n / interval_, keyframes_.size() - 1);
    cursor_ = keyframes_[k];
    cursor_n_ = k * interval_;
    cursor_valid_ = true;
  }
  advance(cursor_, cursor_n_, n);
  cursor_n_ = n;
  return cursor_;
}

trace::allocator_state allocator_timeline::replay_from_scratch(std::size_t n) const {
  n = std::min(n, events_.size());
  trace::allocator_state s = keyframes_.front();
  advance(s, 0, n);
  return s;
}

} // namespace tdiag::view
