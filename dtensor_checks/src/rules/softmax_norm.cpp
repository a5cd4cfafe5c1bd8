// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Softmax, log-softmax and layer norm (_math_ops.py): the normalised dims and every Partial are
// replicated; other shards stay; every output takes the input's target placements.
#include <fmt/format.h>

#include "builtin_rules.hpp"

namespace tdiag::dtensor::detail {
namespace {

rule_result softmax_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto dim = ctx.wrap_dim(ctx.int_arg(1), static_cast<std::int64_t>(in.ndim()), 1);
  placement_list target = in.placements;
  for (auto& p : target) {
    if (p.is_partial() || p.is_shard(static_cast<std::int32_t>(dim)))
      p = placement::replicate();
  }
  rule_result r;
  r.outputs.push_back(in.meta);
  r.candidates.push_back(candidate_strategy{{target}, {target}});
  return r;
}

rule_result layer_norm_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto normalized = ctx.ints_arg(1);
  const auto nd = in.ndim();
  if (normalized.size() > nd) {
    ctx.fail(error_class::user_error, codes::bad_arguments,
             "normalized_shape longer than the input",
             fmt::format("{}: normalized_shape {} has more dims than {}", ctx.short_op(),
                         fmt::format("[{}]", fmt::join(normalized, ", ")), ctx.describe_input(0)),
             "pass the trailing dims of the input as normalized_shape");
  }
  const auto axis = nd - normalized.size();
  for (std::size_t i = 0; i < normalized.size(); ++i) {
    if (normalized[i] != in.shape()[axis + i]) {
      ctx.fail(
          error_class::user_error, codes::shape_mismatch,
          "normalized_shape does not match the input",
          fmt::format(
              "{}: normalized_shape [{}] must equal the trailing dims of {} (dim {} is {}, not {})",
              ctx.short_op(), fmt::join(normalized, ", "), ctx.describe_input(0), axis + i,
              in.shape()[axis + i], normalized[i]),
          fmt::format("pass normalized_shape = {} or reshape the input",
                      to_string(shape_t(in.shape().begin() + static_cast<std::ptrdiff_t>(axis),
                                        in.shape().end()))));
    }
  }
  placement_list target = in.placements;
  for (auto& p : target) {
    if (p.is_partial() || (p.is_shard() && static_cast<std::size_t>(p.dim) >= axis))
      p = placement::replicate();
  }
  rule_result r;
  shape_t stat = in.shape();
  for (std::size_t d = axis; d < nd; ++d)
    stat[d] = 1;
  r.outputs.push_back(in.meta);
  r.outputs.push_back(tensor_meta{stat, contiguous_strides(stat), in.meta.type});
  r.outputs.push_back(tensor_meta{stat, contiguous_strides(stat), in.meta.type});
  candidate_strategy s;
  s.outputs.assign(3, target);
  s.inputs.push_back(target);
  // weight and bias (when given) are replicated.
  for (std::size_t k = 1; k < ctx.inputs().size(); ++k) {
    s.inputs.push_back(placement_list(ctx.mesh_ndim(), placement::replicate()));
  }
  r.candidates.push_back(std::move(s));
  return r;
}

} // namespace

void add_softmax_norm_rules(op_registry& registry) {
  for (const char* name : {"aten._softmax.default", "aten._log_softmax.default"}) {
    registry.add(
        op_rule{name, "softmax_norm", {"self", "dim", "half_to_float"}, false, softmax_rule});
  }
  registry.add(op_rule{"aten.native_layer_norm.default",
                       "softmax_norm",
                       {"input", "normalized_shape", "weight", "bias", "eps"},
                       false,
                       layer_norm_rule});
}

} // namespace tdiag::dtensor::detail
