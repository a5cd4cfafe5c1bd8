// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Who holds one process group. The rules, each naming a rank only on positive evidence:
// - a divergent call with a clear majority: the minority issued something else (desync);
// - ranks whose ring ends earlier than the others' (the deepest laggards only: a rank in
//   between waits on them): never reached the collective the others wait in, or, when their own
//   last collective is visibly incomplete, reached it and it never completed; unless the ranks
//   ahead completed the next collective, which no laggard could have missed (dumps of another
//   time: nobody is named);
// - every member issued the last collective: those that visibly did not complete it while
//   others did (or did not start it while others did); failing that, the members without a dump
//   are the only ones whose part is unknown; failing that, the evidence cannot tell, and the
//   report says so.
#include <fmt/format.h>

#include <algorithm>

#include "group_analysis.hpp"

namespace tdiag::trace::fr::detail {
namespace {

bool incomplete(progress p) {
  return p == progress::pending || p == progress::scheduled || p == progress::started;
}

struct member_state {
  const member_data* m;
  const entry* last;
  progress p;
};

std::string op_at(const job_index& job, const group_data& g, std::int64_t seq) {
  for (const auto& m : g.with_entries)
    if (const auto* e = find_seq(job, m, seq))
      return job.op_names[job.op_id(m, *e)];
  return "?";
}

culprit make_culprit(const group_data& g, int rank, cause why, std::int64_t seq, std::string op) {
  culprit c;
  c.rank = rank;
  c.cause = why;
  c.pg = g.name;
  c.pg_desc = g.desc;
  c.seq = seq;
  c.op = std::move(op);
  return c;
}

std::vector<int> ranks_of(const job_index& job, const std::vector<member_state>& ms) {
  std::vector<int> out;
  for (const auto& s : ms)
    out.push_back(job.rank_of(*s.m));
  return out;
}

void judge_desync(const job_index& job, const group_data& g, const mismatch& mm, group_verdict& v) {
  const auto expected_op = mm.expected.substr(0, mm.expected.find(' '));
  for (const auto& m : g.with_entries) {
    const int rank = job.rank_of(m);
    const auto at = std::find(mm.ranks.begin(), mm.ranks.end(), rank);
    if (at == mm.ranks.end())
      continue;
    auto c = make_culprit(g, rank, cause::desync, mm.seq, expected_op);
    const auto* e = find_seq(job, m, mm.seq);
    attach_entry(job, m.rank_index, *e, job.progress_of(m, *e), c);
    // The calls in full (op, sizes, dtypes): a size or dtype divergence shows in them alone.
    const auto i = static_cast<std::size_t>(at - mm.ranks.begin());
    const auto& issued = i < mm.found.size() && !mm.found[i].empty() ? mm.found[i] : c.own_op;
    // Every rank issued the same call (group_match's self_mismatch): the call itself is wrong.
    const bool all = mm.ranks.size() == g.with_entries.size() && issued == mm.expected;
    c.detail = all ? fmt::format("issued {} as #{} of group {}, as every rank did; it does not fit "
                                 "a group of {} ({})",
                                 issued, mm.seq, g.name, g.members.size(), to_string(mm.state))
                   : fmt::format("issued {} as #{} of group {} where the others issued {} ({})",
                                 issued, mm.seq, g.name, mm.expected, to_string(mm.state));
    v.culprits.push_back(std::move(c));
  }
  v.verdict = fmt::format("diverged at #{}: {}", mm.seq, mm.detail);
}

// PyTorch's "missing ranks": the collective the ranks ahead issued and the laggards never did.
mismatch missing_ranks(const group_data& g, std::int64_t seq, const std::string& op,
                       const std::vector<int>& laggards, const std::vector<int>& ahead) {
  mismatch m;
  m.pg = g.name;
  m.seq = seq;
  m.state = match_state::missing_ranks;
  m.expected = op;
  m.ranks = laggards;
  m.found.assign(laggards.size(), "");
  m.detail = fmt::format("#{} ({}) issued by ranks {}, never by rank(s) {}", seq, op,
                         rank_list(ahead), rank_list(laggards));
  return m;
}

// Ranks whose ring ends before the others': the deepest ones hold the group.
bool judge_laggards(const job_index& job, const group_data& g, std::vector<member_state>& ms,
                    group_verdict& v) {
  const std::int64_t top = v.last_seq;
  std::int64_t level = top;
  for (const auto& s : ms)
    level = std::min(level, s.m->hi);
  const bool silent = !g.silent.empty();
  if (!silent && level == top)
    return false;
  std::vector<member_state> deepest, ahead;
  for (const auto& s : ms)
    (!silent && s.m->hi == level ? deepest : ahead).push_back(s);
  // Where the ranks ahead stand: their first collective past the laggards' level.
  std::int64_t wait_seq = top;
  bool all_completed = true;
  for (const auto& s : ahead) {
    const auto& entries = s.m->entries;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = job.at(*s.m, i);
      if (!silent && e.collective_seq_id <= level)
        continue;
      const auto p = job.progress_of(*s.m, e);
      all_completed = all_completed && p == progress::completed;
      if (p != progress::completed)
        wait_seq = std::min(wait_seq, e.collective_seq_id);
      break;
    }
  }
  std::vector<int> laggards = silent ? g.silent : ranks_of(job, deepest);
  if (all_completed) {
    v.verdict = fmt::format("rank(s) {} completed up to #{}; the rings of rank(s) {} end at #{}",
                            rank_list(ranks_of(job, ahead)), top, rank_list(laggards), level);
    v.unknowns.push_back(fmt::format(
        "group {}: the rings of rank(s) {} end before #{}, which ranks {} completed: their "
        "dumps are likely older than the others'; no rank is named for this group",
        g.name, rank_list(laggards), level + 1, rank_list(ranks_of(job, ahead))));
    return true;
  }
  const auto wait_op = op_at(job, g, wait_seq);
  for (const auto& s : ahead)
    if (incomplete(s.p)) {
      v.waiting.push_back(job.rank_of(*s.m));
      v.stuck = true;
    }
  v.missing = missing_ranks(g, wait_seq, wait_op, laggards, ranks_of(job, ahead));
  // More ranks behind than ahead: the few ahead may as well have issued a collective the
  // others never will (an extra call is a desync too); the dumps cannot tell which.
  if (laggards.size() > ahead.size()) {
    v.verdict =
        fmt::format("rank(s) {} issued #{} ({}); rank(s) {} never did",
                    rank_list(ranks_of(job, ahead)), wait_seq, wait_op, rank_list(laggards));
    v.unknowns.push_back(fmt::format(
        "group {}: {}: either the {} ranks behind never reached it or the {} ahead issued a "
        "collective the others never will; the dumps cannot tell, and no rank is named",
        g.name, v.verdict, laggards.size(), ahead.size()));
    return true;
  }
  // What the ranks ahead do, no more than their dumps show.
  const auto others = v.stuck ? fmt::format("ranks {} wait in", rank_list(v.waiting))
                              : fmt::format("ranks {} issued (their completion is not visible)",
                                            rank_list(ranks_of(job, ahead)));
  for (int rank : g.silent) {
    auto c = make_culprit(g, rank, cause::not_reached, wait_seq, wait_op);
    c.detail = fmt::format("never issued any collective of group {}: {} #{} ({})", g.name, others,
                           wait_seq, wait_op);
    v.culprits.push_back(std::move(c));
  }
  for (const auto& s : deepest) {
    const int rank = job.rank_of(*s.m);
    culprit c;
    if (incomplete(s.p)) {
      c = make_culprit(g, rank, cause::not_completed, s.last->collective_seq_id,
                       job.op_names[job.op_id(*s.m, *s.last)]);
      attach_entry(job, s.m->rank_index, *s.last, s.p, c);
      c.detail = fmt::format("issued #{} ({}) and its work never completed ({}); {} the later #{} "
                             "({})",
                             c.own_seq, c.own_op, c.own_state, others, wait_seq, wait_op);
    } else {
      c = make_culprit(g, rank, cause::not_reached, wait_seq, wait_op);
      attach_entry(job, s.m->rank_index, *s.last, s.p, c);
      c.detail = fmt::format("never issued #{} ({}) that {}; its last collective of the group is "
                             "#{} ({}, {})",
                             wait_seq, wait_op, others, c.own_seq, c.own_op, c.own_state);
    }
    v.culprits.push_back(std::move(c));
  }
  v.verdict = v.stuck ? fmt::format("stuck in #{} ({}): rank(s) {} never issued it", wait_seq,
                                    wait_op, rank_list(laggards))
                      : fmt::format("rank(s) {} never issued #{} ({}), which the others issued; "
                                    "its completion is not visible",
                                    rank_list(laggards), wait_seq, wait_op);
  return true;
}

// Every member issued the last collective; `done` completed it, `not_done` did not. Names the
// member without a dump, or nobody where every member dumped; false where neither applies.
bool judge_completed_elsewhere(const job_index& job, const group_data& g,
                               const std::vector<member_state>& done,
                               const std::vector<member_state>& not_done, const std::string& op,
                               group_verdict& v) {
  // Completed anywhere, a collective was issued by every member; a member that dies inside it
  // leaves the others' parts incomplete. So where one member left no dump, it most likely holds
  // the job and the ranks that did not complete wait on it.
  if (g.without_dump.size() == 1 && g.silent_wrapped.empty()) {
    const int gone = g.without_dump.front();
    const auto holding = rank_list(ranks_of(job, not_done));
    for (const auto& s : not_done)
      v.waiting.push_back(job.rank_of(*s.m));
    auto c = make_culprit(g, gone, cause::no_dump, v.last_seq, op);
    c.detail = fmt::format(
        "left no readable dump (none, an empty one or one cut short) while #{} ({}) completed on "
        "ranks {} and not on {}: a "
        "collective that completed anywhere was issued by every member, and a member that dies "
        "inside it leaves the others' parts incomplete",
        v.last_seq, op, rank_list(ranks_of(job, done)), holding);
    v.culprits.push_back(std::move(c));
    v.unknowns.push_back(fmt::format(
        "group {}: if rank {} was alive, rank(s) {} not completing #{} ({}) is what holds the "
        "group; the dumps cannot tell",
        g.name, gone, holding, v.last_seq, op));
    v.stuck = true;
    v.verdict = fmt::format("stuck in #{} ({}): completed on rank(s) {}, not on {}; rank {} left "
                            "no dump",
                            v.last_seq, op, rank_list(ranks_of(job, done)), holding, gone);
    return true;
  }
  // Every member dumped and some completed it: each member's part arrived, so those not
  // completed will. Their completion is recorded late (gloo marks it when the work is reaped,
  // NCCL's watchdog polls), which a dump taken right after the call shows (PyTorch 2.11, gloo:
  // two of six ranks of a job that hung nowhere). Nothing holds the group in it.
  if (g.without_dump.empty() && g.silent_wrapped.empty()) {
    const auto late = rank_list(ranks_of(job, not_done));
    v.stuck = false;
    v.verdict = fmt::format("every member issued #{} ({}); ranks {} completed it, {} not yet",
                            v.last_seq, op, rank_list(ranks_of(job, done)), late);
    v.unknowns.push_back(fmt::format(
        "group {}: rank(s) {} had not recorded #{} ({}) as completed when they dumped, which "
        "ranks {} had: a collective completes on one member only once every member's part "
        "arrived, so this is a completion recorded late, not a rank holding the group",
        g.name, late, v.last_seq, op, rank_list(ranks_of(job, done))));
    return true;
  }
  return false;
}

// Every member issued the last collective: who visibly lags in completing or starting it.
void judge_frontier(const job_index& job, const group_data& g, std::vector<member_state>& ms,
                    group_verdict& v) {
  std::vector<member_state> done, not_done, started, scheduled, unknown;
  for (const auto& s : ms) {
    (s.p == progress::completed ? done : incomplete(s.p) ? not_done : unknown).push_back(s);
    if (s.p == progress::started)
      started.push_back(s);
    if (s.p == progress::scheduled)
      scheduled.push_back(s);
  }
  const auto op = op_at(job, g, v.last_seq);
  if (not_done.empty() && unknown.empty()) {
    if (g.without_dump.empty()) {
      v.verdict = fmt::format("every member completed #{} ({})", v.last_seq, op);
      return;
    }
    // Members without a dump are no evidence of having completed it: said, not counted in.
    v.verdict =
        fmt::format("rank(s) {} completed #{} ({}); rank(s) {} left no dump",
                    rank_list(ranks_of(job, done)), v.last_seq, op, rank_list(g.without_dump));
    v.unknowns.push_back(fmt::format("group {}: rank(s) {} left no dump, so how far they got "
                                     "cannot be told",
                                     g.name, rank_list(g.without_dump)));
    return;
  }
  v.stuck = !not_done.empty();
  const std::vector<member_state>* holders = nullptr;
  std::string why;
  if (!done.empty() && !not_done.empty()) {
    holders = &not_done;
    why = fmt::format("ranks {} completed it", rank_list(ranks_of(job, done)));
  } else if (!started.empty() && !scheduled.empty()) {
    holders = &scheduled;
    why = fmt::format("its work never started here while ranks {} started it",
                      rank_list(ranks_of(job, started)));
  }
  for (const auto& s : ms)
    if (s.p != progress::completed &&
        (holders == nullptr || std::none_of(holders->begin(), holders->end(),
                                            [&](const member_state& h) { return h.m == s.m; })))
      v.waiting.push_back(job.rank_of(*s.m));
  if (holders == &not_done && judge_completed_elsewhere(job, g, done, not_done, op, v))
    return;
  if (holders != nullptr) {
    for (const auto& s : *holders) {
      auto c = make_culprit(g, job.rank_of(*s.m), cause::not_completed, v.last_seq, op);
      attach_entry(job, s.m->rank_index, *s.last, s.p, c);
      c.detail = fmt::format("issued #{} ({}) like every member, but it is {} here: {}", v.last_seq,
                             op, c.own_state, why);
      v.culprits.push_back(std::move(c));
    }
    v.verdict = fmt::format("stuck in #{} ({}) on rank(s) {}", v.last_seq, op,
                            rank_list(ranks_of(job, *holders)));
    return;
  }
  // Every dumped member visibly waits in the same collective: the members without a dump are
  // the only ones whose part is unknown. One of them is named; of several, which ones hold the
  // job cannot be told (a node that went down takes innocent ranks' dumps with it).
  const bool all_waiting = not_done.size() == ms.size();
  if (!g.without_dump.empty() && g.silent_wrapped.empty() && all_waiting) {
    v.stuck = true;
    v.verdict = fmt::format("stuck in #{} ({}); rank(s) {} left no dump", v.last_seq, op,
                            rank_list(g.without_dump));
    if (g.without_dump.size() > 1) {
      v.unknowns.push_back(fmt::format(
          "group {}: every dumped member (ranks {}) waits in #{} ({}); ranks {} left no dump: "
          "one or more of them holds the group, which the dumps cannot tell",
          g.name, rank_list(ranks_of(job, ms)), v.last_seq, op, rank_list(g.without_dump)));
      return;
    }
    auto c = make_culprit(g, g.without_dump.front(), cause::no_dump, v.last_seq, op);
    c.detail = fmt::format(
        "left no readable dump (none, an empty one or one cut short); every member that dumped "
        "({}) issued #{} ({}) and "
        "waits in it, so this rank's part is the one the dumps cannot show: whether it never "
        "reached #{} or its work never completed cannot be known",
        rank_list(ranks_of(job, ms)), v.last_seq, op, v.last_seq);
    v.culprits.push_back(std::move(c));
    return;
  }
  const auto state = to_string(ms.front().p);
  v.verdict = fmt::format("every dumped member issued #{} ({}), {} on each", v.last_seq, op, state);
  if (v.stuck || !unknown.empty())
    v.unknowns.push_back(fmt::format(
        "group {}: every dumped member (ranks {}) issued #{} ({}) and none shows more progress "
        "than another ({}); the dumps cannot tell which rank holds it{}",
        g.name, rank_list(ranks_of(job, ms)), v.last_seq, op,
        unknown.empty() ? std::string(state) : "completion not visible",
        g.silent_wrapped.empty()
            ? std::string()
            : fmt::format(" (rank(s) {} hold no entry of the group in their wrapped rings)",
                          rank_list(g.silent_wrapped))));
}

} // namespace

