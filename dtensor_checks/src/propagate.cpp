// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/propagate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace tdiag::dtensor {
namespace {

std::string torch_list(const placement_list& ps) {
  std::string out = "[";
  for (std::size_t i = 0; i < ps.size(); ++i) {
    if (i)
      out += ", ";
    out += to_torch_string(ps[i]);
  }
  return out + "]";
}

std::string strip_inplace(std::string s) {
  if (!s.empty() && s.back() == '_')
    s.pop_back();
  return s;
}

[[noreturn]] void unknown_op(const op_call& call, const op_registry& registry) {
  const auto near = registry.nearest(call.op, 3);
  std::vector<std::string> specs;
  for (const auto& a : call.args)
    specs.push_back(to_string(a));
  auto d = make_diagnostic(
      codes::no_rule, call.op, error_class::unknown_op, "no sharding rule for this op",
      fmt::format("no sharding rule for {} (called with {} on mesh {}); this is a missing rule, "
                  "not an invalid "
                  "placement. Nearest known ops: {}",
                  call.op, fmt::join(specs, ", "), call.mesh.to_string(), fmt::join(near, ", ")),
      "run the op on x.full_tensor() or on inputs redistributed to Replicate, or register a rule "
      "for it with "
      "op_registry::add()");
  d.add_field("nearest", field_value::list(near.begin(), near.end()));
  throw sharding_error(error_class::unknown_op, std::move(d));
}

// Why an in-place op cannot keep self's placement on one mesh dim.
std::string inplace_reason(const rule_context& ctx, const placement& from, const placement& to) {
  const auto op = strip_inplace(ctx.short_op());
  if (from.is_partial() && to.is_replicate()) {
    return fmt::format("{} does not commute with a pending {} reduction (applying it to each "
                       "rank's partial value and "
                       "reducing afterwards gives a different result), so the result must be "
                       "Replicate there, which "
                       "needs an all-reduce of self",
                       op, to_string(from.op));
  }
  if (from.is_shard() && to.is_replicate()) {
    return fmt::format(
        "{} needs the whole of tensor dim {} on every rank, so the result must be Replicate there",
        op, from.dim);
  }
  return fmt::format("the rule of {} produces {} there", op, to_string(to));
}

[[noreturn]] void inplace_error(const rule_context& ctx, const placement_list& result) {
  const auto& self = ctx.input(0);
  const auto op = ctx.short_op();
  std::vector<std::string> lines;
  std::int64_t first_dim = -1;
  for (std::size_t m = 0; m < result.size(); ++m) {
    if (result[m] == self.placements[m])
      continue;
    if (first_dim < 0)
      first_dim = static_cast<std::int64_t>(m);
    lines.push_back(fmt::format("{} holds {} but the result would be {}: {}",
                                ctx.mesh().dim_label(m), to_string(self.placements[m]),
                                to_string(result[m]),
                                inplace_reason(ctx, self.placements[m], result[m])));
  }
  auto message =
      fmt::format("{} {} on mesh {}: an in-place op must keep self's placements, and {}: {}", op,
                  ctx.describe_input(0), ctx.mesh().to_string(),
                  lines.size() == 1 ? "one mesh dim would change" : "these mesh dims would change",
                  fmt::join(lines, "; "));
  auto hint = fmt::format(
      "use the out-of-place op (y = torch.{}(...), placements {}), or redistribute self first: "
      "x = x.redistribute(mesh, {}) and then call {}",
      strip_inplace(op.substr(op.rfind('.') + 1)), to_string(result), torch_list(result),
      op.substr(op.rfind('.') + 1));
  auto d = make_diagnostic(codes::inplace_placement, ctx.call().op, error_class::user_error,
                           "in-place op would change self's placement", std::move(message),
                           std::move(hint));
  d.add_field("arg_index", std::int64_t{0});
  d.add_field("arg", ctx.arg_name(0));
  d.add_field("mesh_dim", first_dim);
  d.add_field("placements", to_string(self.placements));
  d.add_field("required", to_string(result));
  d.add_field("shape", to_string(self.shape()));
  ctx.fail(error_class::user_error, std::move(d));
}

// The input (other than `k`) whose current placement on `m` is `p`, to say what forced it.
std::ptrdiff_t source_of(const rule_context& ctx, std::size_t k, std::size_t m,
                         const placement& p) {
  for (std::size_t j = 0; j < ctx.inputs().size(); ++j) {
    if (j != k && ctx.input(j).placements[m] == p)
      return static_cast<std::ptrdiff_t>(j);
  }
  return -1;
}

[[noreturn]] void plan_error(const rule_context& ctx, std::size_t k,
                             const redistribution_plan& plan, const redistribute_step& step) {
  const auto& in = ctx.input(k);
  const auto m = step.mesh_dim;
  const auto src = source_of(ctx, k, m, step.to);
  const auto forced =
      src >= 0 ? fmt::format(" to match {}", ctx.describe_input(static_cast<std::size_t>(src)))
               : std::string();
  const bool s2p = step.problem == step_problem::shard_to_partial;
  // Replicate on every mesh dim that must become a Partial it is not: R→P is a local partition.
  auto relaxed = in.placements;
  for (std::size_t d = 0; d < relaxed.size(); ++d) {
    if (plan.target[d].is_partial() && relaxed[d] != plan.target[d])
      relaxed[d] = placement::replicate();
  }
  const auto name = ctx.arg_name(ctx.inputs()[k].arg_index);
  const auto ident = ctx.inputs()[k].in_list ? std::string("t") : name;
  const auto out_of_place =
      ctx.rule().inplace
          ? fmt::format("; or use the out-of-place {} (it follows the more sharded operand)",
                        strip_inplace(ctx.short_op()))
          : std::string();
  std::string why;
  std::string hint;
  std::string title;
  if (s2p) {
    title = "a shard cannot become a pending reduction";
    why = fmt::format("a shard holds distinct slices of tensor dim {}, not partial values of the "
                      "whole tensor, and "
                      "PyTorch does not plan {}→R→{} (all-gather, then local partition) by itself",
                      step.from.dim, to_string(step.from), to_string(step.to));
    hint = fmt::format("replicate it first, after which the partition is local: {} = "
                       "{}.redistribute(mesh, {}){}{}",
                       ident, ident, torch_list(relaxed),
                       src >= 0 ? fmt::format("; or reduce arg {} to Replicate on {} first",
                                              ctx.inputs()[static_cast<std::size_t>(src)].arg_index,
                                              ctx.mesh().dim_label(m))
                                : std::string(),
                       out_of_place);
  } else {
    title = "two different pending reductions cannot be combined";
    why = fmt::format(
        "a pending {} and a pending {} combine into neither without reducing one of them first",
        to_string(step.from.op), to_string(step.to.op));
    hint = fmt::format("reduce one operand first: {} = {}.redistribute(mesh, {}){}", ident, ident,
                       torch_list(relaxed), out_of_place);
  }
  auto message =
      fmt::format("{} {}: must become {} on {}{}; {}. Planned move: {} → {}", ctx.short_op(),
                  ctx.describe_input(k), to_string(step.to), ctx.mesh().dim_label(m), forced, why,
                  to_string(plan.current), to_string(plan.target));
  auto d = make_diagnostic(s2p ? codes::shard_to_partial : codes::partial_kinds, ctx.call().op,
                           error_class::limitation, std::move(title), std::move(message),
                           std::move(hint));
  d.add_field("arg_index", static_cast<std::int64_t>(ctx.inputs()[k].arg_index));
  d.add_field("arg", ctx.arg_name(ctx.inputs()[k].arg_index));
  d.add_field("mesh_dim", static_cast<std::int64_t>(m));
  d.add_field("placements", to_string(in.placements));
  d.add_field("required", to_string(plan.target));
  d.add_field("shape", to_string(in.shape()));
  ctx.fail(error_class::limitation, std::move(d));
}

void validate_inputs(const op_call& call, const std::vector<tensor_input>& inputs,
                     const op_rule& rule) {
  for (const auto& in : inputs) {
    try {
      const auto name = in.arg_index < rule.arg_names.size() ? rule.arg_names[in.arg_index]
                                                             : fmt::format("arg{}", in.arg_index);
      validate_spec(*in.spec, call.mesh,
                    fmt::format("{} arg {} ({})", call.op, in.arg_index, name));
    } catch (const input_error& e) {
      auto d = e.report().diagnostics.front();
      d.add_field("op", call.op);
      d.add_field("class", std::string(to_string(error_class::user_error)));
      throw sharding_error(error_class::user_error, std::move(d));
    }
  }
}

// A rule takes the tensors its schema names; a tensor passed where the rule reads none (an extra
// positional argument, a tensor in a slot the rule ignores) leaves its strategies short of inputs.
void check_inputs_taken(const rule_context& ctx,
                        const std::vector<candidate_strategy>& candidates) {
  std::size_t taken = ctx.inputs().size();
  for (const auto& c : candidates)
    taken = std::min(taken, c.inputs.size());
  if (taken == ctx.inputs().size())
    return;
  ctx.fail_argument(ctx.inputs()[taken].arg_index,
                    fmt::format("is a tensor the op does not take; it reads {} tensor input{}, "
                                "the call passes {}",
                                taken, taken == 1 ? "" : "s", ctx.inputs().size()));
}

} // namespace

