// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job's clock. A collective ends together on every member (the last arrival releases them
// all, within the network's skew), so every matched collective says, for each member, that its
// end plus its clock offset is the same instant. The offsets are solved over all matched
// collectives of all groups at once, the reference rank fixed at 0: a rank of a
// tensor-parallel group that never meets the reference is tied to it through its other groups.
// The estimator is robust: every pair of ranks that shares collectives contributes the median
// of the densest half of their end differences (a collective mis-paired or ended late by a
// slow link does not move it; of fewer than 8, their median), and the pairs are reconciled by least
// squares re-weighted Huber-style, so a pair whose median disagrees with what the others imply
// stops pulling.
//
// The pairing needs a clock (a pair counts when the kernels overlap) and the clock needs the
// pairing, so two starts are tried: the pairs that Kineto's base time lets overlap, and the
// pairs in order without the overlap test (what a clock off by milliseconds still pairs). Each
// is solved, re-paired on its own solution until the pairs stop changing, and the start whose
// collectives overlap well (the last arrival's kernel mostly inside the others') on more
// kernels wins; on a tie, the base time's.
#include <tensordiag/trace/codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "job_breakdown.hpp"

namespace tdiag::trace {

std::string_view to_string(clock_alignment a) noexcept {
  switch (a) {
  case clock_alignment::automatic:
    return "auto";
  case clock_alignment::base_time:
    return "base-time";
  case clock_alignment::collectives:
    break;
  }
  return "collectives";
}

std::optional<clock_alignment> clock_alignment_from_name(std::string_view name) noexcept {
  if (name == "auto")
    return clock_alignment::automatic;
  if (name == "base-time")
    return clock_alignment::base_time;
  if (name == "collectives")
    return clock_alignment::collectives;
  return std::nullopt;
}

namespace detail {

namespace {

// The median of v (the mean of the two middle values for an even count); v is reordered.
std::int64_t median_of(std::vector<std::int64_t>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2)
    return *mid;
  const auto below = *std::max_element(v.begin(), mid);
  return below + (*mid - below) / 2;
}

// A robust centre of one pair's end differences: the median of their densest half (the
// shortest window holding half of them), so a minority of mis-paired or delayed collectives,
// however far off, moves it by nothing; of fewer than 8, their median. Past 4096 differences
// an even sample of them.
std::int64_t densest_half_median(std::vector<std::int64_t>& v) {
  constexpr std::size_t most = 4096;
  if (v.size() > most) {
    const double step = static_cast<double>(v.size()) / most;
    for (std::size_t i = 0; i < most; ++i)
      v[i] = v[static_cast<std::size_t>(static_cast<double>(i) * step)];
    v.resize(most);
  }
  if (v.size() < 8) // too few for a densest half to mean more than their median
    return median_of(v);
  std::sort(v.begin(), v.end());
  const auto h = v.size() / 2 + 1;
  std::size_t best = 0;
  for (std::size_t i = 0; i + h <= v.size(); ++i)
    if (v[i + h - 1] - v[i] < v[best + h - 1] - v[best])
      best = i;
  std::vector<std::int64_t> half(v.begin() + static_cast<std::ptrdiff_t>(best),
                                 v.begin() + static_cast<std::ptrdiff_t>(best + h));
  return median_of(half);
}

// The median of `sorted` without its element at position p.
std::int64_t median_without(const std::vector<std::int64_t>& sorted, std::size_t p) {
  const auto m = sorted.size() - 1;
  auto at = [&](std::size_t k) { return sorted[k < p ? k : k + 1]; };
  if (m % 2)
    return at(m / 2);
  const auto a = at(m / 2 - 1), b = at(m / 2);
  return a + (b - a) / 2;
}

// For one collective on offsets `o`: per member, the median of the other members' aligned ends
// minus its own end (the offset this collective asks of it).
void votes_of(const matched_collective& m, std::span<const std::int64_t> o,
              std::vector<std::pair<std::int64_t, std::size_t>>& scratch,
              std::vector<std::int64_t>& sorted, std::vector<std::int64_t>& out) {
  const auto n = m.members.size();
  scratch.clear();
  for (std::size_t i = 0; i < n; ++i)
    scratch.emplace_back(m.per_member[i]->end + o[m.members[i]], i);
  std::sort(scratch.begin(), scratch.end());
  sorted.clear();
  for (const auto& [v, i] : scratch)
    sorted.push_back(v);
  out.assign(n, 0);
  for (std::size_t p = 0; p < n; ++p) {
    const auto i = scratch[p].second;
    out[i] = median_without(sorted, p) - m.per_member[i]->end;
  }
}

struct solution {
  std::vector<std::int64_t> offsets; ///< the reference at 0
  std::vector<bool> solved;          ///< tied to the reference by some collective
  std::size_t paired_kernels = 0;    ///< kernels of collectives overlapping well on `offsets`
  collective_matches matches;        ///< that pairing
};

// Ranks tied to `reference` through the collectives (union-find over members).
using collective_refs = std::vector<const matched_collective*>;

collective_refs refs_of(const std::vector<matched_collective>& ms) {
  collective_refs out;
  out.reserve(ms.size());
  for (const auto& m : ms)
    out.push_back(&m);
  return out;
}

std::vector<bool> tied_to(const collective_refs& ms, std::size_t n, std::size_t reference) {
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](std::size_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  };
  for (const auto* m : ms)
    for (std::size_t i = 1; i < m->members.size(); ++i)
      parent[find(m->members[i])] = find(m->members[0]);
  std::vector<bool> out(n);
  for (std::size_t r = 0; r < n; ++r)
    out[r] = find(r) == find(reference);
  return out;
}

// Per pair of ranks that share collectives: the differences of their ends, which are the
// differences of their offsets. Groups of up to 16 give every pair; larger ones each member
// with the first and with its neighbour (enough to tie them, linear in size).
struct pair_diffs {
  std::size_t a = 0, b = 0;
  std::vector<std::int64_t> diffs; ///< o_a - o_b, one per collective
};

std::vector<pair_diffs> pair_differences(const collective_refs& ms, std::size_t n) {
  std::vector<pair_diffs> out;
  std::unordered_map<std::uint64_t, std::size_t> slot; // a * n + b -> out index
  std::uint64_t last_key = UINT64_MAX;
  std::size_t last_slot = 0;
  auto add = [&](const matched_collective& m, std::size_t i, std::size_t j) {
    auto a = m.members[i], b = m.members[j];
    auto d = m.per_member[j]->end - m.per_member[i]->end; // o_a - o_b
    if (a > b) {
      std::swap(a, b);
      d = -d;
    }
    const auto key = static_cast<std::uint64_t>(a) * n + b;
    if (key != last_key) {
      const auto [it, fresh] = slot.try_emplace(key, out.size());
      if (fresh)
        out.push_back({a, b, {}});
      last_key = key;
      last_slot = it->second;
    }
    out[last_slot].diffs.push_back(d);
  };
  for (const auto* m : ms) {
    const auto size = m->members.size();
    if (size <= 16) {
      for (std::size_t i = 0; i < size; ++i)
        for (std::size_t j = i + 1; j < size; ++j)
          add(*m, i, j);
    } else {
      for (std::size_t i = 1; i < size; ++i) {
        add(*m, 0, i);
        if (i > 1)
          add(*m, i - 1, i);
      }
    }
  }
  return out;
}

// Solves A x = b in place (Gaussian elimination with partial pivoting; A is symmetric positive
// definite here, a graph Laplacian with the reference removed).
std::vector<double> solve_linear(std::vector<std::vector<double>> a, std::vector<double> b) {
  const auto n = b.size();
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::abs(a[r][c]) > std::abs(a[pivot][c]))
        pivot = r;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    if (a[c][c] == 0)
      continue;
    for (std::size_t r = c + 1; r < n; ++r) {
      const double f = a[r][c] / a[c][c];
      if (f == 0)
        continue;
      for (std::size_t k = c; k < n; ++k)
        a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> x(n, 0.0);
  for (std::size_t c = n; c-- > 0;) {
    double v = b[c];
    for (std::size_t k = c + 1; k < n; ++k)
      v -= a[c][k] * x[k];
    x[c] = a[c][c] != 0 ? v / a[c][c] : 0.0;
  }
  return x;
}

// The offsets, the reference at 0: every pair of ranks that shares collectives says, by the
// median of the densest half of their end differences, how far apart their offsets are; those
// statements are reconciled by weighted least squares (the weight: how many collectives back each),
// then re-weighted Huber-style so a pair whose median disagrees with the rest stops pulling. Ranks
// not tied to the reference keep their start.
solution solve(const collective_refs& ms, std::size_t n, std::size_t reference,
               std::vector<std::int64_t> start) {
  solution s;
  s.solved = tied_to(ms, n, reference);
  s.offsets = std::move(start);
  struct statement {
    std::size_t a, b;
    double diff, weight;
  };
  std::vector<statement> pairs;
  for (auto& p : pair_differences(ms, n)) {
    if (!s.solved[p.a])
      continue;
    const auto count = static_cast<double>(p.diffs.size());
    pairs.push_back({p.a, p.b, static_cast<double>(densest_half_median(p.diffs)), count});
  }
  std::vector<std::size_t> index(n, n), unknowns;
  for (std::size_t r = 0; r < n; ++r)
    if (s.solved[r] && r != reference) {
      index[r] = unknowns.size();
      unknowns.push_back(r);
    }
  if (unknowns.empty())
    return s;
  std::vector<double> x(unknowns.size(), 0.0), huber(pairs.size(), 1.0);
  for (int round = 0; round < 6; ++round) {
    std::vector<std::vector<double>> a(unknowns.size(), std::vector<double>(unknowns.size()));
    std::vector<double> b(unknowns.size(), 0.0);
    for (std::size_t p = 0; p < pairs.size(); ++p) {
      const auto& st = pairs[p];
      const double w = st.weight * huber[p];
      const auto i = index[st.a], j = index[st.b];
      // o_a - o_b = diff
      if (i < unknowns.size()) {
        a[i][i] += w;
        b[i] += w * st.diff;
      }
      if (j < unknowns.size()) {
        a[j][j] += w;
        b[j] -= w * st.diff;
      }
      if (i < unknowns.size() && j < unknowns.size()) {
        a[i][j] -= w;
        a[j][i] -= w;
      }
    }
    x = solve_linear(std::move(a), std::move(b));
    auto value = [&](std::size_t r) { return r == reference ? 0.0 : x[index[r]]; };
    std::vector<double> res;
    for (const auto& st : pairs)
      res.push_back(std::abs(value(st.a) - value(st.b) - st.diff));
    const double scale = std::max(1000.0, 1.4826 * quantile(res, 0.5)); // at least 1 us
    for (std::size_t p = 0; p < pairs.size(); ++p)
      huber[p] = res[p] <= 1.5 * scale ? 1.0 : 1.5 * scale / res[p];
  }
  for (std::size_t k = 0; k < unknowns.size(); ++k)
    s.offsets[unknowns[k]] = static_cast<std::int64_t>(std::llround(x[k]));
  s.offsets[reference] = 0;
  return s;
}

// Whether a collective overlaps well on `offsets`: the last arrival's kernel lies mostly inside
// the others' (they all end together), which a pair that merely touches on a slightly wrong
// clock does not.
bool overlaps_well(const matched_collective& c, std::span<const std::int64_t> offsets) {
  std::int64_t last_start = INT64_MIN, first_end = INT64_MAX, shortest = INT64_MAX;
  for (std::size_t i = 0; i < c.members.size(); ++i) {
    const auto* row = c.per_member[i];
    last_start = std::max(last_start, row->start + offsets[c.members[i]]);
    first_end = std::min(first_end, row->end + offsets[c.members[i]]);
    shortest = std::min(shortest, row->end - row->start);
  }
  return 2 * (first_end - last_start) >= shortest;
}

collective_refs well_overlapping(const collective_matches& m,
                                 std::span<const std::int64_t> offsets) {
  collective_refs out;
  for (const auto& c : m.matched)
    if (overlaps_well(c, offsets))
      out.push_back(&c);
  return out;
}

std::size_t kernels_in(const collective_matches& m, std::span<const std::int64_t> offsets) {
  std::size_t n = 0;
  for (const auto& c : m.matched)
    n += overlaps_well(c, offsets) ? c.members.size() : 0;
  return n;
}

// Solves from one start, re-pairing on each solution until the pairs stop changing.
solution refine(const collective_kernels& kernels, std::span<const rank_trace> ranks,
                std::size_t reference, const std::vector<std::int64_t>& base,
                const std::vector<matched_collective>& first) {
  auto s = solve(refs_of(first), ranks.size(), reference, base);
  if (first.empty()) // nothing paired from this start (a clock off by more than the kernels)
    return s;
  s.matches = pair_collectives(kernels, ranks, s.offsets, true, false);
  s.paired_kernels = kernels_in(s.matches, s.offsets);
  for (int round = 0; round < 4; ++round) {
    auto next = solve(well_overlapping(s.matches, s.offsets), ranks.size(), reference, s.offsets);
    if (next.offsets == s.offsets)
      break;
    next.matches = pair_collectives(kernels, ranks, next.offsets, true, false);
    next.paired_kernels = kernels_in(next.matches, next.offsets);
    if (next.paired_kernels < s.paired_kernels)
      break;
    s = std::move(next);
  }
  return s;
}

// Residuals of the solution on its own pairs, per rank (us).
void add_residuals(const solution& s, job_clocks& clocks) {
  std::vector<std::vector<double>> res(clocks.ranks.size());
  std::vector<std::pair<std::int64_t, std::size_t>> scratch;
  std::vector<std::int64_t> sorted, votes;
  for (const auto* m : well_overlapping(s.matches, s.offsets)) {
    votes_of(*m, s.offsets, scratch, sorted, votes);
    for (std::size_t i = 0; i < m->members.size(); ++i)
      res[m->members[i]].push_back(
          std::abs(to_us(votes[i] - s.offsets[m->members[i]]))); // what it asks minus what it has
  }
  for (std::size_t r = 0; r < res.size(); ++r) {
    auto& c = clocks.ranks[r];
    c.collectives = res[r].size();
    if (res[r].empty() || !s.solved[r])
      continue;
    c.collective_offset_ns = s.offsets[r];
    c.max_abs_residual_us = *std::max_element(res[r].begin(), res[r].end());
    c.median_abs_residual_us = quantile(res[r], 0.5);
    c.disagreement_us = std::abs(to_us(s.offsets[r] - c.base_time_offset_ns));
  }
}

void warn_on_disagreement(job_clocks& clocks, std::size_t reference) {
  const auto& ref = clocks.ranks[reference];
  std::size_t count = 0;
  const rank_clock* worst = nullptr;
  double bound = 0;
  for (const auto& c : clocks.ranks) {
    if (!c.collective_offset_ns || &c == &ref)
      continue;
    // Both offsets are against the reference: its residual counts as much as the rank's.
    const double residual = std::max({c.max_abs_residual_us, ref.max_abs_residual_us, 1.0});
    if (c.disagreement_us <= residual)
      continue;
    ++count;
    if (!worst || c.disagreement_us > worst->disagreement_us) {
      worst = &c;
      bound = residual;
    }
  }
  if (!worst)
    return;
  const bool used = clocks.used == clock_alignment::collectives;
  diagnostic d;
  d.code = std::string(codes::clocks_disagree);
  d.level = severity::warning;
  d.title = "rank clocks disagree";
  d.message = fmt::format(
      "Kineto's base time and the collectives disagree on the clocks of {} rank(s), by up to "
      "{:.1f} us (rank {}, whose collectives agree within {:.1f} us): the analyses use {}",
      count, worst->disagreement_us, worst->rank, bound,
      used ? "the collectives" : "the base time (--align base-time)");
  d.add_field("ranks", static_cast<std::int64_t>(count));
  d.add_field("rank", static_cast<std::int64_t>(worst->rank));
  d.add_field("disagreement_us", worst->disagreement_us);
  d.add_field("residual_us", bound);
  d.hint = used ? "the hosts' clocks differ; the collectives' offsets are in clocks.ranks"
                : "use --align auto (the default) to put the ranks on the collectives' clock";
  clocks.warnings.push_back(std::move(d));
}

} // namespace

