// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Which communication kernels on the ranks are one collective. A kernel's identity is its
// process group (Kineto's "Process Group Name" / "Process Group Ranks"; none: the whole job),
// the c10d / nccl operator that launched it (`c10d::allreduce_`), its kernel name and the
// ProfilerStep it was launched in. Only the job's ranks in the group take part: a pipeline or
// tensor-parallel group of ranks {0, 1} in a 4-rank job is matched on ranks 0 and 1 alone.
// Within one identity the members' kernels are paired by sequence number ("Seq") where every
// kernel has one, else in order, and then a pair whose kernels do not overlap on the job clock
// is no collective (every rank is inside a collective when the last one arrives): the kernel
// that ended first has no partner, and is reported, instead of shifting every later pair by one.
#include <tensordiag/trace/detail/parallel_for.hpp>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "job_breakdown.hpp"

namespace tdiag::trace::detail {

namespace {

bool is_comm_operator(std::string_view name) {
  return name.starts_with("c10d::") || name.starts_with("nccl:");
}

// The host operator that launched each correlation: the innermost enclosing `c10d::` operator
// of the launch call on its thread, else the innermost `nccl:` one; empty when none.
class comm_operators {
public:
  // `wanted`: the correlations asked about (the communication kernels'), sorted: only their
  // launches are kept, a small share of a large trace's.
  comm_operators(const trace& t, const std::vector<std::uint32_t>& wanted) : t_(t) {
    // Whether each name is a communication operator, asked once per name, not per call.
    std::vector<std::int8_t> comm(t.strings.size(), -1);
    for (const auto& a : t.api_calls.all()) {
      if (a.kind == api_kind::cpu_op && a.name < comm.size() && comm[a.name] < 0)
        comm[a.name] = is_comm_operator(t.name(a.name)) ? 1 : 0;
      if (a.kind == api_kind::cpu_op && a.name < comm.size() && comm[a.name] == 1)
        ops_.push_back(&a);
      else if (a.correlation != 0 && (a.kind == api_kind::runtime || a.kind == api_kind::driver) &&
               std::binary_search(wanted.begin(), wanted.end(), a.correlation))
        launches_.emplace(a.correlation, &a);
    }
    std::sort(ops_.begin(), ops_.end(), [](const api_event* a, const api_event* b) {
      return std::tie(a->lane, a->start) < std::tie(b->lane, b->start);
    });
  }

  [[nodiscard]] std::string_view of(std::uint32_t correlation) const {
    const auto it = launches_.find(correlation);
    if (correlation == 0 || it == launches_.end())
      return {};
    const auto& call = *it->second;
    auto pos = std::upper_bound(ops_.begin(), ops_.end(), call, [](const api_event& c, auto* op) {
      return std::tie(c.lane, c.start) < std::tie(op->lane, op->start);
    });
    std::string_view nccl;
    // Operators nest a few deep: the enclosing ones are among the last few that start before.
    for (int looked = 0; pos != ops_.begin() && looked < 16; ++looked) {
      const auto* op = *--pos;
      if (op->lane != call.lane)
        break;
      if (op->end < call.end)
        continue;
      const auto name = t_.name(op->name);
      if (name.starts_with("c10d::"))
        return name;
      if (nccl.empty())
        nccl = name;
    }
    return nccl;
  }

private:
  const trace& t_;
  std::vector<const api_event*> ops_;
  std::unordered_map<std::uint32_t, const api_event*> launches_;
};

// The first range in start order that holds `time`: every range before the first that reaches
// past it ended at or before it, and every one after starts no earlier.
int step_at(const rank_rows& rows, std::int64_t time) {
  const auto i = first_reaching(rows.step_reach, time);
  if (i < rows.step_ranges.size() && rows.step_ranges[i].start <= time)
    return rows.step_ranges[i].step;
  return -1;
}

using identity = collective_identity;

// The members of every group: the job's ranks its "Process Group Ranks" lists, or where the
// list is cut or missing, the ranks that ran any kernel of the group; for no group, every rank.
void find_members(std::span<const rank_trace> ranks, collective_kernels& groups,
                  const std::map<std::string, std::string>& listed) {
  std::map<std::string, std::vector<bool>> seen;
  for (const auto& [id, g] : groups) {
    auto& on = seen[id.group];
    on.resize(ranks.size());
    for (std::size_t r = 0; r < ranks.size(); ++r)
      on[r] = on[r] || !g.per_rank[r].empty();
  }
  for (auto& [id, g] : groups) {
    std::vector<bool> member(ranks.size(), id.group.empty());
    const auto it = listed.find(id.group);
    const auto list = it == listed.end() ? std::nullopt : parse_group_ranks(it->second);
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      if (list)
        member[r] = std::find(list->begin(), list->end(), ranks[r].rank) != list->end();
      else if (!id.group.empty())
        member[r] = seen[id.group][r];
      member[r] = member[r] || !g.per_rank[r].empty(); // a kernel says its rank took part
    }
    for (std::size_t r = 0; r < ranks.size(); ++r)
      if (member[r])
        g.members.push_back(r);
  }
}

class pairing {
public:
  pairing(std::span<const rank_trace> ranks, std::span<const std::int64_t> offsets_ns,
          collective_matches& out, bool keep_unmatched)
      : ranks_(ranks), offsets_(offsets_ns), out_(out), keep_unmatched_(keep_unmatched) {}