propagation_result propagate(const op_call& call, const op_registry& registry) {
  const op_rule* rule = registry.find(call.op);
  if (rule == nullptr)
    unknown_op(call, registry);
  const auto inputs = tensor_inputs(call);
  validate_inputs(call, inputs, *rule);
  const rule_context ctx(call, *rule, inputs);
  auto ruled = rule->propagate(ctx);
  check_inputs_taken(ctx, ruled.candidates);

  propagation_result result;
  result.rule = rule;
  if (ruled.candidates.empty()) {
    std::vector<std::string> specs;
    for (std::size_t k = 0; k < inputs.size(); ++k)
      specs.push_back(ctx.describe_input(k));
    ctx.fail(error_class::limitation, codes::no_strategy, "no valid sharding strategy",
             fmt::format("{}: no candidate strategy fits {} on mesh {} (every candidate shards a "
                         "dim smaller than "
                         "its mesh dims or mixes Partial kinds)",
                         ctx.short_op(), fmt::join(specs, ", "), call.mesh.to_string()),
             "redistribute the inputs to Replicate on the mesh dims that cannot be sharded");
  }
  const auto topo = mesh_topology::build(call.mesh);
  std::vector<const placement_list*> current;
  current.reserve(inputs.size());
  for (const auto& in : inputs)
    current.push_back(&in.spec->placements);
  result.candidates.reserve(ruled.candidates.size());
  for (auto& c : ruled.candidates) {
    scored_candidate s;
    s.costs.reserve(inputs.size());
    for (std::size_t k = 0; k < inputs.size() && k < c.inputs.size(); ++k) {
      const double cost = redistribute_cost(call.mesh, inputs[k].spec->meta,
                                            inputs[k].spec->placements, c.inputs[k], topo);
      s.costs.push_back(cost);
      s.total += cost;
    }
    s.strategy = std::move(c);
    result.candidates.push_back(std::move(s));
  }
  const auto picked = select_strategy(result.candidates, current);
  result.chosen = picked.index;
  result.reason = picked.reason;
  const auto& chosen = result.candidates[result.chosen].strategy;

  for (std::size_t k = 0; k < ruled.outputs.size(); ++k) {
    const auto& ps = chosen.outputs.size() == 1 ? chosen.outputs[0] : chosen.outputs.at(k);
    result.outputs.push_back(tensor_spec{ruled.outputs[k], ps});
  }
  if (rule->inplace && !inputs.empty() && !chosen.outputs.empty() &&
      chosen.outputs[0] != inputs[0].spec->placements) {
    inplace_error(ctx, chosen.outputs[0]);
  }
  result.plans.reserve(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const plan_options options =
        k < ruled.input_plan_options.size() ? ruled.input_plan_options[k] : plan_options{};
    auto plan = plan_redistribution(call.mesh, inputs[k].spec->meta, inputs[k].spec->placements,
                                    chosen.inputs.at(k), topo, options);
    if (const auto* bad = plan.first_problem())
      plan_error(ctx, k, plan, *bad);
    const auto counts = plan.counts();
    for (std::size_t c = 0; c < counts.by_kind.size(); ++c)
      result.comms.by_kind[c] += counts.by_kind[c];
    result.plans.push_back(std::move(plan));
  }
  for (const auto& c : ruled.op_collectives)
    result.comms.add(c.comm, c.count);
  result.op_collectives = std::move(ruled.op_collectives);
  return result;
}

} // namespace tdiag::dtensor
