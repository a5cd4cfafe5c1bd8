// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: the dim maps of view-like ops (_view_ops.py): how every output dim is made from
// input dims (kept, flattened, split, new singleton, broadcast).
#pragma once

#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <cstdint>
#include <vector>

namespace tdiag::dtensor::detail {

enum class dim_kind : std::uint8_t { input_dim, flatten, split, singleton, broadcast };

/// How one output dim is made. `dims`: the input dim (input_dim, broadcast of an input dim),
/// the flattened input dims (flatten), or the split's source (one dim, several = a flatten, none
/// = a singleton). `group` and `split_id` describe a split; `size` a broadcast.
struct dim_source {
  dim_kind kind = dim_kind::singleton;
  std::vector<std::int64_t> dims;
  shape_t group;
  std::size_t split_id = 0;
  std::int64_t size = 1;
};

using dim_map = std::vector<dim_source>;

/// PyTorch's view_groups(from, to) for an already inferred `to` (same numel).
[[nodiscard]] dim_map view_groups(const shape_t& from, const shape_t& to);

} // namespace tdiag::dtensor::detail
