// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Cutting a full tensor into per-rank pieces for given placements (torch.chunk shards, Partial
// values split into asymmetric pieces that reduce back to the full value) and putting per-rank
// pieces back together the way redistributing to Replicate would.
#pragma once

#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/placement.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>

#include <cstdint>
#include <optional>
#include <vector>

namespace tdiag::dtensor::sim {

/// Rank `rank`'s piece of `full` for `placements` with every Partial treated as Replicate (a
/// contiguous copy). Throws tdiag::input_error when the placements do not fit the mesh.
[[nodiscard]] dense_tensor local_piece(const dense_tensor& full, const placement_list& placements,
                                       const device_mesh& mesh, std::int64_t rank);

/// Every rank's piece of `full`, rank order. Shards follow torch.chunk (uneven and empty ones
/// included). A Partial(op) mesh dim splits the value into distinct pieces that reduce back to
/// it: sum — unequal shares plus noise that cancels; avg — the value plus cancelling noise; max
/// (min) — the value on one randomly chosen rank per element, smaller (larger) values elsewhere.
/// Pieces depend only on `seed`, so a run can be repeated.
[[nodiscard]] std::vector<dense_tensor> distribute(const dense_tensor& full,
                                                   const placement_list& placements,
                                                   const device_mesh& mesh, std::uint64_t seed);

/// Why per-rank pieces could not be assembled.
struct assembly_issue {
  enum class kind : std::uint8_t { none, local_shape, replica_mismatch } what = kind::none;
  std::size_t mesh_dim = 0;    ///< the mesh dim whose placement is violated
  std::int64_t rank = 0;       ///< the rank at fault
  std::int64_t other_rank = 0; ///< replica_mismatch: the rank it was compared with
  shape_t expected_shape;      ///< local_shape
  shape_t actual_shape;
  shape_t index;            ///< replica_mismatch: local index of the first differing element
  double value = 0.0;       ///< replica_mismatch: value on `rank`
  double other_value = 0.0; ///< replica_mismatch: value on `other_rank`
};

/// Rebuilds the global tensor from every rank's local piece as redistributing `placements` to
/// Replicate would: mesh dims from the last to the first, concatenating shards and reducing
/// partials, and requiring ranks that claim Replicate to agree (|a-b| <= rtol*(|b|+scale)).
/// Returns std::nullopt and fills `issue` when a local shape does not fit `global_shape` or
/// replicas disagree.
[[nodiscard]] std::optional<dense_tensor>
assemble(const std::vector<dense_tensor>& locals, const placement_list& placements,
         const device_mesh& mesh, const shape_t& global_shape, double rtol, assembly_issue& issue);

/// The elementwise reduction of `a` and `b` of a Partial (avg sums; the caller divides).
[[nodiscard]] double reduce_pair(reduce_op op, double a, double b) noexcept;

/// Concatenation of `parts` along `dim` (same dtype, other dims equal).
[[nodiscard]] dense_tensor concat(const std::vector<dense_tensor>& parts, std::int64_t dim);

} // namespace tdiag::dtensor::sim
