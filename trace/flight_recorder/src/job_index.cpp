// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job index (job_index.hpp): job-wide ids for ops and shapes, groups matched by name with
// the membership most dumps state, and per member the group's collectives in sequence order.
#include "job_index.hpp"

#include <tensordiag/core/file_io.hpp>
#include <tensordiag/core/printable.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <span>
#include <unordered_map>

#include "dump_builder.hpp"

namespace tdiag::trace::fr::detail {
namespace {

std::string shapes_key(const tensor_shapes& s) {
  return fmt::format("{}|{}|{}|{}", s.input_sizes, s.output_sizes, s.input_dtypes, s.output_dtypes);
}

// What a rank costs the index, the report and its output, rounded up: a job of more ranks than
// the memory budget holds at this rate (a --world-size or a pg_config of a billion) is refused
// with the budget's one line before it is built.
constexpr std::uint64_t bytes_per_rank = 512;

void check_ranks(std::string_view source, std::string_view what, std::uint64_t ranks) {
  check_memory_budget(source, what, ranks * bytes_per_rank, "state the job's true size");
}

// The first dump whose pg_config states group `g` with members (for the budget's line).
std::string stating(const job_index& job, std::uint32_t g) {
  for (const auto& rd : job.ranks)
    if (rd.source != nullptr)
      for (std::size_t i = 0; i < rd.group_of.size(); ++i)
        if (rd.group_of[i] == g && !rd.source->groups[i].ranks.empty())
          return rd.source->source;
  return "the dumps' pg_config";
}

// The membership most dumps state for a group (ranks may disagree when one never created it).
std::vector<int> agreed_members(const std::vector<const std::vector<int>*>& stated) {
  // Pointers: with 10,000 ranks every dump states the world's 10,000 members.
  const auto less = [](const std::vector<int>* a, const std::vector<int>* b) { return *a < *b; };
  std::map<const std::vector<int>*, int, decltype(less)> votes(less);
  for (const auto* ranks : stated)
    if (!ranks->empty())
      ++votes[ranks];
  std::vector<int> best;
  int best_votes = 0;
  for (const auto& [ranks, n] : votes)
    if (n > best_votes)
      best = *ranks, best_votes = n;
  std::sort(best.begin(), best.end());
  best.erase(std::unique(best.begin(), best.end()), best.end());
  return best;
}

void index_rank(job_index& job, rank_data& rd, std::unordered_map<std::string, std::uint32_t>& ops,
                std::unordered_map<std::string, std::uint32_t>& shapes,
                std::unordered_map<std::string, std::uint32_t>& groups) {
  const dump& d = *rd.source;
  for (const auto& name : d.ops) {
    const auto [it, added] = ops.try_emplace(name, static_cast<std::uint32_t>(job.op_names.size()));
    if (added) {
      job.op_names.push_back(name);
      job.op_types.push_back(op_type(name));
    }
    rd.op_of.push_back(it->second);
  }
  for (const auto& s : d.shapes) {
    const auto [it, added] =
        shapes.try_emplace(shapes_key(s), static_cast<std::uint32_t>(job.shapes.size()));
    if (added)
      job.shapes.push_back(&s);
    rd.shapes_of.push_back(it->second);
  }
  for (const auto& g : d.groups) {
    const auto [it, added] =
        groups.try_emplace(g.name, static_cast<std::uint32_t>(job.groups.size()));
    if (added)
      job.groups.push_back({g.name, g.desc, {}, {}, {}, {}, {}});
    rd.group_of.push_back(it->second);
  }
  rd.wrapped = !d.entries.empty() && d.entries.front().record_id > 0;
  for (const auto& e : d.entries) {
    rd.start_visible = rd.start_visible || e.state == entry_state::started;
    rd.completion_visible = rd.completion_visible || e.state == entry_state::completed;
  }
  for (const auto& s : d.status_by_pg) {
    rd.start_visible = rd.start_visible || s.last_started >= 0;
    rd.completion_visible = rd.completion_visible || s.last_enqueued >= 0;
  }
  // Starts are seen only with timing on, and then completions are too (the end event is
  // always recorded).
  rd.completion_visible = rd.completion_visible || rd.start_visible;
  std::int64_t newest = -1;
  for (std::size_t i = 0; i < d.entries.size(); ++i)
    if (newest < 0 ||
        d.entries[i].record_id >= d.entries[static_cast<std::size_t>(newest)].record_id)
      newest = static_cast<std::int64_t>(i);
  rd.last_entry = newest;
}

// One rank's collectives by job group and its pg_status by pg id, sorted once: a dump may hold
// thousands of groups, and each group's members look theirs up.
struct rank_lookup {
  std::vector<std::uint32_t> groups;  ///< the job groups the dump names, sorted
  std::vector<std::uint32_t> first;   ///< groups[k]'s collectives: entries[first[k], first[k+1])
  std::vector<std::uint32_t> entries; ///< collective entries by group, in dump order
  std::vector<group_status> status;   ///< by pg_id

