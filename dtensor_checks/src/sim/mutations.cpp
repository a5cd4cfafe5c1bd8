// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/errors.hpp>
#include <tensordiag/dtensor_checks/sim/mutations.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor::sim {
namespace {

using edit = std::function<void(const rule_context&, rule_result&)>;

// For every candidate and mesh dim m where input `k` currently holds a placement matching
// `when`, call `fn(candidate, m)`.
edit per_dim(std::size_t k, std::function<bool(const placement&)> when,
             std::function<void(const rule_context&, candidate_strategy&, std::size_t)> fn) {
  return [k, when = std::move(when), fn = std::move(fn)](const rule_context& ctx, rule_result& r) {
    if (k >= ctx.inputs().size())
      return;
    const auto& cur = ctx.input(k).placements;
    for (auto& c : r.candidates) {
      for (std::size_t m = 0; m < cur.size(); ++m) {
        if (when(cur[m]))
          fn(ctx, c, m);
      }
    }
  };
}

bool is_partial(const placement& p) {
  return p.is_partial();
}
bool is_partial_sum(const placement& p) {
  return p.is_partial() && p.op == reduce_op::sum;
}
bool is_partial_max(const placement& p) {
  return p.is_partial() && p.op == reduce_op::max;
}
bool is_shard(const placement& p) {
  return p.is_shard();
}

// Keeps input k's current placement on m and claims it for every output.
void keep_current(const rule_context& ctx, candidate_strategy& c, std::size_t m, std::size_t k) {
  const auto p = ctx.input(k).placements[m];
  c.inputs[k][m] = p;
  for (auto& o : c.outputs)
    o[m] = p;
}

// Elementwise ops: linearity in each operand.
void pointwise_mutations(std::vector<rule_mutation>& out) {
  out.push_back(
      {"add-partial-plus-replicate", "aten.add.Tensor",
       "P(sum) + R → P(sum) without partitioning the replicated operand (it is counted n times)",
       per_dim(
           1, [](const placement& p) { return p.is_replicate(); },
           [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
             if (ctx.input(0).placements[m] == placement::partial(reduce_op::sum) &&
                 c.outputs[0][m].is_partial()) {
               c.inputs[1][m] = placement::replicate();
             }
           })});
  out.push_back(
      {"exp-keeps-partial", "aten.exp.default", "exp keeps a pending reduction (exp is not linear)",
       per_dim(0, is_partial, [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
         keep_current(ctx, c, m, 0);
       })});
  out.push_back({"mul-partial-times-partial", "aten.mul.Tensor",
                 "P(sum) · P(sum) → P(sum) (a product of sums is not "
                 "the sum of products)",
                 per_dim(0, is_partial_sum,
                         [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
                           if (ctx.inputs().size() < 2 ||
                               ctx.input(1).placements[m] != placement::partial(reduce_op::sum))
                             return;
                           c.inputs[0][m] = c.inputs[1][m] = c.outputs[0][m] =
                               placement::partial(reduce_op::sum);
                         })});
  out.push_back({"neg-keeps-partial-max", "aten.neg.default",
                 "neg keeps P(max) (negation turns a max into a min)",
                 per_dim(0, is_partial_max,
                         [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
                           keep_current(ctx, c, m, 0);
                         })});
  out.push_back({"relu-keeps-partial-sum", "aten.relu.default",
                 "relu keeps P(sum) (relu is not additive)",
                 per_dim(0, is_partial_sum,
                         [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
                           keep_current(ctx, c, m, 0);
                         })});
  out.push_back({"div-by-partial", "aten.div.Tensor",
                 "R / P(sum) → P(sum) (division is not linear in the divisor)",
                 per_dim(1, is_partial_sum,
                         [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
                           if (!ctx.input(0).placements[m].is_replicate())
                             return;
                           c.inputs[0][m] = placement::replicate();
                           c.inputs[1][m] = c.outputs[0][m] = placement::partial(reduce_op::sum);
                         })});
}

// Reductions and normalisations: the reduced or normalised dims.
void reduction_mutations(std::vector<rule_mutation>& out) {
  out.push_back({"softmax-shards-its-dim", "aten._softmax.default",
                 "softmax keeps a shard of the dim it normalises over",
                 [](const rule_context& ctx, rule_result& r) {
                   const auto dim = ctx.wrap_dim(ctx.int_arg(1),
                                                 static_cast<std::int64_t>(ctx.input(0).ndim()), 1);
                   const auto& cur = ctx.input(0).placements;
                   for (auto& c : r.candidates) {
                     for (std::size_t m = 0; m < cur.size(); ++m) {
                       if (cur[m].is_shard(static_cast<std::int32_t>(dim)))
                         keep_current(ctx, c, m, 0);
                     }
                   }
                 }});
  out.push_back({"sum-dim-claims-replicate", "aten.sum.dim_IntList",
                 "a sum over a sharded dim claims Replicate instead of P(sum)",
                 [](const rule_context&, rule_result& r) {
                   for (auto& c : r.candidates) {
                     for (auto& o : c.outputs) {
                       for (auto& p : o) {
                         if (p.is_partial())
                           p = placement::replicate();
                       }
                     }
                   }
                 }});
  out.push_back({"mean-uneven-partial-avg", "aten.mean.dim",
                 "mean over an unevenly sharded dim claims P(avg) (PyTorch bug #162692)",
                 [](const rule_context& ctx, rule_result& r) {
                   const auto& in = ctx.input(0);
                   for (auto& c : r.candidates) {
                     for (std::size_t m = 0; m < in.placements.size(); ++m) {
                       const auto& p = in.placements[m];
                       if (!p.is_shard())
                         continue;
                       for (auto d : ctx.ints_arg(1)) {
                         if (ctx.wrap_dim(d, static_cast<std::int64_t>(in.ndim()), 1) != p.dim)
                           continue;
                         c.inputs[0][m] = p;
                         c.outputs[0][m] = placement::partial(reduce_op::avg);
                       }
                     }
                   }
                 }});
  out.push_back({"amax-keeps-partial-sum", "aten.amax.default",
                 "amax keeps P(sum) (a max of sums is not a sum of maxes)",
                 per_dim(0, is_partial_sum,
                         [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
                           keep_current(ctx, c, m, 0);
                         })});
  out.push_back({"layer-norm-shards-normalized-dim", "aten.native_layer_norm.default",
                 "layer norm keeps a shard of a normalised dim",
                 [](const rule_context& ctx, rule_result& r) {
                   const auto& in = ctx.input(0);
                   const auto axis = in.ndim() - ctx.ints_arg(1).size();
                   for (auto& c : r.candidates) {
                     for (std::size_t m = 0; m < in.placements.size(); ++m) {
                       const auto& p = in.placements[m];
                       if (p.is_shard() && static_cast<std::size_t>(p.dim) >= axis) {
                         c.inputs[0][m] = p;
                         for (auto& o : c.outputs)
                           o[m] = p;
                       }
                     }
                   }
                 }});
}

// Matrix products, lookups and views: contraction dims and moved dims.
void matrix_and_view_mutations(std::vector<rule_mutation>& out) {
  out.push_back({"mm-contraction-claims-replicate", "aten.mm.default",
                 "mm over a sharded contracting dim claims Replicate instead of P(sum)",
                 [](const rule_context&, rule_result& r) {
                   for (auto& c : r.candidates) {
                     for (auto& p : c.outputs[0]) {
                       if (p == placement::partial(reduce_op::sum))
                         p = placement::replicate();
                     }
                   }
                 }});
  out.push_back({"addmm-bias-not-partitioned", "aten.addmm.default",
                 "addmm with a P(sum) product keeps a Replicate bias (it is added on every rank)",
                 [](const rule_context&, rule_result& r) {
                   for (auto& c : r.candidates) {
                     for (std::size_t m = 0; m < c.outputs[0].size(); ++m) {
                       if (c.outputs[0][m] == placement::partial(reduce_op::sum))
                         c.inputs[0][m] = placement::replicate();
                     }
                   }
                 }});
  out.push_back({"embedding-row-shard-claims-replicate", "aten.embedding.default",
                 "embedding over a row-sharded table claims Replicate instead of a masked P(sum)",
                 per_dim(
                     0, [](const placement& p) { return p.is_shard(0); },
                     [](const rule_context&, candidate_strategy& c, std::size_t m) {
                       c.inputs[0][m] = placement::shard(0);
                       if (c.inputs.size() > 1)
                         c.inputs[1][m] = placement::replicate();
                       for (auto& o : c.outputs)
                         o[m] = placement::replicate();
                     })});
  out.push_back(
      {"transpose-keeps-shard-dim", "aten.transpose.int",
       "transpose does not renumber a sharded dim",
       per_dim(0, is_shard, [](const rule_context& ctx, candidate_strategy& c, std::size_t m) {
         keep_current(ctx, c, m, 0);
       })});
  out.push_back(
      {"cat-keeps-cat-dim-shard", "aten.cat.default", "cat keeps shards of the concatenation dim",
       [](const rule_context& ctx, rule_result& r) {
         const auto& first = ctx.input(0);
         const auto dim =
             ctx.wrap_dim(ctx.int_arg_or(1, 0), static_cast<std::int64_t>(first.ndim()), 1);
         for (auto& c : r.candidates) {
           for (std::size_t m = 0; m < first.placements.size(); ++m) {
             if (!first.placements[m].is_shard(static_cast<std::int32_t>(dim)))
               continue;
             for (auto& in : c.inputs)
               in[m] = first.placements[m];
             for (auto& o : c.outputs)
               o[m] = first.placements[m];
           }
         }
       }});
}

std::vector<rule_mutation> make_mutations() {
  std::vector<rule_mutation> out;
  pointwise_mutations(out);
  reduction_mutations(out);
  matrix_and_view_mutations(out);
  return out;
}

} // namespace

const std::vector<rule_mutation>& builtin_mutations() {
  static const std::vector<rule_mutation> mutations = make_mutations();
  return mutations;
}

op_registry mutated_registry(const op_registry& base, const rule_mutation& m) {
  const auto* rule = base.find(m.op);
  if (rule == nullptr) {
    tdiag::throw_input_error(
        codes::no_rule, "no sharding rule for this op",
        fmt::format("cannot mutate {}: the registry has no rule for it", m.op));
  }
  op_registry out = base;
  op_rule wrapped = *rule;
  wrapped.propagate = [inner = rule->propagate, mutate = m.mutate](const rule_context& ctx) {
    auto r = inner(ctx);
    mutate(ctx, r);
    return r;
  };
  out.add(std::move(wrapped));
  return out;
}

} // namespace tdiag::dtensor::sim
