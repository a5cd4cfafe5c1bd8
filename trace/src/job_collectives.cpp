// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Which communication kernels on the ranks are one collective. A kernel's identity is the
// c10d / nccl operator that launched it (`c10d::allreduce_`), its kernel name and the
// ProfilerStep it was launched in; within one identity the ranks' kernels are paired in order,
// and a pair whose kernels do not overlap on the job clock is no collective (every rank is
// inside a collective when the last one arrives): the kernel that ended first has no partner,
// and is reported, instead of shifting every later pair by one.
#include <algorithm>
#include <map>
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
  explicit comm_operators(const trace& t) : t_(t) {
    for (const auto& a : t.api_calls.all()) {
      if (a.kind == api_kind::cpu_op && is_comm_operator(t.name(a.name)))
        ops_.push_back(&a);
      else if (a.correlation != 0 && (a.kind == api_kind::runtime || a.kind == api_kind::driver))
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

int step_at(const rank_rows& rows, std::int64_t time) {
  for (const auto& s : rows.step_ranges)
    if (s.start <= time && time < s.end)
      return s.step;
  return -1;
}

struct identity {
  std::string operation, name;
  int step = -1;
  bool operator<(const identity& o) const {
    return std::tie(operation, name, step) < std::tie(o.operation, o.name, o.step);
  }
};

} // namespace

collective_matches match_collectives(std::span<const rank_trace> ranks,
                                     const std::vector<rank_rows>& rows,
                                     std::span<const std::int64_t> offsets_ns, bool check_overlap) {
  // Per identity, per rank: its communication kernels in start order.
  std::map<identity, std::vector<std::vector<const gpu_row*>>> groups;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const comm_operators operators(*ranks[r].t);
    for (const auto& g : rows[r].gpu) {
      if (g.type != kernel_class::communication || !g.is_kernel)
        continue;
      identity id{std::string(operators.of(g.correlation)), std::string(ranks[r].t->name(g.name)),
                  step_at(rows[r], g.launch_start != INT64_MIN ? g.launch_start : g.start)};
      auto& per_rank = groups[std::move(id)];
      per_rank.resize(ranks.size());
      per_rank[r].push_back(&g);
    }
  }
  collective_matches out;
  for (auto& group : groups) {
    // Named, not structured bindings: lambdas capture them only from C++20 on clang 15.
    const auto& id = group.first;
    auto& per_rank = group.second;
    per_rank.resize(ranks.size());
    std::vector<std::size_t> next(ranks.size(), 0);
    std::size_t occurrence = 0;
    auto unmatched = [&](std::size_t r) {
      const auto* g = per_rank[r][next[r]++];
      out.unmatched.push_back({ranks[r].rank, id.name, id.operation, id.step, g->start, g->end});
    };
    for (;;) {
      std::size_t exhausted = 0;
      for (std::size_t r = 0; r < ranks.size(); ++r)
        exhausted += next[r] == per_rank[r].size();
      if (exhausted == ranks.size())
        break;
      if (exhausted > 0) { // the rest has no partner on some rank
        for (std::size_t r = 0; r < ranks.size(); ++r)
          while (next[r] < per_rank[r].size())
            unmatched(r);
        break;
      }
      std::int64_t last_start = INT64_MIN, first_end = INT64_MAX;
      std::size_t first_ender = 0;
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        const auto* g = per_rank[r][next[r]];
        last_start = std::max(last_start, g->start + offsets_ns[r]);
        if (g->end + offsets_ns[r] < first_end) {
          first_end = g->end + offsets_ns[r];
          first_ender = r;
        }
      }
      if (check_overlap && last_start > first_end) {
        unmatched(first_ender);
        continue;
      }
      matched_collective m{id.name, id.operation, id.step, occurrence++, {}};
      for (std::size_t r = 0; r < ranks.size(); ++r)
        m.per_rank.push_back(per_rank[r][next[r]++]);
      out.matched.push_back(std::move(m));
    }
  }
  return out;
}

} // namespace tdiag::trace::detail