  [[nodiscard]] std::span<const std::uint32_t> of(std::uint32_t group) const {
    const auto it = std::lower_bound(groups.begin(), groups.end(), group);
    if (it == groups.end() || *it != group)
      return {};
    const auto k = static_cast<std::size_t>(it - groups.begin());
    return std::span(entries).subspan(first[k], first[k + 1] - first[k]);
  }
};

// Counting sort of the rank's collectives by job group: O(entries + groups log groups).
rank_lookup lookup_of(const rank_data& rd) {
  const dump& d = *rd.source;
  rank_lookup out;
  out.groups = rd.group_of;
  std::sort(out.groups.begin(), out.groups.end());
  out.groups.erase(std::unique(out.groups.begin(), out.groups.end()), out.groups.end());
  std::vector<std::uint32_t> slot(rd.group_of.size()); // dump group -> index into groups
  for (std::size_t l = 0; l < slot.size(); ++l)
    slot[l] = static_cast<std::uint32_t>(
        std::lower_bound(out.groups.begin(), out.groups.end(), rd.group_of[l]) -
        out.groups.begin());
  out.first.assign(out.groups.size() + 1, 0);
  for (const auto& e : d.entries)
    if (!e.is_p2p)
      ++out.first[slot[e.group] + 1];
  for (std::size_t k = 1; k < out.first.size(); ++k)
    out.first[k] += out.first[k - 1];
  out.entries.resize(out.first.back());
  auto next = out.first;
  for (std::uint32_t i = 0; i < d.entries.size(); ++i)
    if (!d.entries[i].is_p2p)
      out.entries[next[slot[d.entries[i].group]]++] = i;
  out.status = d.status_by_pg;
  std::stable_sort(out.status.begin(), out.status.end(),
                   [](const group_status& a, const group_status& b) { return a.pg_id < b.pg_id; });
  return out;
}

// The group's collectives of one rank, in sequence order (the newest entry of a repeated seq),
// and how far they got from the entries and pg_status.
member_data collect_member(const job_index& job, std::uint32_t rank_index, std::uint32_t group,
                           const rank_lookup& lookup) {
  const auto& rd = job.ranks[rank_index];
  const dump& d = *rd.source;
  member_data m;
  m.rank_index = rank_index;
  std::int32_t pg_id = -1;
  for (const auto i : lookup.of(group)) {
    const auto& e = d.entries[i];
    pg_id = e.pg_id;
    m.entries.push_back(i);
    if (e.state == entry_state::completed)
      m.completed = std::max(m.completed, e.collective_seq_id);
    if (e.state != entry_state::scheduled)
      m.started = std::max(m.started, e.collective_seq_id);
  }
  const auto by_seq = [&](std::uint32_t a, std::uint32_t b) {
    const auto &x = d.entries[a], &y = d.entries[b];
    return x.collective_seq_id != y.collective_seq_id ? x.collective_seq_id < y.collective_seq_id
                                                      : x.record_id < y.record_id;
  };
  if (!std::is_sorted(m.entries.begin(), m.entries.end(), by_seq))
    std::stable_sort(m.entries.begin(), m.entries.end(), by_seq);
  // Keep the newest of entries sharing a seq (a coalesced call records several).
  auto out = m.entries.begin();
  for (auto it = m.entries.begin(); it != m.entries.end(); ++it) {
    const auto next = it + 1;
    if (next != m.entries.end() &&
        d.entries[*next].collective_seq_id == d.entries[*it].collective_seq_id)
      continue;
    *out++ = *it;
  }
  m.entries.erase(out, m.entries.end());
  if (!m.entries.empty()) {
    m.lo = d.entries[m.entries.front()].collective_seq_id;
    m.hi = d.entries[m.entries.back()].collective_seq_id;
  }
  const auto by_pg = [](const group_status& s, std::int32_t id) { return s.pg_id < id; };
  for (auto it = std::lower_bound(lookup.status.begin(), lookup.status.end(), pg_id, by_pg);
       pg_id >= 0 && it != lookup.status.end() && it->pg_id == pg_id; ++it) {
    const auto& s = *it;
    m.status_tracked = s.last_enqueued >= 0;
    m.completed = std::max(m.completed, s.last_completed);
    m.started = std::max(m.started, s.last_started);
  }
  return m;
}

} // namespace

progress progress_of_state(const rank_data& rd, const entry& e) noexcept {
  if (e.state == entry_state::completed)
    return progress::completed;
  if (e.state == entry_state::started)
    return progress::started;
  if (rd.start_visible)
    return progress::scheduled;
  return rd.completion_visible ? progress::pending : progress::unknown;
}

} // namespace tdiag::trace::fr::detail

