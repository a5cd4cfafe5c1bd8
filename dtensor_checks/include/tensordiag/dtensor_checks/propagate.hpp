// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Sharding propagation of one call, as PyTorch 2.11's dispatcher does it: shape inference and
// candidates from the op's rule, α–β costs, strategy selection, the in-place check, and the
// redistribution plan of every input.
#pragma once

#include <tensordiag/dtensor_checks/op_registry.hpp>

#include <vector>

namespace tdiag::dtensor {

struct propagation_result {
  const op_rule* rule = nullptr;
  std::vector<tensor_spec> outputs;         ///< global meta + placements of every output
  std::vector<scored_candidate> candidates; ///< every candidate with its costs
  std::size_t chosen = 0;                   ///< index into candidates
  selection_reason reason = selection_reason::only_candidate; ///< why it was chosen
  std::vector<redistribution_plan> plans;                     ///< one per flattened tensor input
  std::vector<op_collective> op_collectives; ///< collectives of the op's own implementation
  comm_counts comms;                         ///< collectives over all plans and the op itself
};

/// Propagates `call`. Throws sharding_error (error_class user_error, limitation or unknown_op)
/// with a TDIAG-DT diagnostic when PyTorch would reject the call or tensordiag cannot model it.
[[nodiscard]] propagation_result propagate(const op_call& call,
                                           const op_registry& registry = op_registry::builtin());

} // namespace tdiag::dtensor
