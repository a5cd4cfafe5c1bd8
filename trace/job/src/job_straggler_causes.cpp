// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Why the last rank of a collective was late. Collectives equalise the ranks' wall time, so a
// rank that computes longer hides in every figure but its arrivals; its own timeline since its
// previous collective of the group says what it did instead of arriving: every member's window
// (previous end to arrival) is split on its GPU into compute, an earlier collective, a copy,
// and nothing at all (a host gap: the host launched nothing, busy in Python, data loading or a
// synchronisation), and the last rank's share of each is compared with the other members'
// median. Windows of one group tile each rank's timeline, so the cost is a pass over the GPU
// rows per group; the collectives are explained in parallel.
#include <tensordiag/trace/detail/parallel_for.hpp>

#include <algorithm>
#include <map>
#include <string_view>

#include "job_breakdown.hpp"

namespace tdiag::trace {

std::string_view to_string(late_cause c) noexcept {
  switch (c) {
  case late_cause::none:
    return "none";
  case late_cause::compute:
    return "compute";
  case late_cause::host_gap:
    return "host_gap";
  case late_cause::collective:
    return "collective";
  case late_cause::copy:
    break;
  }
  return "copy";
}

namespace detail {

namespace {

constexpr auto index_of(late_cause c) {
  return static_cast<std::size_t>(c);
}

struct span_ns {
  std::int64_t start = 0, end = 0;
  [[nodiscard]] std::int64_t length() const noexcept { return end - start; }
};

struct name_time {
  double us = 0;
  span_ns longest;
};

// One member's window, split on its GPU.
struct window_use {
  double us[late_cause_count] = {}; ///< by late_cause; none stays 0
  span_ns gap;                      ///< the longest stretch with nothing on the GPU
  span_ns waited;                   ///< the longest collective or copy (detail only)
  std::string_view waited_name;
  late_cause waited_kind = late_cause::none;
  /// Compute time by kernel name; few names per window, so a vector searched in order.
  std::vector<std::pair<std::string_view, name_time>> kernels;

  [[nodiscard]] const name_time* find(std::string_view name) const {
    for (const auto& [n, k] : kernels)
      if (n == name)
        return &k;
    return nullptr;
  }
  name_time& at(std::string_view name) {
    for (auto& [n, k] : kernels)
      if (n == name)
        return k;
    return kernels.emplace_back(name, name_time{}).second;
  }
};

late_cause kind_of(const gpu_row& g) {
  switch (g.type) {
  case kernel_class::communication:
    return late_cause::collective;
  case kernel_class::memory:
    return late_cause::copy;
  default:
    return late_cause::compute; // OTHER kernels are the rank's own work too
  }
}

// A rank's GPU rows with, per row, the latest end up to it: the rows overlapping a window are
// found by one binary search.
class rank_timeline {
public:
  rank_timeline(const trace& t, const rank_rows& rows) : t_(t), rows_(rows), main_(main_lane(t)) {
    std::int64_t reach = INT64_MIN;
    reach_.reserve(rows.gpu.size());
    for (const auto& g : rows.gpu)
      reach_.push_back(reach = std::max(reach, g.end));
  }

