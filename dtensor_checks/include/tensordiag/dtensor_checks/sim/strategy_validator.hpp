// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Numerical validation of one sharding strategy on a simulated mesh: random full inputs (never
// zero), cut per rank in the strategy's input placements, the op run on every rank's local
// pieces, the outputs assembled from the claimed output placements and compared with a float64
// reference on the full tensors.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/dtensor_checks/sharding_rule.hpp>
#include <tensordiag/dtensor_checks/sim/reference_ops.hpp>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace tdiag::dtensor::sim {

// The model's to_string overloads stay visible next to this namespace's own.
using dtensor::to_string;

/// What a rule claims for one call: the global output metas, the placements of inputs and
/// outputs, and the collectives the op runs itself (an all_gather there means the op sees that
/// mesh dim's shards gathered, as max.dim does).
struct strategy_claim {
  std::vector<tensor_meta> outputs;
  candidate_strategy strategy;
  std::vector<op_collective> op_collectives;
};

struct validation_options {
  std::uint64_t seed = 0x7464696167ULL;
  double rtol_float32 =
      1e-4; ///< relative tolerance for float32 outputs (atol = rtol * max|reference|)
  double rtol_float64 = 1e-9; ///< for float64 outputs; int64 outputs must match exactly
  /// On a multi-dim mesh, re-run each mesh dim's part of the strategy alone on a 1-D mesh to say
  /// which mesh dim's placement is wrong.
  bool attribute_mesh_dims = true;
};

enum class validation_status : std::uint8_t {
  passed,
  failed,         ///< the claim is wrong: `failure` says where
  not_applicable, ///< the reference rejects the call itself (shapes); nothing to validate
};

struct validation_result {
  validation_status status = validation_status::passed;
  std::optional<diagnostic> failure;         ///< for failed and not_applicable
  std::vector<std::size_t> broken_mesh_dims; ///< failed: the mesh dims that fail on their own
  [[nodiscard]] bool passed() const noexcept { return status == validation_status::passed; }
};

/// Validates `claim` for `call` (the call's tensor specs give global shapes and dtypes; their
/// placements are ignored). A failure is a diagnostic (TDIAG-DT-102..105) naming the output,
/// the element index, the expected and actual values, the rank holding it with its local index,
/// and the mesh dims whose placements break. Never throws for a wrong claim; throws
/// tdiag::input_error only when the claim does not fit the call (counts, placements vs mesh).
[[nodiscard]] validation_result validate_strategy(const op_call& call, const strategy_claim& claim,
                                                  const reference_op& reference,
                                                  const validation_options& options = {});

/// `(S(0), R), (R, R) → (P(sum), R)`: input placements, then output placements.
[[nodiscard]] std::string to_string(const candidate_strategy& s);

/// Random full tensors for `call`'s args (uniform magnitude in [0.5, 2] with a random sign, so
/// never zero; int64 values in [1, 9]), adjusted by the reference's prepare hook.
[[nodiscard]] sim_args make_inputs(const op_call& call, const reference_op& reference,
                                   std::mt19937_64& rng);

} // namespace tdiag::dtensor::sim
