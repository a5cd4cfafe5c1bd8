// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Redistribution plans: the greedy per-mesh-dim transform sequence PyTorch's _redistribute.py
// executes, each step with its collective, bytes per rank and estimated time.
#pragma once

#include <tensordiag/dtensor_checks/cost_model.hpp>
#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// The collective one step issues. `local` = no communication (chunk or partition).
enum class collective : std::uint8_t { none, all_gather, all_reduce, reduce_scatter, all_to_all };

[[nodiscard]] std::string_view to_string(collective c) noexcept;
/// The inverse of to_string(collective), also taking `none` for a local step; std::nullopt for
/// anything else.
[[nodiscard]] std::optional<collective> parse_collective(std::string_view text) noexcept;

/// What a step cannot do (PyTorch raises at redistribution time).
enum class step_problem : std::uint8_t {
  none,
  shard_to_partial,   ///< `redistribute from S(0) to P(sum) not supported yet`
  partial_to_partial, ///< `Redistribution from one partial type (P(avg)) to another (P(sum))`
};

/// One transform on one mesh dim.
struct redistribute_step {
  std::size_t mesh_dim = 0;
  placement from;
  placement to;
  collective comm = collective::none;
  /// Counted as this collective in the corpus: S(i)→S(j) is an all-to-all, but PyTorch's CPU
  /// (fake) process group runs it as all-gather + chunk, which is what the corpus records.
  collective counted = collective::none;
  std::int64_t bytes_per_rank = 0; ///< size of the larger local buffer of the step
  double time_us = 0.0;            ///< α–β estimate, 0 for local steps
  step_problem problem = step_problem::none;
};

/// Count of collectives per kind, as the corpus counts them.
struct comm_counts {
  std::array<std::int64_t, 5> by_kind{}; ///< indexed by collective
  [[nodiscard]] std::int64_t operator[](collective c) const noexcept {
    return by_kind[static_cast<std::size_t>(c)];
  }
  void add(collective c, std::int64_t n = 1) noexcept { by_kind[static_cast<std::size_t>(c)] += n; }
  [[nodiscard]] std::int64_t total() const noexcept;
  friend bool operator==(const comm_counts&, const comm_counts&) = default;
};

/// The steps that move one tensor from `current` to `target` placements.
struct redistribution_plan {
  placement_list current;
  placement_list target;
  std::vector<redistribute_step> steps;
  double time_us = 0.0;

  [[nodiscard]] bool empty() const noexcept { return steps.empty(); }
  /// The first step PyTorch would refuse, or nullptr.
  [[nodiscard]] const redistribute_step* first_problem() const noexcept;
  [[nodiscard]] comm_counts counts() const noexcept;
};

/// Options for planning.
struct plan_options {
  /// copy_ semantics: a Partial of another kind is reduced (all-reduce) and then partitioned
  /// instead of raising, which is what PyTorch 2.11 does for copy_'s `src`.
  bool reduce_mismatched_partials = false;
};

/// The collective PyTorch issues to move one mesh dim from `from` to `to`: S→R all-gather, P→R
/// all-reduce, P→S reduce-scatter, S→S all-to-all; none for a local chunk or partition and for
/// what PyTorch refuses (S→P, and P→P of another kind unless `reduce_mismatched_partials`, where
/// it all-reduces). The one mapping: plans and the Python recorder both ask it.
[[nodiscard]] collective transition_collective(const placement& from, const placement& to,
                                               const plan_options& options = {}) noexcept;

/// The greedy plan of PyTorch 2.11: a 1-D mesh takes one step; a source with shards first walks
/// the mesh dims inner→outer (a target Shard whose earlier mesh dims disagree goes to Replicate
/// first), then outer→inner for what remains.
[[nodiscard]] redistribution_plan
plan_redistribution(const device_mesh& mesh, const tensor_meta& meta, const placement_list& current,
                    const placement_list& target, const mesh_topology& topo,
                    const plan_options& options = {});

/// `S(0)→R on mesh dim 1: all_gather, 3,072 bytes per rank, 14.7 µs`.
[[nodiscard]] std::string to_string(const redistribute_step& step, const device_mesh& mesh);

} // namespace tdiag::dtensor
