// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The job as analyze() sees it: every dump's op names and shapes mapped to job-wide ids (so
// ranks compare by integer), process groups matched by name across ranks with their membership,
// and per member the group's collectives in sequence order with how far each got.
#pragma once

#include <tensordiag/trace/flight_recorder.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tdiag::trace::fr::detail {

/// How far one call got on one rank, as far as its dump can tell (public: entry_progress).
using progress = entry_progress;

struct rank_data {
  const dump* source = nullptr; ///< null: no dump file
  int rank = -1;
  std::vector<std::uint32_t> op_of;     ///< dump op index -> job op id
  std::vector<std::uint32_t> shapes_of; ///< dump shapes index -> job shapes id
  std::vector<std::uint32_t> group_of;  ///< dump group index -> job group id
  bool wrapped = false;
  bool start_visible = false;
  bool completion_visible = false;
  std::int64_t last_entry = -1; ///< index of its newest entry
};

struct member_data {
  std::uint32_t rank_index = 0;       ///< into job_index::ranks
  std::vector<std::uint32_t> entries; ///< the group's collectives, by collective_seq_id
  std::int64_t lo = 0, hi = -1;       ///< oldest and newest seq in the ring
  std::int64_t completed = -1;        ///< highest seq known completed (entries, pg_status)
  std::int64_t started = -1;          ///< highest seq known started
  bool status_tracked = false;        ///< pg_status reports this group
};

struct group_data {
  std::string name;
  std::string desc;
  std::vector<int> members;              ///< global ranks, sorted
  std::vector<member_data> with_entries; ///< members whose ring holds the group, by rank
  std::vector<int> silent;               ///< members with a dump but no entry of the group
  std::vector<int> silent_wrapped;       ///< the same, whose ring wrapped (progress unknown)
  std::vector<int> without_dump; ///< members with no readable dump, an empty file or empty ring
};

struct job_index {
  std::vector<std::string> op_names;
  std::vector<std::string> op_types; ///< "all_reduce", "send", ...
  std::vector<const tensor_shapes*> shapes;
  std::vector<rank_data> ranks; ///< every rank of the job, by rank (with or without a dump)
  std::vector<group_data> groups;

  [[nodiscard]] const entry& at(const member_data& m, std::size_t i) const {
    return ranks[m.rank_index].source->entries[m.entries[i]];
  }
  [[nodiscard]] std::uint32_t op_id(const member_data& m, const entry& e) const {
    return ranks[m.rank_index].op_of[e.op];
  }
  [[nodiscard]] std::uint32_t shapes_id(const member_data& m, const entry& e) const {
    return ranks[m.rank_index].shapes_of[e.shapes];
  }
  [[nodiscard]] int rank_of(const member_data& m) const { return ranks[m.rank_index].rank; }
  [[nodiscard]] progress progress_of(const member_data& m, const entry& e) const;
};

/// How far a call got from its own state alone (point-to-point calls: pg_status tracks
/// collectives only).
[[nodiscard]] progress progress_of_state(const rank_data& rd, const entry& e) noexcept;

/// Builds the index; `world_size` > 0 adds ranks below it that have no dump.
[[nodiscard]] job_index build_index(std::span<const dump> dumps, int world_size);

/// "all_reduce" from "nccl:all_reduce", "send" from "gloo:send 0->1".
[[nodiscard]] std::string op_type(std::string_view profiling_name);

/// How `other` compares with `reference` as PyTorch's analyzer compares two entries of one
/// collective (op type, sizes, dtypes; not the state); `group_size` for the gather/scatter rules.
[[nodiscard]] match_state compare_calls(std::string_view ref_type, const tensor_shapes& ref,
                                        std::string_view other_type, const tensor_shapes& other,
                                        std::size_t group_size);

/// "nccl:all_reduce in [[4, 4]] float -> [[4, 4]] float".
[[nodiscard]] std::string describe_call(std::string_view op, const tensor_shapes& s);

/// "0, 1, 3" or "0-3, 5".
[[nodiscard]] std::string rank_list(const std::vector<int>& ranks);

} // namespace tdiag::trace::fr::detail
