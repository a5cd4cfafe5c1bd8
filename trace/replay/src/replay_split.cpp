// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A lane's forward replay split over threads. The backward pass that derives the lane's start
// from the dump passes through every state the forward pass will reach, newest first: it leaves
// a copy of the state at a few cuts, and while it goes on other threads replay forward from
// each copy (the last part first), keeping each event's effect on the totals. The caller's thread
// then replays the first part itself and takes the other parts' effects in order, each only where
// the state its replay reached at the cut is the copy that part began from (equal but for stacks,
// which no step reads); else it replays that part itself from the state it reached, as one thread
// would. A dump that disagrees with the history (a segment made with other fields than the dump
// gives it) costs that: the answers stay those of one thread. On two cores a lane's samples cost
// a backward pass and a quarter of a forward one instead of both.
#include "replay_split.hpp"

#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/trace/detail/saturate.hpp>

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "replay_state.hpp"

namespace tdiag::trace::detail {
namespace {

// Equal as far as a replay can tell: stacks are carried, never read.
bool same_for_replay(const allocator_state& a, const allocator_state& b) {
  const auto same_block = [](const block& p, const block& q) {
    return p.address == q.address && p.size == q.size && p.requested_size == q.requested_size &&
           p.state == q.state;
  };
  return std::ranges::equal(a.segments, b.segments, [&](const segment& x, const segment& y) {
    return x.device == y.device && x.address == y.address && x.total_size == y.total_size &&
           x.stream == y.stream && x.pool == y.pool && x.type == y.type &&
           x.is_expandable == y.is_expandable && std::ranges::equal(x.blocks, y.blocks, same_block);
  });
}

// The running totals, visited after each event's change.
struct totals_walk {
  const std::function<void(const memory_sample&)>& visit;
  memory_sample now{};

