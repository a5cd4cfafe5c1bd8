// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/detail/record_ids.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/job_merge.hpp>
#include <tensordiag/trace/trace_merge.hpp>

#include <climits>

#include <algorithm>
#include <cstdint>
#include <map>

namespace tdiag::trace {

namespace {

constexpr std::int64_t process_stride = std::int64_t{1} << 40;

// Two ranks with one device (or process) number: the job's lanes would merge.
bool groups_collide(std::span<const rank_trace> ranks, bool host) {
  std::map<std::int64_t, int> owner;
  for (const auto& r : ranks)
    for (const auto& ln : r.t->lanes.lanes()) {
      if ((ln.kind == lane_kind::host_thread) != host)
        continue;
      const auto [it, added] = owner.emplace(ln.group, r.rank);
      if (!added && it->second != r.rank)
        return true;
    }
  return false;
}

// The largest correlation id in a trace (kernels, copies and API calls share one space per
// process; flows carry them too).
std::uint64_t max_correlation(const trace& t) {
  std::uint64_t most = 0;
  const auto scan = [&](const auto& store) {
    for (const auto& r : store.all())
      most = std::max<std::uint64_t>(most, r.correlation);
  };
  scan(t.kernels);
  scan(t.copies);
  scan(t.api_calls);
  scan(t.flows);
  return most;
}

struct rank_mapping {
  int rank = 0;
  std::int64_t offset = 0;
  /// Added to the rank's correlation ids: every rank numbers its own from 1, and one merged
  /// timeline must not link a kernel of one rank to a launch of another.
  std::uint32_t correlation_base = 0;
  bool move_devices = false, move_processes = false;
  std::vector<lane_id> lanes; ///< source lane -> merged lane

