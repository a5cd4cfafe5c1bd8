// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Matching one group's collectives across its members by collective_seq_id. Each member's
// entries are already in seq order, so one cursor per member walks the union of seqs once:
// O(members x entries), integer compares on job-wide op and shape ids. A seq below a ring's
// oldest entry is unknown for that rank, never missing: only ranks holding a seq are compared.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "group_analysis.hpp"

namespace tdiag::trace::fr::detail {
namespace {

struct participant {
  const member_data* member;
  const entry* e;
};

// The call classes at one seq, largest first.
struct call_class {
  std::uint64_t key;
  std::vector<const participant*> who;
};

std::uint64_t call_key(const job_index& job, const participant& p) {
  return (std::uint64_t{job.op_id(*p.member, *p.e)} << 32) | job.shapes_id(*p.member, *p.e);
}

mismatch call_mismatch(const job_index& job, const group_data& g, std::int64_t seq,
                       const std::vector<participant>& at, bool& tie) {
  std::map<std::uint64_t, std::vector<const participant*>> by_key;
  for (const auto& p : at)
    by_key[call_key(job, p)].push_back(&p);
  std::vector<call_class> classes;
  for (auto& [key, who] : by_key)
    classes.push_back({key, std::move(who)});
  std::stable_sort(classes.begin(), classes.end(), [](const call_class& a, const call_class& b) {
    return a.who.size() > b.who.size();
  });
  tie = classes.size() > 1 && classes[0].who.size() == classes[1].who.size();
  const auto op_of = [&](const participant& p) { return job.op_id(*p.member, *p.e); };
  const auto shapes_of = [&](const participant& p) {
    return *job.shapes[job.shapes_id(*p.member, *p.e)];
  };
  const participant& ref = *classes[0].who.front();
  const participant& first_other = *classes[1].who.front();
  mismatch m;
  m.pg = g.name;
  m.seq = seq;
  m.state =
      compare_calls(job.op_types[op_of(ref)], shapes_of(ref), job.op_types[op_of(first_other)],
                    shapes_of(first_other), g.members.size());
  m.expected = describe_call(job.op_names[op_of(ref)], shapes_of(ref));
  std::vector<std::pair<int, std::string>> found;
  for (std::size_t c = 1; c < classes.size(); ++c)
    for (const auto* p : classes[c].who)
      found.emplace_back(job.rank_of(*p->member),
                         describe_call(job.op_names[op_of(*p)], shapes_of(*p)));
  std::sort(found.begin(), found.end());
  for (auto& [rank, text] : found) {
    m.ranks.push_back(rank);
    m.found.push_back(std::move(text));
  }
  std::vector<int> majority;
  for (const auto* p : classes[0].who)
    majority.push_back(job.rank_of(*p->member));
  std::sort(majority.begin(), majority.end());
  m.detail = fmt::format("at #{} ranks {} issued {}; rank(s) {} issued {}{}", seq,
                         rank_list(majority), m.expected, rank_list(m.ranks), m.found.front(),
                         tie ? " (no majority: which side deviated cannot be told)" : "");
  return m;
}

// Every rank issued the same call, but the call does not fit its group (an all_gather whose
// output is not the group size times its input, input and output dtypes that differ): the
// rules are held against the call itself, so a mistake every rank made is found too (it read
// "every collective matched").
std::optional<mismatch> self_mismatch(const job_index& job, const group_data& g, std::int64_t seq,
                                      const std::vector<participant>& at) {
  const auto& p = at.front();
  const auto op = job.op_id(*p.member, *p.e);
  const auto& shapes = *job.shapes[job.shapes_id(*p.member, *p.e)];
  mismatch m;
  m.state = compare_calls(job.op_types[op], shapes, job.op_types[op], shapes, g.members.size());
  if (m.state == match_state::fully_matched || m.state == match_state::undecided)
    return std::nullopt;
  m.pg = g.name;
  m.seq = seq;
  m.expected = describe_call(job.op_names[op], shapes);
  for (const auto& q : at) {
    m.ranks.push_back(job.rank_of(*q.member));
    m.found.push_back(m.expected);
  }
  std::sort(m.ranks.begin(), m.ranks.end());
  m.detail = fmt::format("at #{} every rank ({}) issued {}, which does not fit a group of {}{}",
                         seq, rank_list(m.ranks), m.expected, g.members.size(),
                         m.state == match_state::collective_dtype_mismatch
                             ? " (its input and output dtypes differ)"
                             : " (its element counts do not match the group size)");
  return m;
}

// Completion first (some completed, some not), then start (some started, some scheduled).
std::optional<mismatch> state_mismatch(const job_index& job, const group_data& g, std::int64_t seq,
                                       const std::vector<participant>& at) {
  std::vector<int> done, not_done, started, scheduled;
  for (const auto& p : at) {
    const auto pr = job.progress_of(*p.member, *p.e);
    const int rank = job.rank_of(*p.member);
    if (pr == progress::completed)
      done.push_back(rank);
    else if (pr != progress::unknown)
      not_done.push_back(rank);
    if (pr == progress::started)
      started.push_back(rank);
    else if (pr == progress::scheduled)
      scheduled.push_back(rank);
  }
  mismatch m;
  m.pg = g.name;
  m.seq = seq;
  m.state = match_state::collective_state_mismatch;
  m.expected = job.op_names[job.op_id(*at.front().member, *at.front().e)];
  if (!done.empty() && !not_done.empty()) {
    m.ranks = not_done;
    m.found.assign(not_done.size(), "not completed");
    m.detail = fmt::format("#{} {} completed on rank(s) {}, not on rank(s) {}", seq, m.expected,
                           rank_list(done), rank_list(not_done));
    return m;
  }
  if (!started.empty() && !scheduled.empty()) {
    m.ranks = scheduled;
    m.found.assign(scheduled.size(), "scheduled");
    m.detail = fmt::format("#{} {} started on rank(s) {}, still scheduled on rank(s) {}", seq,
                           m.expected, rank_list(started), rank_list(scheduled));
    return m;
  }
  return std::nullopt;
}

} // namespace

const entry* find_seq(const job_index& job, const member_data& m, std::int64_t seq) {
  const auto& entries = job.ranks[m.rank_index].source->entries;
  const auto it = std::lower_bound(
      m.entries.begin(), m.entries.end(), seq,
      [&](std::uint32_t i, std::int64_t s) { return entries[i].collective_seq_id < s; });
  if (it == m.entries.end() || entries[*it].collective_seq_id != seq)
    return nullptr;
  return &entries[*it];
}

divergences compare_group(const job_index& job, const group_data& g) {
  divergences out;
  const auto n = g.with_entries.size();
  std::vector<std::size_t> cursor(n, 0);
  std::vector<participant> at;
  constexpr auto none = std::numeric_limits<std::int64_t>::max();
  const auto seq_at = [&](std::size_t i) {
    const auto& m = g.with_entries[i];
    return cursor[i] < m.entries.size() ? job.at(m, cursor[i]).collective_seq_id : none;
  };
  std::int64_t seq = none;
  for (std::size_t i = 0; i < n; ++i)
    seq = std::min(seq, seq_at(i));
  while (seq != none && (!out.call || !out.state)) {
    at.clear();
    std::int64_t next = none;
    for (std::size_t i = 0; i < n; ++i) {
      if (seq_at(i) == seq) {
        at.push_back({&g.with_entries[i], &job.at(g.with_entries[i], cursor[i])});
        ++cursor[i];
      }
      next = std::min(next, seq_at(i));
    }
    if (at.size() > 1) {
      if (!out.call) {
        const auto key = call_key(job, at.front());
        const bool same = std::all_of(at.begin() + 1, at.end(), [&](const participant& p) {
          return call_key(job, p) == key;
        });
        // Calls whose sizes legitimately differ per rank (scatter, gather, the _v and
        // all_to_all families) differ in key but match: only a real divergence counts.
        if (!same) {
          bool tie = false;
          auto mm = call_mismatch(job, g, seq, at, tie);
          if (mm.state != match_state::fully_matched && mm.state != match_state::undecided) {
            out.call = std::move(mm);
            out.call_tie = tie;
          }
        } else {
          out.call = self_mismatch(job, g, seq, at);
        }
      }
      if (!out.state)
        out.state = state_mismatch(job, g, seq, at);
    }
    seq = next;
  }
  return out;
}

} // namespace tdiag::trace::fr::detail
