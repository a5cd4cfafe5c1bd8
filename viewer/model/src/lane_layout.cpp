// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/lane_layout.hpp>
#include <tensordiag/viewer/lod.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

namespace tdiag::view {
namespace {

struct pending_event {
  std::int64_t begin;
  std::int64_t end;
  event_ref ref;
};

// Assigns nesting depths with a stack of open ends: an event goes one row below the innermost
// event still open at its start. A later event at depth d only comes after the previous one at
// depth d was popped (ended), so each row stays free of overlaps even for improper nesting.
std::vector<row_index> nest(std::vector<pending_event>& events) {
  // Parents first: earlier start, then longer.
  std::stable_sort(events.begin(), events.end(), [](const auto& a, const auto& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<row_index> rows;
  std::vector<std::int64_t> open;
  for (const auto& e : events) {
    while (!open.empty() && open.back() <= e.begin)
      open.pop_back();
    const std::size_t depth = std::min(open.size(), lane_layout::max_depth - 1);
    if (open.size() < lane_layout::max_depth)
      open.push_back(e.end);
    if (rows.size() <= depth)
      rows.resize(depth + 1);
    rows[depth].push_back(e.begin, e.end, e.ref);
  }
  return rows;
}

} // namespace

void row_index::push_back(std::int64_t b, std::int64_t e, event_ref ref) {
  if (e < b)
    e = b;
  start_index.on_append(start.size(), b);
  start.push_back(b);
  end.push_back(e);
  refs.push_back(ref);
  busy_prefix.push_back(busy_prefix.back() + (e - b));
  max_duration = std::max(max_duration, e - b);
}

lane_layout lane_layout::build(const trace::trace& t) {
  const std::size_t lane_count = t.lanes.size();
  std::vector<std::vector<pending_event>> per_lane(lane_count);
  auto add = [&](const auto& store, event_kind kind) {
    const auto all = store.all();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const auto& r = all[i];
      if (r.lane >= lane_count)
        continue;
      per_lane[r.lane].push_back(
          {trace::begin_time(r), trace::end_time(r), {kind, static_cast<std::uint32_t>(i)}});
    }
  };
  add(t.kernels, event_kind::kernel);
  add(t.copies, event_kind::copy);
  add(t.api_calls, event_kind::api);
  add(t.ranges, event_kind::range);

  // Memory lanes with events get a plot track.
  std::vector<std::size_t> memory_events(lane_count, 0);
  for (const auto& m : t.memory.all())
    if (m.lane < lane_count)
      ++memory_events[m.lane];

  // Order: GPU lanes by (device, stream), memory by device, host lanes by (process, thread).
  auto rank = [](trace::lane_kind k) {
    return k == trace::lane_kind::gpu_stream ? 0 : k == trace::lane_kind::device_memory ? 1 : 2;
  };
  std::vector<trace::lane_id> order;
  for (trace::lane_id l = 0; l < lane_count; ++l) {
    const auto& ln = t.lanes.at(l);
    if (ln.kind == trace::lane_kind::device_memory ? memory_events[l] != 0 : !per_lane[l].empty())
      order.push_back(l);
  }
  std::stable_sort(order.begin(), order.end(), [&](trace::lane_id a, trace::lane_id b) {
    const auto& la = t.lanes.at(a);
    const auto& lb = t.lanes.at(b);
    return std::tuple(rank(la.kind), la.group, la.id) < std::tuple(rank(lb.kind), lb.group, lb.id);
  });

  lane_layout layout;
  for (const trace::lane_id l : order) {
    const auto& ln = t.lanes.at(l);
    track tr;
    tr.lane = l;
    tr.event_count = per_lane[l].size();
    const std::string_view name = t.name(ln.name);
    if (ln.kind == trace::lane_kind::device_memory) {
      tr.kind = track_kind::memory;
      tr.device = static_cast<std::int32_t>(ln.group);
      tr.title =
          ln.group < 0 ? std::string("host memory") : fmt::format("GPU {} · memory", ln.group);
      tr.subtitle = fmt::format("{} memory events", memory_events[l]);
      tr.event_count = memory_events[l];
      tr.plot_rows = 3;
      layout.tracks_.push_back(std::move(tr));
      continue;
    }
    if (ln.kind == trace::lane_kind::gpu_stream) {
      tr.device = static_cast<std::int32_t>(ln.group);
      tr.kind = track_kind::gpu_stream;
      tr.title = fmt::format("GPU {} · stream {}", ln.group, ln.id);
    } else {
      tr.kind = track_kind::host_thread;
      tr.title = name.empty() ? fmt::format("thread {}", static_cast<std::int64_t>(ln.id))
                              : std::string(name);
    }
    tr.subtitle = ln.kind == trace::lane_kind::host_thread
                      ? fmt::format("pid {} · tid {} · {} events", ln.group,
                                    static_cast<std::int64_t>(ln.id), tr.event_count)
                      : fmt::format("{} events", tr.event_count);
    tr.rows = nest(per_lane[l]);
    for (auto& row : tr.rows)
      build_lod_summary(row);
    layout.tracks_.push_back(std::move(tr));
  }
  return layout;
}

float lane_layout::set_metrics(float header_height, float row_height, float gap) noexcept {
  header_height_ = header_height;
  row_height_ = std::max(row_height, 1.0f);
  gap_ = gap;
  float y = 0.0f;
  for (auto& tr : tracks_) {
    tr.y = y;
    tr.height =
        header_height + row_height_ * static_cast<float>(std::max(tr.rows.size(), tr.plot_rows));
    y += tr.height + gap;
  }
  total_height_ = y;
  return y;
}

float lane_layout::row_y(std::size_t track, std::size_t row) const noexcept {
  if (track >= tracks_.size())
    return total_height_;
  return tracks_[track].y + header_height_ + row_height_ * static_cast<float>(row);
}

std::optional<row_hit> lane_layout::row_at(float y) const noexcept {
  auto it = std::partition_point(tracks_.begin(), tracks_.end(),
                                 [&](const track& tr) { return tr.y + tr.height <= y; });
  if (it == tracks_.end() || y < it->y + header_height_)
    return std::nullopt;
  const auto row = static_cast<std::size_t>((y - it->y - header_height_) / row_height_);
  if (row >= it->rows.size())
    return std::nullopt;
  return row_hit{static_cast<std::size_t>(it - tracks_.begin()), row};
}

std::optional<row_hit> lane_layout::find(event_ref e, const trace::trace& t) const noexcept {
  if (!e.valid())
    return std::nullopt;
  const trace::lane_id l = lane_of(t, e);
  const event_times when = times_of(t, e);
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    if (tracks_[k].lane != l)
      continue;
    for (std::size_t r = 0; r < tracks_[k].rows.size(); ++r) {
      const auto& row = tracks_[k].rows[r];
      auto it = std::lower_bound(row.start.begin(), row.start.end(), when.begin);
      for (auto i = static_cast<std::size_t>(it - row.start.begin());
           i < row.size() && row.start[i] == when.begin; ++i)
        if (row.refs[i] == e)
          return row_hit{k, r};
    }
  }
  return std::nullopt;
}

} // namespace tdiag::view