  [[nodiscard]] std::int64_t device(std::int64_t d) const noexcept {
    if (!move_devices)
      return d;
    return d < 0 ? d - rank * merged_group_stride : d + rank * merged_group_stride;
  }
  [[nodiscard]] std::int64_t process(std::int64_t p) const noexcept {
    return move_processes ? p + rank * process_stride : p;
  }
  [[nodiscard]] std::int64_t time(std::int64_t t) const noexcept {
    return detail::clamp_time(detail::wide_int{t} + offset);
  }
};

template <typename Record>
void append(event_store<Record>& into, const event_store<Record>& from, const rank_mapping& m,
            id_remapper& ids) {
  for (Record r : from.all()) {
    detail::visit_ids(
        r, [&](string_id& id) { id = ids.string(id); }, [&](stack_id& id) { id = ids.stack(id); },
        [&](lane_id& id) { id = id < m.lanes.size() ? m.lanes[id] : no_lane; });
    if constexpr (requires { r.start; })
      r.start = m.time(r.start), r.end = m.time(r.end);
    if constexpr (requires { r.time; })
      r.time = m.time(r.time);
    if constexpr (requires { r.target_time; })
      r.target_time = m.time(r.target_time);
    if constexpr (requires { r.device; })
      r.device = static_cast<std::int32_t>(m.device(r.device));
    if constexpr (requires { r.process; })
      r.process = m.process(r.process);
    if constexpr (requires { r.correlation; })
      if (r.correlation != 0)
        r.correlation += m.correlation_base;
    if constexpr (requires { r.detail; })
      r.detail = ids.detail(r.detail, m.correlation_base);
    into.push_back(r);
  }
}

// Flows from every rank's kernel of a collective to the last arrival's kernel.
std::size_t link_collectives(merged_job& out, std::span<const rank_trace> ranks,
                             const std::vector<rank_mapping>& maps,
                             const job_analysis_result& analysis, std::uint32_t first_id) {
  // Per rank, its kernels by start: (start, index).
  std::vector<std::vector<std::pair<std::int64_t, std::uint32_t>>> kernels(ranks.size());
  for (std::size_t r = 0; r < ranks.size() && !analysis.collectives.empty(); ++r) {
    const auto all = ranks[r].t->kernels.all();
    for (std::uint32_t i = 0; i < all.size(); ++i)
      kernels[r].emplace_back(all[i].start, i);
    std::sort(kernels[r].begin(), kernels[r].end());
  }
  std::size_t added = 0;
  for (std::size_t c = 0; c < analysis.collectives.size(); ++c) {
    const auto& col = analysis.collectives[c];
    if (col.start_ns.size() != col.members.size())
      continue;
    // i: the i-th member of the collective's group; r = col.members[i], its place in the job.
    std::size_t last = 0;
    for (std::size_t i = 0; i < col.members.size(); ++i)
      last = ranks[col.members[i]].rank == col.last_rank ? i : last;
    auto lane_of = [&](std::size_t i) -> lane_id {
      const std::size_t r = col.members[i];
      const auto& ks = kernels[r];
      for (auto it = std::lower_bound(ks.begin(), ks.end(), std::pair{col.start_ns[i], 0u},
                                      [](const auto&a, const auto&b) { return a.first < b.first; });
           it != ks.end() && it->first == col.start_ns[i]; ++it) {
        const auto& k = ranks[r].t->kernels.all()[it->second];
        if (ranks[r].t->name(k.name) == col.name && k.lane < maps[r].lanes.size())
          return maps[r].lanes[k.lane];
      }
      return no_lane;
    };
    const lane_id target = lane_of(last);
    if (target == no_lane)
      continue;
    for (std::size_t i = 0; i < col.members.size(); ++i) {
      const lane_id source = i == last ? no_lane : lane_of(i);
      if (source == no_lane)
        continue;
      flow_event f;
      f.time = maps[col.members[i]].time(col.start_ns[i]);
      f.target_time = maps[col.members[last]].time(col.start_ns[last]);
      f.lane = source;
      f.target_lane = target;
      f.correlation = first_id + static_cast<std::uint32_t>(c); // past every rank's own ids
      f.kind = flow_kind::other;
      out.t.flows.push_back(f);
      ++added;
    }
  }
  return added;
}

} // namespace

merged_job merge_job(std::span<const rank_trace> ranks, const job_analysis_result& analysis) {
  merged_job out;
  const bool move_devices = groups_collide(ranks, false);
  const bool move_processes = groups_collide(ranks, true);
  std::vector<rank_mapping> maps;
  // Correlation ids, rank after rank; where the job's ids would not fit in 32 bits (billions of
  // launches) they stay as they are and flows may cross ranks.
  std::vector<std::uint32_t> bases(ranks.size() + 1, 0);
  std::uint64_t next_id = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    bases[i] = static_cast<std::uint32_t>(next_id);
    next_id += max_correlation(*ranks[i].t);
  }
  const bool fits = next_id + analysis.collectives.size() < UINT32_MAX;
  if (!fits)
    std::fill(bases.begin(), bases.end(), 0u);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto& src = *ranks[i].t;
    rank_mapping m;
    m.rank = ranks[i].rank;
    m.correlation_base = bases[i];
    m.offset = i < analysis.clock_offsets_ns.size() ? analysis.clock_offsets_ns[i]
                                                    : ranks[i].clock_offset_ns;
    m.move_devices = move_devices;
    m.move_processes = move_processes;
    id_remapper ids(out.t, src);
    for (lane_id l = 0; l < src.lanes.size(); ++l) {
      const auto& ln = src.lanes.at(l);
      const bool host = ln.kind == lane_kind::host_thread;
      const lane_id merged =
          out.t.lanes.intern(ln.kind, host ? m.process(ln.group) : m.device(ln.group), ln.id);
      if (ln.name != no_string)
        out.t.lanes.set_name(merged, ids.string(ln.name));
      if (merged >= out.lanes.size())
        out.lanes.resize(merged + 1);
      out.lanes[merged] = {m.rank, l, ln.group};
      m.lanes.push_back(merged);
    }
    append(out.t.kernels, src.kernels, m, ids);
    append(out.t.copies, src.copies, m, ids);
    append(out.t.api_calls, src.api_calls, m, ids);
    // A sync wait names its row by index and the record it waited for by correlation id.
    const auto ranges_before = static_cast<std::uint32_t>(out.t.ranges.size());
    for (sync_wait w : src.sync_waits) {
      w.range_index += ranges_before;
      if (w.record_correlation != 0)
        w.record_correlation += m.correlation_base;
      out.t.sync_waits.push_back(w);
    }
    for (collective_info c : src.collectives) {
      c.correlation += m.correlation_base;
      c.group = ids.string(c.group);
      c.group_ranks = ids.string(c.group_ranks);
      c.collective = ids.string(c.collective);
      out.t.collectives.push_back(c);
    }
    append(out.t.ranges, src.ranges, m, ids);
    append(out.t.markers, src.markers, m, ids);
    append(out.t.memory, src.memory, m, ids);
    append(out.t.assertions, src.assertions, m, ids);
    append(out.t.flows, src.flows, m, ids);
    append(out.t.counters, src.counters, m, ids);
    auto& meta = out.t.metadata;
    if (meta.format.empty())
      meta.format = src.metadata.format;
    if (meta.time_origin_ns == 0 && src.metadata.time_origin_ns != 0)
      meta.time_origin_ns = detail::sat_sub(src.metadata.time_origin_ns, m.offset);
    meta.dropped_records += src.metadata.dropped_records;
    maps.push_back(std::move(m));
  }
  out.collective_flows = link_collectives(out, ranks, maps, analysis,
                                          fits ? static_cast<std::uint32_t>(next_id + 1) : 1u);
  out.t.finalize();
  return out;
}

} // namespace tdiag::trace
