// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Tensor and indexing ops (_tensor_ops.py, _embedding_ops.py): cat, split and embedding.
#include <tensordiag/core/file_io.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "builtin_rules.hpp"

namespace tdiag::dtensor::detail {
namespace {

placement_list replicate_dim(placement_list ps, std::int64_t dim) {
  for (auto& p : ps) {
    if (p.is_shard(static_cast<std::int32_t>(dim)))
      p = placement::replicate();
  }
  return ps;
}

bool legacy_empty(const tensor_spec& t) {
  return t.ndim() == 1 && t.shape()[0] == 0;
}

rule_result cat_rule(const rule_context& ctx) {
  const auto& ts = ctx.tensors_arg(0);
  const tensor_spec* first = nullptr;
  for (const auto& t : ts) {
    if (!legacy_empty(t)) {
      first = &t;
      break;
    }
  }
  if (first == nullptr)
    first = &ts.front();
  const auto nd = static_cast<std::int64_t>(first->ndim());
  const auto dim = ctx.wrap_dim(ctx.int_arg_or(1, 0), nd, 1);
  shape_t out = first->shape();
  if (nd > 0)
    out[static_cast<std::size_t>(dim)] = 0;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    const auto& t = ts[k];
    if (legacy_empty(t))
      continue;
    bool same = t.ndim() == first->ndim();
    for (std::size_t d = 0; same && d < t.ndim(); ++d) {
      if (static_cast<std::int64_t>(d) != dim && t.shape()[d] != first->shape()[d])
        same = false;
    }
    if (!same) {
      auto d = make_diagnostic(
          codes::shape_mismatch, ctx.call().op, error_class::user_error,
          "cat operands differ outside the cat dim",
          fmt::format("{}: {} does not match {} outside dim {}: every operand must have the same "
                      "size in every "
                      "other dim",
                      ctx.short_op(), ctx.describe_input(k), to_string(*first), dim),
          "fix the operand's shape, or concatenate along the dim where the sizes differ");
      d.add_field("arg_index", std::int64_t{0});
      d.add_field("arg", fmt::format("tensors[{}]", k));
      d.add_field("shape", to_string(t.shape()));
      ctx.fail(error_class::user_error, std::move(d));
    }
    if (nd > 0)
      out[static_cast<std::size_t>(dim)] += t.shape()[static_cast<std::size_t>(dim)];
  }
  rule_result r;
  r.outputs.push_back(tensor_meta{out, contiguous_strides(out), first->meta.type});
  // Every operand proposes its placements with the cat dim replicated; all take one proposal.
  for (const auto& t : ts) {
    if (legacy_empty(t))
      continue;
    auto proposal = replicate_dim(t.placements, dim);
    const bool dup =
        std::any_of(r.candidates.begin(), r.candidates.end(),
                    [&](const candidate_strategy& c) { return c.outputs[0] == proposal; });
    if (dup)
      continue;
    candidate_strategy c;
    c.outputs.push_back(proposal);
    c.inputs.assign(ts.size(), proposal);
    r.candidates.push_back(std::move(c));
  }
  return r;
}

rule_result split_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto split = ctx.int_arg(1);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  const auto dim = ctx.wrap_dim(ctx.int_arg_or(2, 0), nd, 2);
  if (split <= 0) {
    ctx.fail(error_class::user_error, codes::bad_arguments, "split size must be positive",
             fmt::format("{}: split_size {} for {}", ctx.short_op(), split, ctx.describe_input(0)),
             "pass a split_size of at least 1");
  }
  const auto size = nd > 0 ? in.shape()[static_cast<std::size_t>(dim)] : 1;
  // size / split rounded up, without size + split - 1 overflowing.
  const auto pieces = std::max<std::int64_t>(1, size / split + (size % split != 0 ? 1 : 0));
  // Each piece is an output shape and placement list: f32[2^40] in size-1 pieces would need
  // terabytes. Refused against the memory budget before anything is allocated.
  const std::uint64_t per_piece = sizeof(tensor_meta) + 2 * sizeof(std::int64_t) * in.ndim() +
                                  sizeof(placement) * (in.placements.size() + 1);
  if (static_cast<std::uint64_t>(pieces) > memory_budget() / per_piece) {
    ctx.fail(error_class::limitation, codes::bad_arguments, "too many split pieces",
             fmt::format("{}: split_size {} cuts {} into {} pieces, {} bytes to describe; the "
                         "memory budget is {} bytes (TDIAG_MEMORY_LIMIT)",
                         ctx.short_op(), split, ctx.describe_input(0), pieces,
                         static_cast<std::uint64_t>(pieces) * per_piece, memory_budget()),
             "use a larger split_size");
  }
  const auto target = replicate_dim(in.placements, dim);
  rule_result r;
  r.outputs.reserve(static_cast<std::size_t>(pieces));
  candidate_strategy c;
  for (std::int64_t i = 0; i < pieces; ++i) {
    shape_t s = in.shape();
    if (nd > 0)
      s[static_cast<std::size_t>(dim)] = std::min(split, size - i * split);
    r.outputs.push_back(tensor_meta{s, contiguous_strides(s), in.meta.type});
    c.outputs.push_back(target);
  }
  c.inputs.push_back(target);
  r.candidates.push_back(std::move(c));
  return r;
}

rule_result embedding_rule(const rule_context& ctx) {
  const auto& weight = ctx.tensor_arg(0);
  const auto& indices = ctx.tensor_arg(1);
  if (weight.ndim() != 2) {
    ctx.fail(error_class::user_error, codes::bad_arguments, "embedding weight must be 2-D",
             fmt::format("{}: {} must be [num_embeddings, embedding_dim]", ctx.short_op(),
                         ctx.describe_input(0)),
             "pass a 2-D weight");
  }
  const auto R = placement::replicate();
  const auto mask = placement::partial(reduce_op::sum, true);
  const auto out_dim = static_cast<std::int32_t>(indices.ndim());
  std::vector<mesh_dim_rule> rules{
      {R, R, R},
      {placement::shard(out_dim), placement::shard(1), R},
      {mask, placement::shard(0), mask},
  };
  for (std::int32_t d = 0; d < out_dim; ++d)
    rules.push_back({placement::shard(d), R, placement::shard(d)});
  shape_t out = indices.shape();
  out.push_back(weight.shape()[1]);
  rule_result r;
  r.outputs.push_back(tensor_meta{out, contiguous_strides(out), weight.meta.type});
  r.candidates = expand_mesh_dim_rules(ctx.mesh(), rules, 1, {weight.shape(), indices.shape()});
  return r;
}

} // namespace

void add_tensor_op_rules(op_registry& registry) {
  registry.add(op_rule{"aten.cat.default", "tensor", {"tensors", "dim"}, false, cat_rule});
  registry.add(
      op_rule{"aten.split.Tensor", "tensor", {"self", "split_size", "dim"}, false, split_rule});
  registry.add(op_rule{"aten.embedding.default",
                       "tensor",
                       {"weight", "indices", "padding_idx", "scale_grad_by_freq", "sparse"},
                       false,
                       embedding_rule});
}

} // namespace tdiag::dtensor::detail