  // Splits [w.start, w.end); `names`: the kernel names whose time to keep (nullptr = all, with
  // their longest instances and the longest collective or copy).
  [[nodiscard]] window_use use(span_ns w, const window_use* names) const {
    window_use out;
    // Rows come by start, so the unions of {compute}, {compute, collective} and of every kind
    // are running merges: compute is the first, an earlier collective what the second adds,
    // a copy what the third adds, a host gap what it leaves; its holes are the gaps.
    struct running_union {
      std::int64_t start = 0, end = INT64_MIN, total = 0;
      void add(span_ns s) {
        if (s.start > end) {
          total += end > start ? end - start : 0;
          start = s.start;
          end = s.end;
        } else {
          end = std::max(end, s.end);
        }
      }
      [[nodiscard]] std::int64_t length() const { return total + (end > start ? end - start : 0); }
    } compute, compute_collective, all;
    std::int64_t covered = w.start; // the end of everything so far: the next gap starts there
    const auto first = std::upper_bound(reach_.begin(), reach_.end(), w.start) - reach_.begin();
    for (auto i = static_cast<std::size_t>(first); i < rows_.gpu.size(); ++i) {
      const auto& g = rows_.gpu[i];
      if (g.start >= w.end)
        break;
      const span_ns clip{std::max(g.start, w.start), std::min(g.end, w.end)};
      if (!g.is_kernel || clip.length() <= 0)
        continue;
      const auto kind = kind_of(g);
      if (clip.start > covered && clip.start - covered > out.gap.length())
        out.gap = {covered, clip.start};
      covered = std::max(covered, clip.end);
      all.add(clip);
      if (kind != late_cause::copy)
        compute_collective.add(clip);
      if (kind == late_cause::compute)
        compute.add(clip);
      const auto name = t_.name(g.name);
      if (kind == late_cause::compute) {
        if (names && !names->find(name))
          continue;
        auto& k = out.at(name);
        k.us += to_us(clip.length());
        if (clip.length() > k.longest.length())
          k.longest = clip;
      } else if (!names && clip.length() > out.waited.length()) {
        out.waited = clip;
        out.waited_name = name;
        out.waited_kind = kind;
      }
    }
    if (w.end > covered && w.end - covered > out.gap.length())
      out.gap = {covered, w.end};
    out.us[index_of(late_cause::compute)] = to_us(compute.length());
    out.us[index_of(late_cause::collective)] =
        to_us(compute_collective.length() - compute.length());
    out.us[index_of(late_cause::copy)] = to_us(all.length() - compute_collective.length());
    out.us[index_of(late_cause::host_gap)] = to_us(w.length() - all.length());
    return out;
  }

  // The innermost host operator or annotation over `time` on the thread that launches most.
  // The stores are sorted by (lane, start): the latest row of the lane that starts before
  // `time` and still runs is the innermost; the walk back is bounded.
  [[nodiscard]] std::string host_at(std::int64_t time) const {
    if (main_ == no_lane)
      return {};
    const api_event* best_api =
        innermost(t_.api_calls.all(), time, [](const api_event&) { return true; });
    const range_event* best_range = innermost(t_.ranges.all(), time, [](const range_event& r) {
      return r.kind != range_kind::gpu_sync && r.kind != range_kind::gpu_annotation;
    });
    if (best_range && (!best_api || best_range->start > best_api->start))
      return std::string(t_.name(best_range->name));
    return best_api ? std::string(t_.name(best_api->name)) : std::string();
  }

  [[nodiscard]] std::int64_t first_start() const noexcept {
    return rows_.gpu.empty() ? 0 : rows_.gpu.front().start;
  }
  [[nodiscard]] const rank_rows& rows() const noexcept { return rows_; }

private:
  template <typename Row, typename Keep>
  const Row* innermost(std::span<const Row> rows, std::int64_t time, Keep keep) const {
    auto it = std::upper_bound(rows.begin(), rows.end(), std::pair(main_, time),
                               [](const std::pair<lane_id, std::int64_t>& key, const Row& r) {
                                 return key < std::pair(r.lane, r.start);
                               });
    for (int looked = 0; it != rows.begin() && looked < 4096; ++looked) {
      const auto& r = *--it;
      if (r.lane != main_)
        break;
      if (r.end > time && keep(r))
        return &r;
    }
    return nullptr;
  }

  // The host thread with the most launches: the one whose gaps starve the GPU.
  // (The calls come sorted by lane: one count per run of a lane.)
  static lane_id main_lane(const trace& t) {
    lane_id best = no_lane, lane = no_lane;
    std::size_t most = 0, n = 0;
    for (const auto& a : t.api_calls.all()) {
      if (a.lane != lane) {
        lane = a.lane;
        n = 0;
      }
      if (a.correlation != 0 && (a.kind == api_kind::runtime || a.kind == api_kind::driver) &&
          ++n > most) {
        most = n;
        best = lane;
      }
    }
    return best;
  }

