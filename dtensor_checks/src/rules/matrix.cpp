// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Matrix ops through an einsum-style strategy generator (_einsum_strategy.py, _matrix_ops.py):
// per mesh dim, [R|R,R], batch [S(b)|S(b),S(b)], contracting [P(sum)|S(k),S(k)], lhs-only
// [S(m)|S(m),R], rhs-only [S(n)|R,S(n)], and the Partial pass-through [P(x)|P(x),R],
// [P(x)|R,P(x)] for x in sum, avg; expanded over the mesh and cost-selected.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "builtin_rules.hpp"

namespace tdiag::dtensor::detail {
namespace {

struct einsum_equation {
  std::string lhs;
  std::string rhs;
  std::string out;
};

std::int32_t index_of(const std::string& s, char c) {
  return static_cast<std::int32_t>(s.find(c));
}

/// The rules for one mesh dim, [out, lhs, rhs] each.
std::vector<mesh_dim_rule> einsum_mesh_dim_rules(const einsum_equation& eq) {
  std::set<char> letters(eq.lhs.begin(), eq.lhs.end());
  letters.insert(eq.rhs.begin(), eq.rhs.end());
  std::vector<char> batch, contracting, lhs_only, rhs_only;
  for (char c : letters) {
    const bool in_out = eq.out.find(c) != std::string::npos;
    const bool in_l = eq.lhs.find(c) != std::string::npos;
    const bool in_r = eq.rhs.find(c) != std::string::npos;
    if (!in_out)
      contracting.push_back(c);
    else if (in_l && in_r)
      batch.push_back(c);
    else if (in_l)
      lhs_only.push_back(c);
    else
      rhs_only.push_back(c);
  }
  const auto R = placement::replicate();
  std::vector<mesh_dim_rule> rules{{R, R, R}};
  for (char c : batch) {
    rules.push_back({placement::shard(index_of(eq.out, c)), placement::shard(index_of(eq.lhs, c)),
                     placement::shard(index_of(eq.rhs, c))});
  }
  for (char c : contracting) {
    rules.push_back({placement::partial(), placement::shard(index_of(eq.lhs, c)),
                     placement::shard(index_of(eq.rhs, c))});
  }
  // PyTorch indexes the input shard by the output dim here; for mm/bmm they coincide.
  for (char c : lhs_only)
    rules.push_back(
        {placement::shard(index_of(eq.out, c)), placement::shard(index_of(eq.out, c)), R});
  for (char c : rhs_only)
    rules.push_back(
        {placement::shard(index_of(eq.out, c)), R, placement::shard(index_of(eq.out, c))});
  for (auto op : {reduce_op::sum, reduce_op::avg}) {
    const auto P = placement::partial(op);
    rules.push_back({P, P, R});
    rules.push_back({P, R, P});
  }
  return rules;
}

[[noreturn]] void contraction_error(const rule_context& ctx, std::size_t a, std::size_t b,
                                    std::size_t da, std::size_t db, std::string_view what) {
  const auto& sa = ctx.input(a).shape();
  const auto& sb = ctx.input(b).shape();
  auto d = make_diagnostic(
      codes::contraction_mismatch, ctx.call().op, error_class::user_error,
      fmt::format("{} sizes differ", what),
      fmt::format("{}: {} and {} cannot be multiplied: the {} dim is {} (dim {} of {}) against {} "
                  "(dim {} of {}). "
                  "This is a shape error, independent of the placements.",
                  ctx.short_op(), ctx.describe_input(a), ctx.describe_input(b), what, sa[da], da,
                  ctx.arg_name(ctx.inputs()[a].arg_index), sb[db], db,
                  ctx.arg_name(ctx.inputs()[b].arg_index)),
      fmt::format(
          "make {} dim {} equal {} dim {} (transpose one operand with .t() or fix its shape)",
          ctx.arg_name(ctx.inputs()[a].arg_index), da, ctx.arg_name(ctx.inputs()[b].arg_index),
          db));
  d.add_field("arg_index", static_cast<std::int64_t>(ctx.inputs()[b].arg_index));
  d.add_field("arg", ctx.arg_name(ctx.inputs()[b].arg_index));
  d.add_field("shape", to_string(sb));
  d.add_field("expected", to_string(sa));
  ctx.fail(error_class::user_error, std::move(d));
}

void require_ndim(const rule_context& ctx, std::size_t input, std::size_t ndim) {
  if (ctx.input(input).ndim() == ndim)
    return;
  const auto arg = ctx.inputs()[input].arg_index;
  auto d = make_diagnostic(codes::bad_arguments, ctx.call().op, error_class::user_error,
                           "wrong number of dims",
                           fmt::format("{}: {} must be {}-D, got {}-D", ctx.short_op(),
                                       ctx.describe_input(input), ndim, ctx.input(input).ndim()),
                           fmt::format("pass a {}-D tensor as {}", ndim, ctx.arg_name(arg)));
  d.add_field("arg_index", static_cast<std::int64_t>(arg));
  d.add_field("arg", ctx.arg_name(arg));
  ctx.fail(error_class::user_error, std::move(d));
}

// mm / bmm on inputs (lhs, rhs) at flattened positions first, first+1.
rule_result mm_like(const rule_context& ctx, const einsum_equation& eq, std::size_t first) {
  const auto nd = eq.lhs.size();
  require_ndim(ctx, first, nd);
  require_ndim(ctx, first + 1, nd);
  const auto& a = ctx.input(first).shape();
  const auto& b = ctx.input(first + 1).shape();
  if (nd == 3 && a[0] != b[0])
    contraction_error(ctx, first, first + 1, 0, 0, "batch");
  if (a[nd - 1] != b[nd - 2])
    contraction_error(ctx, first, first + 1, nd - 1, nd - 2, "contraction");
  shape_t out = a;
  out[nd - 1] = b[nd - 1];
  rule_result r;
  r.outputs.push_back(tensor_meta{out, contiguous_strides(out), ctx.input(first).meta.type});
  // Expansion filters on the two matrix inputs only (PyTorch checks mat1/mat2 shardability).
  r.candidates = expand_mesh_dim_rules(ctx.mesh(), einsum_mesh_dim_rules(eq), 1, {a, b});
  return r;
}

rule_result mm_rule(const rule_context& ctx) {
  (void)ctx.tensor_arg(0);
  (void)ctx.tensor_arg(1);
  return mm_like(ctx, {"mk", "kn", "mn"}, 0);
}

rule_result bmm_rule(const rule_context& ctx) {
  (void)ctx.tensor_arg(0);
  (void)ctx.tensor_arg(1);
  return mm_like(ctx, {"bmk", "bkn", "bmn"}, 0);
}

rule_result addmm_rule(const rule_context& ctx) {
  const auto& bias = ctx.tensor_arg(0);
  (void)ctx.tensor_arg(1);
  (void)ctx.tensor_arg(2);
  auto r = mm_like(ctx, {"mk", "kn", "mn"}, 1);
  const auto& out = r.outputs.front().shape;
  shape_t common;
  std::int64_t bad = 0;
  if (!broadcast_shapes(out, bias.shape(), common, bad) || common != out) {
    auto d = make_diagnostic(
        codes::shape_mismatch, ctx.call().op, error_class::user_error,
        "bias does not broadcast to the product",
        fmt::format("{}: {} does not broadcast to the product's shape {} (dim {} from the right)",
                    ctx.short_op(), ctx.describe_input(0), to_string(out), bad),
        fmt::format("give self a shape that broadcasts to {}, e.g. [{}]", to_string(out),
                    out.back()));
    d.add_field("arg_index", std::int64_t{0});
    d.add_field("arg", "self");
    ctx.fail(error_class::user_error, std::move(d));
  }
  // The bias follows the product's placements through broadcasting: Partial stays Partial, a
  // Shard maps right-aligned to an equal-size bias dim, else Replicate.
  const auto c = static_cast<std::int64_t>(out.size());
  const auto n = static_cast<std::int64_t>(bias.ndim());
  for (auto& cand : r.candidates) {
    placement_list target;
    for (const auto& p : cand.outputs[0]) {
      if (p.is_shard()) {
        const auto j = n - c + p.dim;
        const bool maps = j >= 0 && bias.shape()[static_cast<std::size_t>(j)] ==
                                        out[static_cast<std::size_t>(p.dim)];
        target.push_back(maps ? placement::shard(static_cast<std::int32_t>(j))
                              : placement::replicate());
      } else {
        target.push_back(p);
      }
    }
    cand.inputs.insert(cand.inputs.begin(), std::move(target));
  }
  return r;
}

} // namespace

void add_matrix_rules(op_registry& registry) {
  registry.add(op_rule{"aten.mm.default", "matrix", {"self", "mat2"}, false, mm_rule});
  registry.add(op_rule{"aten.bmm.default", "matrix", {"self", "mat2"}, false, bmm_rule});
  registry.add(op_rule{"aten.addmm.default",
                       "matrix",
                       {"self", "mat1", "mat2", "beta", "alpha"},
                       false,
                       addmm_rule});
}

} // namespace tdiag::dtensor::detail
