// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// analyze(): every group judged on its own (group_verdict.cpp), then across groups: a rank that
// never reached a group's collective because its host waits in another group's incomplete
// collective is a victim there, not a culprit; point-to-point calls paired across peers
// (p2p_match.cpp) name a peer that never posted its side; and one rank is named once. The
// report also says how far each entry got, from the same index (rank_report::progress).
#include <tensordiag/trace/flight_recorder.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "group_analysis.hpp"
#include "p2p_match.hpp"

namespace tdiag::trace::fr {
namespace {

using detail::job_index;

int cause_rank(cause c) {
  switch (c) {
  case cause::desync:
    return 0;
  case cause::not_completed:
    return 1;
  case cause::not_reached:
    return 2;
  case cause::no_dump:
    return 3;
  }
  return 4;
}

// Where a rank's host is: its newest entry, and whether that call visibly completed.
struct host_position {
  std::uint32_t group = 0;
  const entry* e = nullptr;
  bool completed = false;
};

std::optional<host_position> host_of(const job_index& job, std::uint32_t rank_index) {
  const auto& rd = job.ranks[rank_index];
  if (rd.source == nullptr || rd.last_entry < 0)
    return std::nullopt;
  host_position h;
  h.e = &rd.source->entries[static_cast<std::size_t>(rd.last_entry)];
  h.group = rd.group_of[h.e->group];
  h.completed = h.e->state == entry_state::completed;
  if (!h.completed && !h.e->is_p2p)
    for (const auto& m : job.groups[h.group].with_entries)
      if (m.rank_index == rank_index)
        h.completed = job.progress_of(m, *h.e) == detail::progress::completed;
  return h;
}

// A not_reached rank whose newest entry is another group's incomplete call, in which it is not
// itself named, waits there: the holder of that group holds it too.
void drop_victims(const job_index& job, std::vector<std::vector<culprit>>& per_group,
                  std::vector<std::string>& unknowns) {
  for (std::size_t g = 0; g < per_group.size(); ++g) {
    auto& list = per_group[g];
    std::vector<culprit> kept;
    for (auto& c : list) {
      if (c.cause != cause::not_reached) {
        kept.push_back(std::move(c));
        continue;
      }
      const auto it = std::find_if(job.ranks.begin(), job.ranks.end(),
                                   [&](const detail::rank_data& r) { return r.rank == c.rank; });
      const auto h = host_of(job, static_cast<std::uint32_t>(it - job.ranks.begin()));
      const bool elsewhere = h && !h->completed && (h->group != g || h->e->is_p2p);
      const bool named_there =
          elsewhere && std::any_of(per_group[h->group].begin(), per_group[h->group].end(),
                                   [&](const culprit& x) { return x.rank == c.rank; });
      if (!elsewhere || named_there) {
        kept.push_back(std::move(c));
        continue;
      }
      unknowns.push_back(fmt::format(
          "rank {} never issued #{} of group {}, but its host waits in #{} ({}) of group {}, "
          "which never completed: it is held there, not a cause here",
          c.rank, c.seq, c.pg, h->e->is_p2p ? h->e->p2p_seq_id : h->e->collective_seq_id,
          job.op_names[it->op_of[h->e->op]], job.groups[h->group].name));
    }
    list = std::move(kept);
  }
}

rank_report describe_rank(const job_index& job, const detail::rank_data& rd) {
  rank_report r;
  r.rank = rd.rank;
  r.present = rd.source != nullptr;
  if (!r.present)
    return r;
  const dump& d = *rd.source;
  r.source = d.source;
  r.status = d.status;
  r.problem = d.problem;
  r.wrapped = rd.wrapped;
  r.timing = rd.start_visible || rd.completion_visible;
  r.entries = d.entries.size();
  if (rd.last_entry >= 0) {
    const auto& e = d.entries[static_cast<std::size_t>(rd.last_entry)];
    r.last_pg = d.groups[e.group].name;
    r.last_seq = e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
    r.last_op = job.op_names[rd.op_of[e.op]];
    r.last_state = e.state;
  }
  return r;
}

// How far each entry got (rank_report::progress; `ranks` are job.ranks' reports): its own
// state, and a collective's as its group reads it, pg_status too (job_index::progress_of): the
// reading the verdict rests on. Rank by rank, so that its ring is read from memory once.
void add_progress(const job_index& job, std::vector<rank_report>& ranks) {
  std::vector<std::vector<const detail::member_data*>> groups_of(job.ranks.size());
  for (const auto& g : job.groups)
    for (const auto& m : g.with_entries)
      groups_of[m.rank_index].push_back(&m);
  for (std::size_t ri = 0; ri < job.ranks.size(); ++ri) {
    const auto& rd = job.ranks[ri];
    if (rd.source == nullptr)
      continue;
    auto& progress = ranks[ri].progress;
    progress.reserve(rd.source->entries.size());
    for (const auto& e : rd.source->entries)
      progress.push_back(detail::progress_of_state(rd, e)); // point-to-point calls keep this
    for (const auto* m : groups_of[ri])
      for (std::size_t i = 0; i < m->entries.size(); ++i)
        progress[m->entries[i]] = job.progress_of(*m, job.at(*m, i));
  }
}

void add_rank_notes(const job_index& job, job_report& out) {
  std::vector<int> untimed, wrapped;
  for (const auto& rd : job.ranks) {
    if (rd.source == nullptr || rd.source->status != dump_status::ok)
      continue;
    if (!rd.start_visible && !rd.completion_visible)
      untimed.push_back(rd.rank);
    if (rd.wrapped)
      wrapped.push_back(rd.rank);
  }
  if (!untimed.empty())
    out.unknowns.push_back(fmt::format(
        "rank(s) {}: every entry is `scheduled` and pg_status tracks nothing (timing not "
        "enabled): whether their last collectives started or completed cannot be seen",
        detail::rank_list(untimed)));
  if (!wrapped.empty())
    out.unknowns.push_back(fmt::format(
        "rank(s) {}: the ring wrapped; collectives older than its oldest entry are unknown",
        detail::rank_list(wrapped)));
}

// Point-to-point calls are kept out of the collectives' matching and paired on their own
// (p2p_match.cpp); a rank whose host waits in one makes the job stuck, and where no unposted
// peer explains the wait, the report says where it is.
void note_p2p_waits(const job_index& job, const std::vector<int>& explained, job_report& out) {
  for (const auto& rd : job.ranks) {
    if (rd.source == nullptr || rd.last_entry < 0 || !rd.completion_visible)
      continue;
    const auto& e = rd.source->entries[static_cast<std::size_t>(rd.last_entry)];
    if (!e.is_p2p || e.state == entry_state::completed)
      continue;
    out.stuck = true;
    if (std::find(explained.begin(), explained.end(), rd.rank) != explained.end())
      continue;
    out.unknowns.push_back(fmt::format(
        "rank {} waits in a point-to-point call, {} (p2p #{}) of group {}, that never completed: "
        "its peer posted the matching call or its ring wrapped, so the dumps cannot tell which "
        "side holds it",
        rd.rank, job.op_names[rd.op_of[e.op]], e.p2p_seq_id, rd.source->groups[e.group].name));
  }
}

} // namespace

job_report analyze(std::span<const dump> dumps, const analyze_options& options) {
  const auto job = detail::build_index(dumps, options.world_size);
  job_report out;
  std::vector<std::vector<culprit>> per_group(job.groups.size());
  std::vector<detail::group_verdict> verdicts;
  for (std::size_t g = 0; g < job.groups.size(); ++g) {
    const auto& group = job.groups[g];
    const auto div = detail::compare_group(job, group);
    auto v = detail::judge_group(job, group, div);
    group_report gr;
    gr.name = group.name;
    gr.desc = group.desc;
    gr.ranks = group.members;
    for (const auto& m : group.with_entries)
      gr.dumped.push_back(job.rank_of(m));
    gr.without_dump = group.without_dump;
    gr.last_seq = v.last_seq;
    gr.last_op = v.last_op;
    gr.stuck = v.stuck;
    gr.waiting = v.waiting;
    gr.verdict = v.verdict;
    const std::optional<mismatch>* found[] = {&div.call, &div.state, &v.missing};
    for (const auto* mm : found) {
      if (!mm->has_value())
        continue;
      if (!gr.first_divergence || out.mismatches[*gr.first_divergence].seq > (*mm)->seq)
        gr.first_divergence = out.mismatches.size();
      out.mismatches.push_back(**mm);
    }
    out.stuck = out.stuck || v.stuck;
    per_group[g] = std::move(v.culprits);
    out.unknowns.insert(out.unknowns.end(), v.unknowns.begin(), v.unknowns.end());
    out.groups.push_back(std::move(gr));
  }
  drop_victims(job, per_group, out.unknowns);
  auto p2p = detail::match_p2p(job);
  for (auto& m : p2p.mismatches) {
    for (auto& gr : out.groups)
      if (gr.name == m.pg && !gr.first_divergence)
        gr.first_divergence = out.mismatches.size();
    out.mismatches.push_back(std::move(m));
  }
  per_group.push_back(std::move(p2p.culprits));
  for (auto& list : per_group)
    for (auto& c : list) {
      auto it = std::find_if(out.culprits.begin(), out.culprits.end(),
                             [&](const culprit& x) { return x.rank == c.rank; });
      if (it == out.culprits.end())
        out.culprits.push_back(std::move(c));
      else if (cause_rank(c.cause) < cause_rank(it->cause))
        *it = std::move(c);
    }
  std::sort(out.culprits.begin(), out.culprits.end(),
            [](const culprit& a, const culprit& b) { return a.rank < b.rank; });
  for (const auto& rd : job.ranks)
    out.ranks.push_back(describe_rank(job, rd));
  add_progress(job, out.ranks);
  note_p2p_waits(job, p2p.waits_explained, out);
  add_rank_notes(job, out);
  return out;
}

std::string_view to_string(cause c) noexcept {
  switch (c) {
  case cause::not_reached:
    return "not_reached";
  case cause::not_completed:
    return "not_completed";
  case cause::desync:
    return "desync";
  case cause::no_dump:
    return "no_dump";
  }
  return "not_reached";
}

std::string_view to_string(match_state state) noexcept {
  switch (state) {
  case match_state::fully_matched:
    return "FULLY_MATCHED";
  case match_state::collective_type_mismatch:
    return "COLLECTIVE_TYPE_MISMATCH";
  case match_state::size_or_syntax_mismatch:
    return "SIZE_OR_SYNTAX_MISMATCH";
  case match_state::collective_state_mismatch:
    return "COLLECTIVE_STATE_MISMATCH";
  case match_state::collective_dtype_mismatch:
    return "COLLECTIVE_DTYPE_MISMATCH";
  case match_state::undecided:
    return "UNDECIDED";
  case match_state::missing_ranks:
    return "MISSING_RANKS";
  }
  return "UNDECIDED";
}

} // namespace tdiag::trace::fr
