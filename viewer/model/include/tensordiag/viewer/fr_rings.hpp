// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Flight Recorder view's model: one row per rank of trace::fr::analyze()'s verdict, each
// rank's ring in sequence order as cells placed by record id (ranks that recorded alike line
// up), the culprits' own entries and each group's first divergence marked, and the ranks
// without a dump (or with an empty one) shown as such. It shapes what the verdict says for
// drawing (view_fr.cpp); it judges nothing itself.
#pragma once

#include <tensordiag/trace/flight_recorder.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tdiag::view {

/// One ring entry as a cell of its rank's row.
struct fr_cell {
  std::int64_t column = 0; ///< record id minus the job's lowest: where the cell is drawn
  std::int64_t record_id = 0;
  std::int64_t seq = -1;   ///< collective_seq_id, or p2p_seq_id for a p2p entry
  std::uint32_t op = 0;    ///< its profiling name ("nccl:all_reduce"): index into fr_rings::ops
  std::uint32_t group = 0; ///< its process group's name: index into fr_rings::groups
  trace::fr::entry_state state = trace::fr::entry_state::scheduled; ///< as the dump states it
  /// How far it got as analyze() reads it (rank_report::progress): what the cell's colour shows.
  trace::fr::entry_progress progress = trace::fr::entry_progress::unknown;
  bool p2p = false;
  /// The entry a culprit's verdict rests on (culprit::own_seq in its group): index into
  /// job_report::culprits.
  std::optional<std::size_t> culprit;
  /// The (group, seq) of a group's first divergence: index into job_report::mismatches.
  std::optional<std::size_t> divergence;
};

enum class fr_row_status : std::uint8_t {
  ok,         ///< a dump with a ring
  no_dump,    ///< a member of some group that wrote no dump
  empty_file, ///< a dump file of zero bytes
  empty_ring, ///< a dump without entries
  unreadable, ///< a dump file cut short or corrupt
};

/// "ring", "no dump", "empty dump file", "empty ring", "unreadable dump".
[[nodiscard]] std::string_view to_string(fr_row_status s) noexcept;

/// A first divergence this rank takes part in without an entry to mark (it never issued the
/// collective): drawn after the row's last cell.
struct fr_missing_mark {
  std::size_t mismatch = 0; ///< index into job_report::mismatches
  std::string group;
  std::int64_t seq = -1;
};

struct fr_row {
  int rank = -1;
  std::string source; ///< the dump file; empty without one
  fr_row_status status = fr_row_status::ok;
  bool wrapped = false;
  std::vector<fr_cell> cells;            ///< in sequence (record id) order
  std::vector<std::size_t> culprits;     ///< indices into job_report::culprits naming this rank
  std::vector<fr_missing_mark> missing;  ///< divergences it is missing from
  std::vector<std::size_t> divergent_in; ///< mismatches (first divergences) naming this rank
  std::string label;                     ///< "rank 3 · no dump · culprit: no_dump"
};

struct fr_rings {
  std::vector<fr_row> rows;          ///< by rank
  std::int64_t columns = 0;          ///< one past the highest column of any cell
  std::vector<std::string> ops;      ///< every op name once (cells index it)
  std::vector<std::string> groups;   ///< every group name once (cells index it)
  std::vector<std::string> verdicts; ///< per group: "group NAME: verdict"
  bool stuck = false;
  bool findings = false;
};

/// A cell's op and group names.
[[nodiscard]] inline const std::string& op_of(const fr_rings& r, const fr_cell& c) {
  return r.ops[c.op];
}
[[nodiscard]] inline const std::string& group_of(const fr_rings& r, const fr_cell& c) {
  return r.groups[c.group];
}

/// Shapes `report` (analyze() of `dumps`) into rows. Ranks come from report.ranks, and a cell's
/// progress from its rank's rank_report::progress; its marks from report.culprits and from each
/// group's first_divergence.
[[nodiscard]] fr_rings build_fr_rings(std::span<const trace::fr::dump> dumps,
                                      const trace::fr::job_report& report);

} // namespace tdiag::view