void attach_entry(const job_index& job, std::uint32_t rank_index, const entry& e, progress p,
                  culprit& c) {
  const auto& rd = job.ranks[rank_index];
  c.own_seq = e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
  c.own_op = job.op_names[rd.op_of[e.op]];
  c.own_state = std::string(to_string(p));
  c.frames = rd.source->stacks[e.stack];
}

group_verdict judge_group(const job_index& job, const group_data& g, const divergences& div) {
  group_verdict v;
  if (g.with_entries.empty()) {
    v.verdict = "no member's ring holds a collective of this group";
    return v;
  }
  std::vector<member_state> ms;
  for (const auto& m : g.with_entries) {
    const auto& last = job.at(m, m.entries.size() - 1);
    ms.push_back({&m, &last, job.progress_of(m, last)});
    v.last_seq = std::max(v.last_seq, m.hi);
  }
  v.last_op = op_at(job, g, v.last_seq);
  const bool decisive = div.call && !div.call_tie && div.call->state != match_state::undecided &&
                        div.call->state != match_state::fully_matched;
  if (decisive) {
    judge_desync(job, g, *div.call, v);
    for (const auto& s : ms)
      if (s.p != progress::completed) {
        v.stuck = v.stuck || incomplete(s.p);
        if (std::find(div.call->ranks.begin(), div.call->ranks.end(), job.rank_of(*s.m)) ==
            div.call->ranks.end())
          v.waiting.push_back(job.rank_of(*s.m));
      }
  } else {
    if (div.call)
      v.unknowns.push_back(fmt::format("group {}: {}", g.name, div.call->detail));
    if (!judge_laggards(job, g, ms, v))
      judge_frontier(job, g, ms, v);
  }
  const bool named_here = std::any_of(v.culprits.begin(), v.culprits.end(),
                                      [](const culprit& c) { return c.cause != cause::no_dump; });
  if (named_here && !g.without_dump.empty())
    v.unknowns.push_back(fmt::format("group {}: rank(s) {} left no readable dump (none, an empty "
                                     "one or one cut short): their part cannot be known",
                                     g.name, rank_list(g.without_dump)));
  std::sort(v.waiting.begin(), v.waiting.end());
  return v;
}

} // namespace tdiag::trace::fr::detail