  // Kernels of one identity with a "Seq" each: one collective per sequence number (and, for a
  // number that launched several kernels, per kernel of it); missing on a member, unmatched.
  void by_seq(const identity& id, const kernel_group& g) {
    std::map<std::pair<std::int64_t, std::size_t>, std::vector<const gpu_row*>> by_key;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      std::map<std::int64_t, std::size_t> nth;
      for (const auto& k : g.per_rank[g.members[i]]) {
        auto& rows = by_key[{k.seq, nth[k.seq]++}];
        rows.resize(g.members.size());
        rows[i] = k.row;
      }
    }
    std::size_t occurrence = 0;
    for (auto& [key, rows] : by_key) {
      if (std::find(rows.begin(), rows.end(), nullptr) == rows.end()) {
        out_.matched.push_back({&id, key.first, id.step, occurrence++, g.members, std::move(rows)});
        continue;
      }
      for (std::size_t i = 0; i < rows.size(); ++i)
        if (rows[i])
          unmatched(id, g.members[i], rows[i], key.first);
    }
  }

  // Without sequence numbers: in start order, the overlap test (with `check_overlap`) telling
  // a missing kernel from a late one.
  void in_order(const identity& id, const kernel_group& g, bool check_overlap) {
    const auto& members = g.members;
    std::vector<std::size_t> next(members.size(), 0);
    std::size_t occurrence = 0;
    auto left = [&](std::size_t i) { return next[i] < g.per_rank[members[i]].size(); };
    auto drop = [&](std::size_t i) {
      const auto& k = g.per_rank[members[i]][next[i]++];
      unmatched(id, members[i], k.row, k.seq);
    };
    for (;;) {
      std::size_t exhausted = 0;
      for (std::size_t i = 0; i < members.size(); ++i)
        exhausted += left(i) ? 0 : 1;
      if (exhausted == members.size())
        break;
      if (exhausted > 0) { // the rest has no partner on some member
        for (std::size_t i = 0; i < members.size(); ++i)
          while (left(i))
            drop(i);
        break;
      }
      std::int64_t last_start = INT64_MIN, first_end = INT64_MAX;
      std::size_t first_ender = 0;
      for (std::size_t i = 0; i < members.size(); ++i) {
        const auto* row = g.per_rank[members[i]][next[i]].row;
        const auto offset = offsets_[members[i]];
        last_start = std::max(last_start, row->start + offset);
        if (row->end + offset < first_end) {
          first_end = row->end + offset;
          first_ender = i;
        }
      }
      if (check_overlap && last_start > first_end) {
        drop(first_ender);
        continue;
      }
      matched_collective m{&id, -1, id.step, occurrence++, members, {}};
      for (std::size_t i = 0; i < members.size(); ++i)
        m.per_member.push_back(g.per_rank[members[i]][next[i]++].row);
      out_.matched.push_back(std::move(m));
    }
  }

private:
  void unmatched(const identity& id, std::size_t r, const gpu_row* row, std::int64_t seq) {
    if (keep_unmatched_)
      out_.unmatched.push_back(
          {ranks_[r].rank, id.name, id.operation, id.group, seq, id.step, row->start, row->end});
  }

  std::span<const rank_trace> ranks_;
  std::span<const std::int64_t> offsets_;
  collective_matches& out_;
  bool keep_unmatched_ = true;
};

} // namespace

std::optional<std::vector<int>> parse_group_ranks(std::string_view text) {
  const auto open = text.find('['), close = text.rfind(']');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open ||
      text.find("...") != std::string_view::npos)
    return std::nullopt;
  std::vector<int> out;
  const char* p = text.data() + open + 1;
  const char* end = text.data() + close;
  for (;;) {
    while (p < end && (*p == ' ' || *p == ','))
      ++p;
    if (p == end)
      return out;
    int rank = 0;
    const auto [next, ec] = std::from_chars(p, end, rank);
    if (ec != std::errc{} || next == p)
      return std::nullopt;
    out.push_back(rank);
    p = next;
  }
}

