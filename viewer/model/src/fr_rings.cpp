// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/fr_rings.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>

namespace tdiag::view {

namespace fr = trace::fr;

std::string_view to_string(fr_row_status s) noexcept {
  switch (s) {
  case fr_row_status::ok:
    return "ring";
  case fr_row_status::no_dump:
    return "no dump";
  case fr_row_status::empty_file:
    return "empty dump file";
  case fr_row_status::empty_ring:
    return "empty ring";
  case fr_row_status::unreadable:
    return "unreadable dump";
  }
  return "ring";
}

namespace {

// load_dumps() gives the dumps in rank order: a binary search there, a scan for any other order.
const fr::dump* dump_of(std::span<const fr::dump> dumps, bool by_rank, int rank) {
  if (by_rank) {
    const auto it = std::lower_bound(dumps.begin(), dumps.end(), rank,
                                     [](const fr::dump& d, int r) { return d.rank < r; });
    return it != dumps.end() && it->rank == rank ? &*it : nullptr;
  }
  for (const auto& d : dumps)
    if (d.rank == rank)
      return &d;
  return nullptr;
}

fr_row_status status_of(const fr::rank_report& r) {
  if (!r.present)
    return fr_row_status::no_dump;
  switch (r.status) {
  case fr::dump_status::empty_file:
    return fr_row_status::empty_file;
  case fr::dump_status::empty_ring:
    return fr_row_status::empty_ring;
  case fr::dump_status::unreadable:
    return fr_row_status::unreadable;
  case fr::dump_status::ok:
    break;
  }
  return r.entries == 0 ? fr_row_status::empty_ring : fr_row_status::ok;
}

// Names kept once: a job's rings hold millions of entries and a few ops and groups.
class interner {
public:
  explicit interner(std::vector<std::string>& names) : names_(names) {}
  std::uint32_t operator()(const std::string& name) {
    const auto [it, added] = ids_.try_emplace(name, static_cast<std::uint32_t>(names_.size()));
    if (added)
      names_.push_back(name);
    return it->second;
  }
  [[nodiscard]] std::optional<std::uint32_t> find(const std::string& name) const {
    const auto it = ids_.find(name);
    return it == ids_.end() ? std::nullopt : std::optional(it->second);
  }

private:
  std::vector<std::string>& names_;
  std::unordered_map<std::string, std::uint32_t> ids_;
};

void fill_cells(const fr::dump& d, std::span<const fr::entry_progress> progress, fr_row& row,
                interner& ops, interner& groups) {
  std::vector<std::uint32_t> op_ids, group_ids;
  for (const auto& op : d.ops)
    op_ids.push_back(ops(op));
  for (const auto& g : d.groups)
    group_ids.push_back(groups(g.name));
  row.cells.reserve(d.entries.size());
  for (std::size_t i = 0; i < d.entries.size(); ++i) {
    const auto& e = d.entries[i];
    fr_cell c;
    c.progress = i < progress.size() ? progress[i] : fr::entry_progress::unknown;
    c.record_id = e.record_id;
    c.seq = e.is_p2p ? e.p2p_seq_id : e.collective_seq_id;
    c.op = e.op < op_ids.size() ? op_ids[e.op] : ops("");
    c.group = e.group < group_ids.size() ? group_ids[e.group] : groups("");
    c.state = e.state;
    c.p2p = e.is_p2p;
    row.cells.push_back(c);
  }
  std::stable_sort(row.cells.begin(), row.cells.end(),
                   [](const fr_cell& a, const fr_cell& b) { return a.record_id < b.record_id; });
}

// The culprit's own entry: the newest cell of its seq and op, in its group where it has one.
void mark_culprit(const fr::culprit& c, std::size_t index, const interner& ops,
                  const interner& groups, fr_row& row) {
  const auto op = ops.find(c.own_op);
  if (c.own_seq < 0 || !op)
    return;
  const auto pg = groups.find(c.pg);
  fr_cell* found = nullptr;
  for (auto& cell : row.cells)
    if (cell.seq == c.own_seq && cell.op == *op &&
        (found == nullptr || cell.group == pg || found->group != pg))
      found = &cell;
  if (found != nullptr)
    found->culprit = index;
}

// A collective's divergence is marked on every rank that issued that seq; a point-to-point
// call's only on the rank whose call has no match (p2p seqs are each rank's own).
void mark_divergence(const fr::mismatch& m, std::size_t index, const interner& groups,
                     fr_row& row) {
  const auto pg = groups.find(m.pg);
  bool marked = false;
  for (auto& cell : row.cells)
    if (cell.group == pg && cell.seq == m.seq && cell.p2p == m.p2p &&
        (!m.p2p || row.rank == m.p2p_rank)) {
      cell.divergence = index;
      marked = true;
    }
  if (std::find(m.ranks.begin(), m.ranks.end(), row.rank) == m.ranks.end())
    return;
  row.divergent_in.push_back(index);
  if (!marked)
    row.missing.push_back({index, m.pg, m.seq});
}

std::string label_of(const fr_row& row, const fr::job_report& report) {
  std::string out = fmt::format("rank {}", row.rank);
  if (row.status != fr_row_status::ok)
    out += fmt::format(" · {}", to_string(row.status));
  else if (row.wrapped)
    out += " · wrapped";
  for (const auto i : row.culprits)
    out += fmt::format(" · culprit: {}", fr::to_string(report.culprits[i].cause));
  return out;
}

} // namespace

fr_rings build_fr_rings(std::span<const fr::dump> dumps, const fr::job_report& report) {
  fr_rings out;
  out.stuck = report.stuck;
  out.findings = report.findings();
  interner ops(out.ops);
  interner groups(out.groups);
  const bool by_rank = std::is_sorted(dumps.begin(), dumps.end(),
                                      [](const auto& a, const auto& b) { return a.rank < b.rank; });
  for (const auto& r : report.ranks) {
    fr_row row;
    row.rank = r.rank;
    row.source = r.source;
    row.status = status_of(r);
    row.wrapped = r.wrapped;
    if (const auto* d = r.present ? dump_of(dumps, by_rank, r.rank) : nullptr; d != nullptr)
      fill_cells(*d, r.progress, row, ops, groups);
    out.rows.push_back(std::move(row));
  }
  std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
  std::int64_t highest = -1;
  for (const auto& row : out.rows)
    if (!row.cells.empty()) {
      lowest = std::min(lowest, row.cells.front().record_id);
      highest = std::max(highest, row.cells.back().record_id);
    }
  for (auto& row : out.rows)
    for (auto& cell : row.cells)
      cell.column = cell.record_id - lowest;
  out.columns = highest < 0 ? 0 : highest - lowest + 1;
  for (std::size_t i = 0; i < report.culprits.size(); ++i)
    for (auto& row : out.rows)
      if (row.rank == report.culprits[i].rank) {
        row.culprits.push_back(i);
        mark_culprit(report.culprits[i], i, ops, groups, row);
      }
  for (const auto& g : report.groups) {
    if (g.first_divergence && *g.first_divergence < report.mismatches.size())
      for (auto& row : out.rows)
        mark_divergence(report.mismatches[*g.first_divergence], *g.first_divergence, groups, row);
    out.verdicts.push_back(g.desc.empty() || g.desc == g.name
                               ? fmt::format("group {}: {}", g.name, g.verdict)
                               : fmt::format("group {} ({}): {}", g.name, g.desc, g.verdict));
  }
  for (auto& row : out.rows)
    row.label = label_of(row, report);
  return out;
}

} // namespace tdiag::view
