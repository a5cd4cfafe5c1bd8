// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reductions (_math_ops.py common_reduction_strategy): a reduced dim's Shard becomes a Partial
// of the op's kind, for free, when the reduction is linear in the input's placements; otherwise
// every Partial and every Shard of a reduced dim is replicated first.
#include <fmt/format.h>

#include <algorithm>

#include "builtin_rules.hpp"

namespace tdiag::dtensor::detail {
namespace {

enum class reduction_shape : std::uint8_t { all_dims, dim_list, single_dim };

struct reduction_op {
  std::string_view name;
  reduce_op kind;
  reduction_shape dims;
  bool needs_even_shards; ///< mean: an uneven shard would weight ranks wrongly
  bool with_indices;      ///< max.dim: (values, indices)
};

constexpr reduction_op reduction_ops[] = {
    {"aten.sum.default", reduce_op::sum, reduction_shape::all_dims, false, false},
    {"aten.sum.dim_IntList", reduce_op::sum, reduction_shape::dim_list, false, false},
    {"aten.mean.dim", reduce_op::avg, reduction_shape::dim_list, true, false},
    {"aten.amax.default", reduce_op::max, reduction_shape::dim_list, false, false},
    {"aten.max.dim", reduce_op::max, reduction_shape::single_dim, false, true},
};

rule_result reduction_rule(const rule_context& ctx, const reduction_op& op) {
  const auto& in = ctx.tensor_arg(0);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  std::vector<bool> reduced(in.ndim(), false);
  bool keepdim = false;
  if (op.dims == reduction_shape::all_dims) {
    std::fill(reduced.begin(), reduced.end(), true);
  } else if (op.dims == reduction_shape::single_dim) {
    const auto d = ctx.wrap_dim(ctx.int_arg(1), nd, 1);
    if (nd > 0)
      reduced[static_cast<std::size_t>(d)] = true;
    keepdim = ctx.bool_arg_or(2, false);
  } else {
    const auto dims = ctx.has_arg(1) ? ctx.ints_arg(1) : std::vector<std::int64_t>{};
    if (dims.empty())
      std::fill(reduced.begin(), reduced.end(), true);
    for (auto d : dims) {
      const auto w = ctx.wrap_dim(d, nd, 1);
      if (nd > 0)
        reduced[static_cast<std::size_t>(w)] = true;
    }
    keepdim = ctx.bool_arg_or(2, false);
  }
  const auto& mesh = ctx.mesh();
  const auto& ps = in.placements;

  // Linear only when every Partial is of the op's own kind and (mean) reduced shards are even.
  bool linear = true;
  for (std::size_t m = 0; m < ps.size(); ++m) {
    if (ps[m].is_partial() && ps[m].op != op.kind)
      linear = false;
    if (op.needs_even_shards && ps[m].is_shard() && reduced[static_cast<std::size_t>(ps[m].dim)]) {
      std::int64_t shards = 1;
      for (std::size_t k = 0; k < ps.size(); ++k) {
        if (ps[k].is_shard(ps[m].dim))
          shards *= mesh.size(k);
      }
      if (in.shape()[static_cast<std::size_t>(ps[m].dim)] % shards != 0)
        linear = false;
    }
  }
  placement_list target = ps;
  rule_result r;
  if (op.with_indices) {
    // As recorded from PyTorch 2.11: every Partial is reduced first; a sharded reduced dim is
    // handled inside the op by gathering values and indices (two all-gathers per mesh dim).
    for (std::size_t m = 0; m < ps.size(); ++m) {
      if (ps[m].is_partial())
        target[m] = placement::replicate();
      if (ps[m].is_shard() && reduced[static_cast<std::size_t>(ps[m].dim)] && mesh.size(m) > 1) {
        r.op_collectives.push_back(
            {m, collective::all_gather, 2, "max.dim gathers the local maxima and their indices"});
      }
    }
  } else if (!linear) {
    for (auto& p : target) {
      if (p.is_partial() || (p.is_shard() && reduced[static_cast<std::size_t>(p.dim)]))
        p = placement::replicate();
    }
  }
  // Output placements: a reduced dim's Shard becomes P(kind); others are renumbered.
  placement_list out;
  for (std::size_t m = 0; m < ps.size(); ++m) {
    const auto& p = op.with_indices ? ps[m] : target[m];
    if (p.is_shard()) {
      const auto d = static_cast<std::size_t>(p.dim);
      if (reduced[d]) {
        out.push_back(linear ? placement::partial(op.kind) : placement::replicate());
      } else {
        std::int32_t removed = 0;
        for (std::size_t k = 0; k < d && !keepdim; ++k)
          removed += reduced[k] ? 1 : 0;
        out.push_back(placement::shard(p.dim - removed));
      }
    } else if (p.is_partial()) {
      out.push_back(linear ? p : placement::replicate());
    } else {
      out.push_back(p);
    }
  }
  shape_t shape;
  for (std::size_t d = 0; d < in.ndim(); ++d) {
    if (!reduced[d])
      shape.push_back(in.shape()[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  const tensor_meta meta{shape, contiguous_strides(shape), in.meta.type};
  r.outputs.push_back(meta);
  candidate_strategy s;
  s.outputs.push_back(out);
  if (op.with_indices) {
    r.outputs.push_back(tensor_meta{shape, contiguous_strides(shape), dtype::int64});
    s.outputs.push_back(out);
  }
  s.inputs.push_back(std::move(target));
  r.candidates.push_back(std::move(s));
  return r;
}

} // namespace

void add_reduction_rules(op_registry& registry) {
  for (const auto& op : reduction_ops) {
    std::vector<std::string> names{"self"};
    if (op.dims != reduction_shape::all_dims) {
      names.emplace_back("dim");
      names.emplace_back("keepdim");
    }
    registry.add(op_rule{std::string(op.name), "reduction", std::move(names), false,
                         [op](const rule_context& ctx) { return reduction_rule(ctx, op); }});
  }
}

} // namespace tdiag::dtensor::detail