namespace {

// One rank's communication kernels by identity, with string views into its trace: what
// gather_collectives merges (one string per identity, not per kernel).
struct rank_identities {
  // Views of one trace's interned strings: one text, one address, so the key compares
  // addresses (long kernel names compared by text cost more than the rest of the pairing).
  struct key {
    std::string_view group, operation, name;
    int step = -1;
    [[nodiscard]] auto tied() const {
      auto at = [](std::string_view v) {
        return v.empty() ? std::pair(std::uintptr_t{0}, std::size_t{0})
                         : std::pair(reinterpret_cast<std::uintptr_t>(v.data()), v.size());
      };
      return std::tuple(at(group), at(operation), at(name), step);
    }
    bool operator<(const key& o) const { return tied() < o.tied(); }
  };
  std::map<key, std::vector<comm_kernel>> kernels;
  std::map<std::string_view, std::string_view> listed; // group -> "Process Group Ranks"
};

rank_identities identities_of(const trace& t, const rank_rows& rows) {
  rank_identities out;
  std::vector<std::uint32_t> wanted;
  for (const auto& g : rows.gpu)
    if (g.type == kernel_class::communication && g.is_kernel && g.correlation != 0)
      wanted.push_back(g.correlation);
  std::sort(wanted.begin(), wanted.end());
  const comm_operators operators(t, wanted);
  for (const auto& g : rows.gpu) {
    if (g.type != kernel_class::communication || !g.is_kernel)
      continue;
    const auto* info = t.collective_of(g.correlation);
    rank_identities::key id{info ? t.name(info->group) : std::string_view(),
                            operators.of(g.correlation), t.name(g.name),
                            step_at(rows, g.launch_start != INT64_MIN ? g.launch_start : g.start)};
    const auto ranks_text = info ? t.name(info->group_ranks) : std::string_view();
    if (id.group.empty() && !ranks_text.empty())
      id.group = ranks_text; // a group named by its ranks alone
    if (!ranks_text.empty())
      out.listed.try_emplace(id.group, ranks_text);
    out.kernels[id].push_back({&g, info ? info->seq : -1});
  }
  return out;
}

} // namespace

collective_kernels gather_collectives(std::span<const rank_trace> ranks,
                                      const std::vector<rank_rows>& rows, unsigned threads) {
  // The ranks' identities in parallel (each reads only its trace), merged in rank order.
  std::vector<rank_identities> per_rank(ranks.size());
  // A worker's exception (bad_alloc) is rethrown here, not std::terminate.
  detail::parallel_for(ranks.size(), threads,
                       [&](std::size_t r) { per_rank[r] = identities_of(*ranks[r].t, rows[r]); });
  collective_kernels groups;
  std::map<std::string, std::string> listed; // group name -> "Process Group Ranks"
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const auto& [group, text] : per_rank[r].listed)
      listed.try_emplace(std::string(group), std::string(text));
    for (auto& [key, kernels] : per_rank[r].kernels) {
      auto& group = groups[identity{std::string(key.group), std::string(key.operation),
                                    std::string(key.name), key.step}];
      group.per_rank.resize(ranks.size());
      auto& mine = group.per_rank[r];
      if (mine.empty()) {
        mine = std::move(kernels);
        continue;
      }
      // One text under two ids (a source that interns twice): one identity, in start order.
      mine.insert(mine.end(), kernels.begin(), kernels.end());
      std::stable_sort(mine.begin(), mine.end(), [](const comm_kernel& a, const comm_kernel& b) {
        return a.row->start < b.row->start;
      });
    }
  }
  find_members(ranks, groups, listed);
  for (auto& [id, g] : groups) {
    g.all_seq = true;
    for (const auto r : g.members)
      for (const auto& k : g.per_rank[r])
        g.all_seq = g.all_seq && k.seq >= 0;
  }
  return groups;
}

collective_matches pair_collectives(const collective_kernels& groups,
                                    std::span<const rank_trace> ranks,
                                    std::span<const std::int64_t> offsets_ns, bool check_overlap,
                                    bool keep_unmatched) {
  collective_matches out;
  pairing pair(ranks, offsets_ns, out, keep_unmatched);
  for (const auto& [id, g] : groups) {
    if (g.members.size() < 2)
      continue; // one of the job's ranks in the group: nothing to pair it with
    if (g.all_seq)
      pair.by_seq(id, g);
    else
      pair.in_order(id, g, check_overlap);
  }
  return out;
}

} // namespace tdiag::trace::detail