aligned_job align_clocks(std::span<const rank_trace> ranks, const collective_kernels& kernels,
                         clock_alignment align) {
  aligned_job out;
  const auto n = ranks.size();
  // The lowest rank (members come sorted by rank) that shares a collective with another.
  const auto unchecked =
      pair_collectives(kernels, ranks, std::vector<std::int64_t>(n), false, false);
  std::size_t reference = n;
  for (const auto& m : unchecked.matched)
    reference = std::min(reference, *std::min_element(m.members.begin(), m.members.end()));
  if (reference == n)
    reference = 0;
  std::vector<std::int64_t> base(n);
  for (std::size_t r = 0; r < n; ++r) {
    out.offsets.push_back(ranks[r].clock_offset_ns);
    base[r] = n ? ranks[r].clock_offset_ns - ranks[reference].clock_offset_ns : 0;
  }
  auto& clocks = out.clocks;
  clocks.requested = align;
  clocks.used = clock_alignment::base_time;
  clocks.reference_rank = n ? ranks[reference].rank : 0;
  for (std::size_t r = 0; r < n; ++r)
    clocks.ranks.push_back({ranks[r].rank, out.offsets[r], base[r], std::nullopt, 0, 0, 0, 0});
  if (n < 2) {
    out.matches = pair_collectives(kernels, ranks, out.offsets, true);
    return out;
  }
  auto by_base = refine(kernels, ranks, reference, base,
                        pair_collectives(kernels, ranks, base, true, false).matched);
  auto in_order = refine(kernels, ranks, reference, base, unchecked.matched);
  auto& best = in_order.paired_kernels > by_base.paired_kernels ? in_order : by_base;
  add_residuals(best, clocks);
  bool any = false;
  for (std::size_t r = 0; r < n; ++r)
    any = any || (r != reference && clocks.ranks[r].collective_offset_ns);
  if (align != clock_alignment::base_time && any) {
    clocks.used = clock_alignment::collectives;
    for (std::size_t r = 0; r < n; ++r) {
      auto& c = clocks.ranks[r];
      out.offsets[r] = c.offset_ns = c.collective_offset_ns.value_or(base[r]);
    }
  }
  out.matches = pair_collectives(kernels, ranks, out.offsets, true); // with the unmatched
  warn_on_disagreement(clocks, reference);
  return out;
}

} // namespace detail
} // namespace tdiag::trace