  const trace& t_;
  const rank_rows& rows_;
  std::vector<std::int64_t> reach_;
  lane_id main_ = no_lane;
};

double median_of(std::vector<double> v) {
  return v.empty() ? 0.0 : quantile(std::move(v), 0.5);
}

// Each place's kernels of matched collectives, per group, by start: the previous collective.
using previous_index = std::vector<std::map<std::string_view, std::vector<span_ns>>>;

previous_index previous_of(const std::vector<collective_wait>& collectives, std::size_t places) {
  previous_index out(places);
  for (const auto& c : collectives)
    for (std::size_t i = 0; i < c.members.size(); ++i)
      out[c.members[i]][c.group].push_back({c.start_ns[i], c.end_ns[i]});
  for (auto& by_group : out)
    for (auto& [group, v] : by_group)
      std::sort(v.begin(), v.end(), [](auto& a, auto& b) { return a.start < b.start; });
  return out;
}

// A member's window: from the end of its previous collective of the group (else the start of
// its ProfilerStep, else of its GPU work) to its arrival.
span_ns window_of(const previous_index& previous, const rank_timeline& timeline, std::size_t place,
                  const std::string& group, std::int64_t arrival) {
  std::int64_t from = timeline.first_start();
  for (const auto& s : timeline.rows().step_ranges)
    if (s.start <= arrival && arrival < s.end)
      from = s.start;
  const auto& v = previous[place].at(group);
  const auto it = std::lower_bound(v.begin(), v.end(), arrival,
                                   [](const span_ns& s, std::int64_t x) { return s.start < x; });
  if (it != v.begin())
    from = std::prev(it)->end;
  return {std::min(from, arrival), arrival};
}

void explain(const collective_wait& c, std::span<const std::int64_t> offsets,
             const previous_index& previous, const std::vector<rank_timeline>& timelines,
             straggler_cause& out) {
  const auto n = c.members.size();
  std::size_t last = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (c.start_ns[i] + offsets[c.members[i]] > c.start_ns[last] + offsets[c.members[last]])
      last = i;
  std::vector<span_ns> windows;
  for (std::size_t i = 0; i < n; ++i)
    windows.push_back(
        window_of(previous, timelines[c.members[i]], c.members[i], c.group, c.start_ns[i]));
  const auto& tl = timelines[c.members[last]];
  const auto mine = tl.use(windows[last], nullptr);
  std::vector<window_use> others;
  std::vector<double> arrivals, window_starts;
  for (std::size_t i = 0; i < n; ++i) {
    if (i == last)
      continue;
    const auto off = offsets[c.members[i]];
    others.push_back(timelines[c.members[i]].use(windows[i], &mine));
    arrivals.push_back(static_cast<double>(c.start_ns[i] + off));
    window_starts.push_back(static_cast<double>(windows[i].start + off));
  }
  const auto off = offsets[c.members[last]];
  out.late_us = to_us(
      static_cast<std::int64_t>(static_cast<double>(c.start_ns[last] + off) - median_of(arrivals)));
  out.window_start_ns = windows[last].start;
  out.window_end_ns = windows[last].end;
  for (const auto k :
       {late_cause::compute, late_cause::host_gap, late_cause::collective, late_cause::copy}) {
    std::vector<double> v;
    for (const auto& o : others)
      v.push_back(o.us[index_of(k)]);
    out.excess_us[index_of(k)] = mine.us[index_of(k)] - median_of(v);
  }
  // A previous collective that ended later here than on the others: waited on it.
  const double prev_late = to_us(static_cast<std::int64_t>(
      static_cast<double>(windows[last].start + off) - median_of(window_starts)));
  out.excess_us[index_of(late_cause::collective)] += std::max(0.0, prev_late);
  double best = 0;
  for (const auto k :
       {late_cause::compute, late_cause::host_gap, late_cause::collective, late_cause::copy})
    if (out.excess_us[index_of(k)] > best) {
      best = out.excess_us[index_of(k)];
      out.cause = k;
    }
  if (out.late_us <= 0)
    out.cause = late_cause::none;
  for (const auto& [name, k] : mine.kernels) {
    std::vector<double> v;
    for (const auto& o : others) {
      const auto* it = o.find(name);
      v.push_back(it ? it->us : 0.0);
    }
    const double med = median_of(std::move(v));
    if (k.us > med)
      out.kernels.push_back({std::string(name), k.us, med, k.longest.start, k.longest.end});
  }
  std::sort(out.kernels.begin(), out.kernels.end(), [](const auto& a, const auto& b) {
    return a.excess_us() != b.excess_us() ? a.excess_us() > b.excess_us() : a.name < b.name;
  });
  if (out.kernels.size() > 3)
    out.kernels.resize(3);
  out.gap_start_ns = mine.gap.start;
  out.gap_end_ns = mine.gap.end;
  // Named only for the cause they explain: looking up the host side costs a search.
  if (out.cause == late_cause::host_gap && mine.gap.length() > 0)
    out.gap_host = tl.host_at(mine.gap.start + mine.gap.length() / 2);
  if (out.cause == late_cause::collective || out.cause == late_cause::copy)
    out.waited_on = std::string(mine.waited_name);
  span_ns focus = windows[last];
  if (out.cause == late_cause::compute && !out.kernels.empty())
    focus = {out.kernels.front().start_ns, out.kernels.front().end_ns};
  else if (out.cause == late_cause::host_gap && mine.gap.length() > 0)
    focus = mine.gap;
  else if ((out.cause == late_cause::collective || out.cause == late_cause::copy) &&
           mine.waited.length() > 0 && mine.waited_kind == out.cause)
    focus = mine.waited;
  out.focus_start_ns = focus.start;
  out.focus_end_ns = focus.end;
}

} // namespace

void explain_stragglers(std::span<const rank_trace> ranks, const std::vector<rank_rows>& rows,
                        job_analysis_result& out, unsigned threads) {
  if (out.collectives.empty())
    return;
  std::vector<rank_timeline> timelines;
  timelines.reserve(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    timelines.emplace_back(*ranks[r].t, rows[r]);
  const auto previous = previous_of(out.collectives, ranks.size());
  // In chunks of 256 collectives: one is a few microseconds of work.
  constexpr std::size_t chunk = 256;
  const auto count = out.collectives.size();
  detail::parallel_for((count + chunk - 1) / chunk, threads, [&](std::size_t c) {
    for (auto i = c * chunk; i < std::min((c + 1) * chunk, count); ++i)
      explain(out.collectives[i], out.clock_offsets_ns, previous, timelines,
              out.collectives[i].cause);
  });
  std::map<int, std::map<int, rank_wait::step_lateness>> steps; // rank -> step -> lateness
  for (auto& c : out.collectives) {
    const auto it = std::find_if(out.waits.begin(), out.waits.end(),
                                 [&](const rank_wait& w) { return w.rank == c.last_rank; });
    if (it == out.waits.end() || c.cause.late_us <= 0)
      continue;
    auto& s = steps[c.last_rank][c.step];
    s.step = c.step;
    ++s.times_last;
    it->late_us += c.cause.late_us;
    s.late_us += c.cause.late_us;
    for (std::size_t k = 1; k < late_cause_count; ++k) {
      const double excess = std::max(0.0, c.cause.excess_us[k]);
      it->late_by_cause_us[k] += excess;
      s.by_cause_us[k] += excess;
    }
  }
  for (auto& w : out.waits)
    for (const auto& [step, s] : steps[w.rank])
      w.late_by_step.push_back(s);
}

} // namespace detail
} // namespace tdiag::trace
