// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: each rules/<family>.cpp adds its ops to a registry.
#pragma once

#include <tensordiag/dtensor_checks/op_registry.hpp>

namespace tdiag::dtensor::detail {

void add_pointwise_rules(op_registry& registry);
void add_matrix_rules(op_registry& registry);
void add_reduction_rules(op_registry& registry);
void add_softmax_norm_rules(op_registry& registry);
void add_view_rules(op_registry& registry);
void add_tensor_op_rules(op_registry& registry);

/// Right-aligned broadcast of `a` and `b`; std::nullopt with the first mismatching dim (counted
/// from the right, negative) in `bad_dim` when they do not broadcast.
[[nodiscard]] bool broadcast_shapes(const shape_t& a, const shape_t& b, shape_t& out,
                                    std::int64_t& bad_dim);

} // namespace tdiag::dtensor::detail
