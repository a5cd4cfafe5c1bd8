// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Pointwise ops, PyTorch 2.11's linearity path (_pointwise_ops.py): the output follows one
// operand (self for in-place ops, else the one with the most shards, then the most dims, then
// the first), and a Partial survives only where the op commutes with its reduction.
#include <fmt/format.h>

#include "builtin_rules.hpp"

namespace tdiag::dtensor::detail {
namespace {

/// How an op treats a Partial of the followed operand.
enum class linearity : std::uint8_t {
  none,           ///< non-linear (relu, exp): every Partial is reduced
  unary,          ///< neg: P(sum), P(avg) survive
  additive,       ///< add, sub: P(sum), P(avg) survive and every operand takes them
  multiplicative, ///< mul, div: the followed operand's P(sum), P(avg) survive; others replicate
  preserve_max,   ///< maximum: P(max) survives and every operand takes it
  preserve_all,   ///< copy_: self's Partial survives whatever its kind
};

struct pointwise_op {
  std::string_view name;
  linearity kind;
  bool inplace;
  bool scalar_blocks_partial; ///< add/sub with a Python scalar: the scalar would count n times
};

constexpr pointwise_op pointwise_ops[] = {
    {"aten.add.Tensor", linearity::additive, false, true},
    {"aten.sub.Tensor", linearity::additive, false, true},
    {"aten.add_.Tensor", linearity::additive, true, true},
    {"aten.mul.Tensor", linearity::multiplicative, false, false},
    {"aten.div.Tensor", linearity::multiplicative, false, false},
    {"aten.mul_.Tensor", linearity::multiplicative, true, false},
    {"aten.maximum.default", linearity::preserve_max, false, false},
    {"aten.neg.default", linearity::unary, false, false},
    {"aten.relu.default", linearity::none, false, false},
    {"aten.relu_.default", linearity::none, true, false},
    {"aten.exp.default", linearity::none, false, false},
    {"aten.tanh.default", linearity::none, false, false},
    {"aten.gelu.default", linearity::none, false, false},
    {"aten.copy_.default", linearity::preserve_all, true, false},
};

// For each dim of `common`, the dim of `shape` it maps to right-aligned with equal size, or -1.
std::vector<std::int64_t> broadcast_dims_map(const shape_t& common, const shape_t& shape) {
  std::vector<std::int64_t> map(common.size(), -1);
  const auto c = static_cast<std::int64_t>(common.size());
  const auto n = static_cast<std::int64_t>(shape.size());
  for (std::int64_t i = 1; i <= n && i <= c; ++i) {
    if (shape[static_cast<std::size_t>(n - i)] == common[static_cast<std::size_t>(c - i)]) {
      map[static_cast<std::size_t>(c - i)] = n - i;
    }
  }
  return map;
}

bool partial_survives(linearity kind, const placement& p, bool scalar_blocks) {
  switch (kind) {
  case linearity::preserve_all:
    return true;
  case linearity::preserve_max:
    return p.op == reduce_op::max;
  case linearity::none:
    return false;
  case linearity::unary:
  case linearity::multiplicative:
    return p.op == reduce_op::sum || p.op == reduce_op::avg;
  case linearity::additive:
    return !scalar_blocks && (p.op == reduce_op::sum || p.op == reduce_op::avg);
  }
  return false;
}

[[noreturn]] void broadcast_error(const rule_context& ctx, std::size_t a, std::size_t b,
                                  std::int64_t bad_dim) {
  const auto& sa = ctx.input(a).shape();
  const auto& sb = ctx.input(b).shape();
  const auto at = [](const shape_t& s, std::int64_t neg) {
    const auto i = static_cast<std::int64_t>(s.size()) + neg;
    return i >= 0 ? s[static_cast<std::size_t>(i)] : std::int64_t{1};
  };
  auto d = make_diagnostic(
      codes::shape_mismatch, ctx.call().op, error_class::user_error,
      "operand shapes do not broadcast",
      fmt::format("{}: {} and {} do not broadcast: dim {} (counted from the right) is {} in {} and "
                  "{} in {}; "
                  "sizes must be equal or 1. This is a shape error, independent of the placements.",
                  ctx.short_op(), ctx.describe_input(a), ctx.describe_input(b), bad_dim,
                  at(sa, bad_dim), ctx.arg_name(ctx.inputs()[a].arg_index), at(sb, bad_dim),
                  ctx.arg_name(ctx.inputs()[b].arg_index)),
      fmt::format("make dim {} agree: view/expand {} to size {} there, or fix the operand that has "
                  "the wrong "
                  "shape",
                  bad_dim, ctx.arg_name(ctx.inputs()[b].arg_index), at(sa, bad_dim)));
  d.add_field("arg_index", static_cast<std::int64_t>(ctx.inputs()[b].arg_index));
  d.add_field("arg", ctx.arg_name(ctx.inputs()[b].arg_index));
  d.add_field("shape", to_string(sb));
  d.add_field("expected", to_string(sa));
  ctx.fail(error_class::user_error, std::move(d));
}

rule_result pointwise_rule(const rule_context& ctx, const pointwise_op& op) {
  const auto n = ctx.inputs().size();
  if (n == 0)
    (void)ctx.tensor_arg(0);
  shape_t common = ctx.input(0).shape();
  for (std::size_t k = 1; k < n; ++k) {
    shape_t next;
    std::int64_t bad = 0;
    if (!broadcast_shapes(common, ctx.input(k).shape(), next, bad))
      broadcast_error(ctx, 0, k, bad);
    common = std::move(next);
  }
  bool scalar = false;
  for (std::size_t i = 0; i < ctx.arg_count(); ++i)
    scalar = scalar || ctx.is_scalar_arg(i);

  std::size_t followed = 0;
  if (!op.inplace) {
    std::int64_t best_shards = -1;
    std::int64_t best_ndim = -1;
    for (std::size_t k = 0; k < n; ++k) {
      const auto shards = num_shards(ctx.mesh(), ctx.input(k).placements);
      const auto nd = static_cast<std::int64_t>(ctx.input(k).ndim());
      if (shards > best_shards || (shards == best_shards && nd > best_ndim)) {
        followed = k;
        best_shards = shards;
        best_ndim = nd;
      }
    }
  }
  const auto& f = ctx.input(followed);
  const auto c = static_cast<std::int32_t>(common.size());
  candidate_strategy s;
  placement_list out;
  // A followed divisor's Partial must not survive: 1/(a+b) ≠ 1/a + 1/b. PyTorch 2.11 keeps it
  // (R / P(sum) → P(sum); golden corpus s1-00367, s1-02495) and computes wrong numbers; we reduce
  // the divisor first, as ../shared/docs/dtensor.md §4.1 and §9 say, and disagree with it there.
  const bool partial_divisor = op.name == "aten.div.Tensor" && followed != 0;
  for (const auto& p : f.placements) {
    if (p.is_shard()) {
      out.push_back(placement::shard(c - static_cast<std::int32_t>(f.ndim()) + p.dim));
    } else if (p.is_partial()) {
      const bool survives =
          !partial_divisor && partial_survives(op.kind, p, op.scalar_blocks_partial && scalar);
      out.push_back(survives ? p : placement::replicate());
    } else {
      out.push_back(p);
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const auto& in = ctx.input(k);
    bool to_replicate = op.kind == linearity::multiplicative && k != followed;
    // maximum: another Partial kind goes to R (max(a_i, b) still reduces to max(a, b)). copy_ does
    // not: src must take self's Partial (a replicated src would be added n times under P(sum)), and
    // a src Partial of another kind is all-reduced then partitioned (input_plan_options below).
    if (op.kind == linearity::preserve_max && k != followed) {
      for (std::size_t m = 0; m < out.size(); ++m) {
        if (out[m].is_partial() && in.placements[m].is_partial() && out[m] != in.placements[m])
          to_replicate = true;
      }
    }
    const auto map = broadcast_dims_map(common, in.shape());
    placement_list target;
    for (const auto& p : out) {
      if (p.is_partial()) {
        target.push_back(to_replicate ? placement::replicate() : p);
      } else if (p.is_shard()) {
        const auto j = map[static_cast<std::size_t>(p.dim)];
        target.push_back(j >= 0 ? placement::shard(static_cast<std::int32_t>(j))
                                : placement::replicate());
      } else {
        target.push_back(p);
      }
    }
    s.inputs.push_back(std::move(target));
  }
  s.outputs.push_back(std::move(out));
  rule_result r;
  r.outputs.push_back(tensor_meta{common, contiguous_strides(common), f.meta.type});
  if (op.inplace)
    r.outputs.front() = ctx.input(0).meta;
  if (op.kind == linearity::preserve_all)
    r.input_plan_options = {plan_options{}, plan_options{true}};
  r.candidates.push_back(std::move(s));
  return r;
}

rule_result clone_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  rule_result r;
  r.outputs.push_back(in.meta);
  r.candidates.push_back(candidate_strategy{{in.placements}, {in.placements}});
  return r;
}

} // namespace

bool broadcast_shapes(const shape_t& a, const shape_t& b, shape_t& out, std::int64_t& bad_dim) {
  const auto n = std::max(a.size(), b.size());
  out.assign(n, 1);
  for (std::size_t i = 1; i <= n; ++i) {
    const std::int64_t x = i <= a.size() ? a[a.size() - i] : 1;
    const std::int64_t y = i <= b.size() ? b[b.size() - i] : 1;
    if (x != y && x != 1 && y != 1) {
      bad_dim = -static_cast<std::int64_t>(i);
      return false;
    }
    out[n - i] = x == 1 ? y : x;
  }
  return true;
}

void add_pointwise_rules(op_registry& registry) {
  for (const auto& op : pointwise_ops) {
    std::vector<std::string> names{"self"};
    if (op.kind == linearity::preserve_all)
      names.emplace_back("src");
    else if (op.kind != linearity::none && op.kind != linearity::unary)
      names.emplace_back("other");
    if (op.kind == linearity::additive)
      names.emplace_back("alpha");
    registry.add(op_rule{std::string(op.name), "pointwise", std::move(names), op.inplace,
                         [op](const rule_context& ctx) { return pointwise_rule(ctx, op); }});
  }
  registry.add(
      op_rule{"aten.clone.default", "pointwise", {"self", "memory_format"}, false, clone_rule});
}

} // namespace tdiag::dtensor::detail
