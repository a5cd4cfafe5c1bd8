// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/errors.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_grid.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <random>
#include <set>

namespace tdiag::dtensor::sim {
namespace {

// Placements one tensor may hold on one mesh dim. Integer tensors (indices) are never Partial.
std::vector<placement> options_for(const tensor_spec& spec) {
  std::vector<placement> out{placement::replicate()};
  for (std::size_t d = 0; d < spec.ndim(); ++d)
    out.push_back(placement::shard(static_cast<std::int32_t>(d)));
  if (spec.meta.type != dtype::int64) {
    for (auto op : {reduce_op::sum, reduce_op::avg, reduce_op::max, reduce_op::min})
      out.push_back(placement::partial(op));
  }
  return out;
}

std::vector<tensor_spec*> tensor_slots(op_call& call) {
  std::vector<tensor_spec*> out;
  for (auto& a : call.args) {
    if (a.kind == arg_kind::tensor)
      out.push_back(&a.tensor);
    for (auto& t : a.tensors)
      out.push_back(&t);
  }
  return out;
}

std::string signature(const op_call& call) {
  std::vector<std::string> parts;
  for (const auto& a : call.args) {
    if (a.kind == arg_kind::tensor)
      parts.push_back(
          fmt::format("{}{}", short_name(a.tensor.meta.type), to_string(a.tensor.shape())));
    else if (a.kind == arg_kind::tensors) {
      for (const auto& t : a.tensors)
        parts.push_back(to_string(t.shape()));
    } else {
      parts.push_back(to_string(op_arg(a)));
    }
  }
  return fmt::format("{} {}", call.mesh.to_string(), fmt::join(parts, " "));
}

// Tries one (template, mesh, placements) call and validates the candidates not seen before.
void run_call(const op_call& call, const op_rule& rule, const reference_op& ref,
              const grid_options& options, std::set<std::string>& seen, op_grid_summary& summary) {
  ++summary.calls;
  const auto inputs = tensor_inputs(call);
  rule_result ruled;
  try {
    const rule_context ctx(call, rule, inputs);
    ruled = rule.propagate(ctx);
  } catch (const tdiag::error&) {
    ++summary.rejected;
    return;
  }
  const auto sig = signature(call);
  for (const auto& cand : ruled.candidates) {
    std::string key = sig + " " + to_string(cand);
    for (const auto& c : ruled.op_collectives)
      key += fmt::format(" gather@{}", c.mesh_dim);
    if (!seen.insert(key).second)
      continue;
    ++summary.strategies;
    const strategy_claim claim{ruled.outputs, cand, ruled.op_collectives};
    const auto v = validate_strategy(call, claim, ref, options.validation);
    switch (v.status) {
    case validation_status::passed:
      ++summary.passed;
      break;
    case validation_status::not_applicable:
      ++summary.not_applicable;
      break;
    case validation_status::failed:
      ++summary.failed;
      if (summary.failures.size() < options.max_failures_kept)
        summary.failures.push_back(*v.failure);
      break;
    }
  }
}

} // namespace

std::size_t grid_result::strategies() const noexcept {
  std::size_t n = 0;
  for (const auto& o : ops)
    n += o.strategies;
  return n;
}

std::size_t grid_result::failed() const noexcept {
  std::size_t n = 0;
  for (const auto& o : ops)
    n += o.failed;
  return n;
}

grid_result validate_rule_set(const op_registry& rules, const reference_registry& references,
                              const grid_options& options) {
  std::vector<std::string> ops;
  if (options.ops.empty()) {
    for (const auto& name : references.names()) {
      if (rules.find(name) != nullptr)
        ops.push_back(name);
    }
  } else {
    for (const auto& typed : options.ops) {
      const auto* rule = rules.resolve(typed);
      if (rule == nullptr)
        rule = rules.find(typed);
      if (rule == nullptr) {
        tdiag::throw_input_error(codes::no_rule, "no sharding rule for this op",
                                 fmt::format("no sharding rule for {}; nearest known ops: {}",
                                             typed, fmt::join(rules.nearest(typed, 3), ", ")));
      }
      ops.push_back(rule->name);
    }
  }
  grid_result result;
  for (const auto& name : ops) {
    const auto* rule = rules.find(name);
    const auto* ref = references.find(name);
    if (ref == nullptr) {
      tdiag::throw_input_error(
          validation_codes::no_reference, "no reference implementation",
          fmt::format("{} has a sharding rule but no reference implementation to validate it "
                      "against",
                      name),
          "register one with reference_registry::add()");
    }
    auto templates = builtin_call_templates(name);
    if (auto it = options.templates.find(name); it != options.templates.end())
      templates = it->second;
    if (templates.empty()) {
      tdiag::throw_input_error(validation_codes::no_reference, "no argument grid",
                               fmt::format("{} has no argument grid to validate on", name),
                               "pass argument shapes in grid_options::templates");
    }
    op_grid_summary summary;
    summary.op = name;
    std::set<std::string> seen;
    std::mt19937_64 rng(options.validation.seed ^ std::hash<std::string>{}(name));
    for (const auto& args : templates) {
      for (const auto& mesh : options.meshes) {
        op_call call{name, mesh, args};
        auto slots = tensor_slots(call);
        // One option list per (tensor, mesh dim); a combination picks one from each.
        std::vector<std::vector<placement>> choice;
        for (auto* s : slots) {
          for (std::size_t m = 0; m < mesh.ndim(); ++m)
            choice.push_back(options_for(*s));
        }
        double total = 1.0;
        for (const auto& c : choice)
          total *= static_cast<double>(c.size());
        const bool exhaustive = total <= static_cast<double>(options.max_placement_combos);
        const auto combos =
            exhaustive ? static_cast<std::size_t>(total) : options.max_placement_combos;
        for (std::size_t n = 0; n < combos; ++n) {
          std::size_t rest = n;
          std::size_t slot = 0;
          for (auto* s : slots) {
            s->placements.assign(mesh.ndim(), placement::replicate());
            for (std::size_t m = 0; m < mesh.ndim(); ++m, ++slot) {
              const auto& opts = choice[slot];
              std::size_t pick = 0;
              if (exhaustive) {
                pick = rest % opts.size();
                rest /= opts.size();
              } else if (n > 0) { // the first sample is all-Replicate
                pick = std::uniform_int_distribution<std::size_t>(0, opts.size() - 1)(rng);
              }
              s->placements[m] = opts[pick];
            }
          }
          run_call(call, *rule, *ref, options, seen, summary);
        }
      }
    }
    result.ops.push_back(std::move(summary));
  }
  return result;
}

} // namespace tdiag::dtensor::sim