namespace tdiag::trace::fr {

using detail::progress;

std::string_view to_string(entry_progress p) noexcept {
  switch (p) {
  case progress::unknown:
    return "state unknown";
  case progress::pending:
    return "not completed";
  case progress::scheduled:
    return "scheduled";
  case progress::started:
    return "started";
  case progress::completed:
    return "completed";
  }
  return "state unknown";
}

} // namespace tdiag::trace::fr

namespace tdiag::trace::fr::detail {

progress job_index::progress_of(const member_data& m, const entry& e) const {
  const auto& rd = ranks[m.rank_index];
  if (e.state == entry_state::completed || e.collective_seq_id <= m.completed)
    return progress::completed;
  if (!rd.completion_visible && !m.status_tracked)
    return progress::unknown;
  if (!rd.start_visible)
    return progress::pending;
  if (e.state == entry_state::started || e.collective_seq_id <= m.started)
    return progress::started;
  return progress::scheduled;
}

job_index build_index(std::span<const dump> dumps, int world_size) {
  job_index job;
  std::unordered_map<std::string, std::uint32_t> ops, shapes, groups;
  std::map<int, const dump*> by_rank;
  for (const auto& d : dumps)
    by_rank.emplace(d.rank, &d);
  const auto world = static_cast<std::uint64_t>(std::max(world_size, 0));
  check_ranks("--world-size", fmt::format("a job of {} ranks", world), world);
  // A stated size the dumps contradict is the wrong size or the wrong folder: never ignored.
  if (world_size > 0 && !by_rank.empty() && by_rank.rbegin()->first >= world_size) {
    const dump& d = *by_rank.rbegin()->second;
    fail(codes::rank_beyond_world, "a dump's rank is not below --world-size", d.source,
         fmt::format("it is rank {}'s dump, but --world-size {} makes the job ranks 0 to {}; "
                     "state the job's true size, or leave --world-size out",
                     d.rank, world_size, world_size - 1));
  }
  for (int r = 0; r < world_size; ++r)
    by_rank.emplace(r, nullptr);
  for (const auto& [rank, d] : by_rank) {
    auto& rd = job.ranks.emplace_back();
    rd.rank = rank;
    rd.source = d;
    if (d != nullptr)
      index_rank(job, rd, ops, shapes, groups);
  }
  // Membership: what most dumps state; ranks it names that have no dump join the job.
  std::vector<std::vector<const std::vector<int>*>> stated(job.groups.size());
  for (const auto& rd : job.ranks)
    if (rd.source != nullptr)
      for (std::size_t g = 0; g < rd.source->groups.size(); ++g)
        stated[rd.group_of[g]].push_back(&rd.source->groups[g].ranks);
  for (std::size_t g = 0; g < job.groups.size(); ++g)
    job.groups[g].members = agreed_members(stated[g]);
  const std::uint64_t most_ranks = memory_budget() / bytes_per_rank;
  for (std::uint32_t g = 0; g < job.groups.size(); ++g)
    for (int r : job.groups[g].members)
      if (!by_rank.contains(r)) {
        if (by_rank.size() >= most_ranks) // throws
          check_ranks(stating(job, g),
                      fmt::format("pg_config['{}'] naming more than {} ranks in the job",
                                  printable(job.groups[g].name), most_ranks),
                      by_rank.size() + 1);
        by_rank.emplace(r, nullptr);
        job.ranks.push_back({nullptr, r, {}, {}, {}, false, false, false, -1});
      }
  std::sort(job.ranks.begin(), job.ranks.end(),
            [](const rank_data& a, const rank_data& b) { return a.rank < b.rank; });
  std::unordered_map<int, std::uint32_t> index_of;
  for (std::uint32_t i = 0; i < job.ranks.size(); ++i)
    index_of.emplace(job.ranks[i].rank, i);
  std::vector<rank_lookup> lookups(job.ranks.size());
  std::vector<std::vector<int>> users(job.groups.size()); ///< ranks whose dump names the group
  for (std::uint32_t i = 0; i < job.ranks.size(); ++i) {
    const auto& rd = job.ranks[i];
    if (rd.source == nullptr)
      continue;
    lookups[i] = lookup_of(rd);
    auto named = rd.group_of;
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    for (const auto g : named)
      users[g].push_back(rd.rank);
  }
  for (std::uint32_t g = 0; g < job.groups.size(); ++g) {
    auto& group = job.groups[g];
    // No dump states it. The default group spans the world, when its size is known; any other
    // group's members are, as far as the dumps show, the ranks that used it.
    if (group.members.empty() && group.desc == "default_pg" && world_size > 0)
      for (int r = 0; r < world_size; ++r)
        group.members.push_back(r);
    if (group.members.empty())
      group.members = users[g];
    for (int r : group.members) {
      const auto ri = index_of.at(r);
      const auto& rd = job.ranks[ri];
      if (rd.source == nullptr || rd.source->status != dump_status::ok) {
        group.without_dump.push_back(r);
        continue;
      }
      auto m = collect_member(job, ri, g, lookups[ri]);
      if (!m.entries.empty())
        group.with_entries.push_back(std::move(m));
      else
        (rd.wrapped ? group.silent_wrapped : group.silent).push_back(r);
    }
  }
  return job;
}

std::string op_type(std::string_view name) {
  const auto colon = name.find(':');
  if (colon != std::string_view::npos)
    name.remove_prefix(colon + 1);
  return std::string(name.substr(0, name.find(' ')));
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
      ++j;
    if (!out.empty())
      out += ", ";
    out += j >= i + 2
               ? fmt::format("{}-{}", ranks[i], ranks[j])
               : fmt::format("{}", fmt::join(ranks.begin() + static_cast<long>(i),
                                             ranks.begin() + static_cast<long>(j) + 1, ", "));
    i = j + 1;
  }
  return out;
}

std::string describe_call(std::string_view op, const tensor_shapes& s) {
  return fmt::format("{} in {} {} -> {} {}", op, s.input_sizes, s.input_dtypes, s.output_sizes,
                     s.output_dtypes);
}

} // namespace tdiag::trace::fr::detail