  void start(std::int64_t time, const replay_totals& totals) {
    now = {time, totals.allocated, totals.requested, totals.reserved};
    visit(now);
  }
  // The running totals saturate: sizes near 2^63 from a file must not overflow (found by the
  // fuzzers).
  void step(std::int64_t time, const replay_totals& change) {
    now.time = time;
    now.allocated = sat_add(now.allocated, change.allocated);
    now.requested = sat_add(now.requested, change.requested);
    now.reserved = sat_add(now.reserved, change.reserved);
    visit(now);
  }
};

// Replays `events` forward on `r`, handing each one's index and effect to `effect`; returns
// the events that did not match.
template <typename Effect>
std::size_t forward(replay_state& r, std::span<const memory_event> events, Effect&& effect) {
  std::size_t missed = 0;
  replay_totals change;
  for (std::size_t i = 0; i < events.size(); ++i) {
    missed += r.step(events[i], false, false, &change) ? 0 : 1;
    effect(i, change);
  }
  return missed;
}

// forward(), the samples to `walk`.
std::size_t forward(replay_state& r, std::span<const memory_event> events, totals_walk& walk) {
  return forward(r, events,
                 [&](std::size_t i, const replay_totals& c) { walk.step(events[i].time, c); });
}

// For each cut, the segment_alloc events whose segments the forward pass will hold there. A
// segment made in the history and still there at the dump has the dump's fields in the backward
// pass's states, but the event's in the forward pass (made_segment): the states left at the cuts
// take the event's. (Only a guess that saves time: where it is wrong, the comparison fails.)
std::vector<std::vector<std::size_t>> made_before(std::span<const memory_event> events,
                                                  std::int32_t device,
                                                  std::span<const std::size_t> cuts) {
  std::vector<std::vector<std::size_t>> out(cuts.size());
  std::map<std::uint64_t, std::size_t> made; // by address: the event that made it
  std::size_t k = 0;
  for (std::size_t i = 0; i < events.size() && k < cuts.size(); ++i) {
    for (; k < cuts.size() && cuts[k] == i; ++k)
      for (const auto& [address, at] : made)
        out[k].push_back(at);
    const auto& e = events[i];
    if (e.device != device)
      continue;
    if (e.action == memory_action::segment_alloc)
      made[e.address] = i;
    else if (e.action == memory_action::segment_free)
      made.erase(e.address);
  }
  return out;
}

void take_fields(allocator_state& s, std::span<const memory_event> events,
                 std::span<const std::size_t> made) {
  for (const auto at : made) {
    const auto m = made_segment(events[at]);
    const auto it = std::lower_bound(
        s.segments.begin(), s.segments.end(), m, [](const segment& a, const segment& b) {
          return a.device != b.device ? a.device < b.device : a.address < b.address;
        });
    if (it == s.segments.end() || it->device != m.device || it->address != m.address)
      continue;
    it->stream = m.stream;
    it->pool = m.pool;
    it->type = m.type;
    it->is_expandable = m.is_expandable;
    it->stack = m.stack;
  }
}

// A part of the lane another thread replays forward from the state the backward pass left.
struct part {
  std::size_t begin = 0, end = 0;
  allocator_state start;              // the backward pass's state before event `begin`
  std::vector<replay_totals> changes; // each event's effect, replayed from `start`
  std::size_t missed = 0;
  allocator_state last; // the state after event end - 1 (not kept for the last part)
  std::exception_ptr error;
  bool saved = false, done = false; // (under the mutex)
};

// One part per thread's worth of events, a few per thread (the other threads then replay the
// later parts while the backward pass still goes on through the earlier ones). Each cut costs a
// copy of the state, a replay state made from it and a comparison: a part replays at least as
// many events as the dump holds blocks.
std::size_t part_count(const trace& t, std::size_t events, std::int32_t device, unsigned threads) {
  if (threads < 2 || !t.final_allocator_state)
    return 1;
  std::size_t blocks = 0;
  for (const auto& seg : t.final_allocator_state->segments)
    blocks += seg.device == device ? seg.blocks.size() + 1 : 0;
  const auto least =
      std::max({replay_split_min_events.load(std::memory_order_relaxed), blocks, std::size_t{1}});
  return std::max<std::size_t>(
      1, std::min<std::size_t>({events / least, std::size_t{4} * (threads - 1), 16}));
}

std::size_t replay_parts(const trace& t, lane_id lane, std::int32_t device, std::size_t count,
                         unsigned threads, totals_walk& walk, split_stats& stats) {
  const auto events = t.memory.lane(lane);
  const auto n = events.size();
  std::vector<part> parts(count);
  std::vector<std::size_t> cuts;
  for (std::size_t k = 0; k < count; ++k) {
    parts[k].begin = n * k / count;
    parts[k].end = n * (k + 1) / count;
    if (k > 0)
      cuts.push_back(parts[k].begin);
  }
  std::mutex m;
  std::condition_variable cv;
  bool stop = false;
  std::size_t next = count - 1; // the part the next idle thread takes (0: none left)
  const auto work = [&] {
    for (;;) {
      part* p = nullptr;
      {
        std::unique_lock lock(m);
        if (next == 0)
          return;
        p = &parts[next--];
        cv.wait(lock, [&] { return p->saved || stop; });
        if (stop)
          return;
      }
      try {
        replay_state r(p->start, device);
        const auto mine = events.subspan(p->begin, p->end - p->begin);
        p->changes.resize(mine.size());
        p->missed =
            forward(r, mine, [&](std::size_t i, const replay_totals& c) { p->changes[i] = c; });
        if (p->end < n)
          p->last = std::move(r).take();
      } catch (...) {
        p->error = std::current_exception();
      }
      {
        std::lock_guard lock(m);
        p->done = true;
      }
      cv.notify_all();
    }
  };
  std::vector<std::jthread> pool;
  // Whatever this thread leaves by (an exception included), the others stop waiting first.
  const auto stopper = [&](void*) {
    {
      std::lock_guard lock(m);
      stop = true;
    }
    cv.notify_all();
  };
  const std::unique_ptr<void, decltype(stopper)> stop_on_exit(&pool, stopper);
  for (unsigned i = 1; i < threads && i < count; ++i)
    pool.emplace_back(work);

  const auto made = made_before(events, device, cuts);
  auto start = derive_start_cut(t, lane, cuts, [&](std::size_t k, allocator_state s) {
    take_fields(s, events, made[k]);
    auto& p = parts[k + 1];
    {
      std::lock_guard lock(m);
      p.start = std::move(s);
      p.saved = true;
    }
    cv.notify_all();
  });
  walk.start(events.front().time, totals_of(start, device));
  std::optional<replay_state> r(std::in_place, std::move(start), device);
  std::size_t missed = forward(*r, events.first(parts[0].end), walk);
  bool mine = true; // the state before part k is r's, else part k - 1's last
  for (std::size_t k = 1; k < count; ++k) {
    auto& p = parts[k];
    {
      std::unique_lock lock(m);
      cv.wait(lock, [&] { return p.done; });
    }
    if (p.error)
      std::rethrow_exception(p.error);
    if (same_for_replay(mine ? r->state() : parts[k - 1].last, p.start)) {
      for (std::size_t i = 0; i < p.changes.size(); ++i)
        walk.step(events[p.begin + i].time, p.changes[i]);
      missed += p.missed;
      mine = false;
      ++stats.taken;
    } else {
      if (!mine)
        r.emplace(std::move(parts[k - 1].last), device);
      missed += forward(*r, events.subspan(p.begin, p.end - p.begin), walk);
      mine = true;
    }
    parts[k - 1] = {};
    p.start = {};
    p.changes = {};
  }
  return missed;
}

} // namespace

std::size_t replay_samples(const trace& t, lane_id lane, unsigned threads,
                           const std::function<void(const memory_sample&)>& visit,
                           split_stats* stats) {
  const auto events = t.memory.lane(lane);
  const auto device = lane < t.lanes.size() ? static_cast<std::int32_t>(t.lanes.at(lane).group) : 0;
  totals_walk walk{visit};
  split_stats ignored;
  auto& out = stats != nullptr ? *stats : ignored;
  out = {};
  if (const auto count = part_count(t, events.size(), device, threads); count > 1) {
    out.parts = count;
    return replay_parts(t, lane, device, count, threads, walk, out);
  }
  // One pass forward from the derived initial state: no keyframes, which only a viewer's
  // scrubbing needs.
  allocator_state start = initial_allocator_state(t, lane);
  walk.start(events.front().time, totals_of(start, device));
  replay_state r(std::move(start), device);
  return forward(r, events, walk);
}

} // namespace tdiag::trace::detail
