// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>
#include <tensordiag/dtensor_checks/sim/strategy_validator.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <cmath>

namespace tdiag::dtensor::sim {
namespace codes = validation_codes;
namespace {

std::uint64_t mix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

dense_tensor random_tensor(const tensor_meta& meta, std::mt19937_64& rng) {
  const auto type =
      meta.type == dtype::float64 || meta.type == dtype::int64 ? meta.type : dtype::float32;
  dense_tensor t(meta.shape, type);
  std::uniform_real_distribution<double> magnitude(0.5, 2.0);
  std::uniform_int_distribution<int> coin(0, 1);
  std::uniform_int_distribution<std::int64_t> small(1, 9);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    t.set_flat(i, type == dtype::int64 ? static_cast<double>(small(rng))
                                       : (coin(rng) ? 1.0 : -1.0) * magnitude(rng));
  }
  return t;
}

double rtol_for(dtype t, const validation_options& o) {
  if (t == dtype::int64)
    return 0.0;
  return t == dtype::float64 ? o.rtol_float64 : o.rtol_float32;
}

std::string fmt_value(double v) {
  return fmt::format("{:.9g}", v);
}

struct failure_site {
  std::int64_t rank = -1;
  shape_t local_index;
  double local_value = 0.0;
};

// The first rank whose local output holds global element `index`, with its local index.
failure_site locate(const std::vector<dense_tensor>& locals, const tensor_spec& out,
                    const device_mesh& mesh, const shape_t& index) {
  failure_site site;
  for (std::int64_t r = 0; r < mesh.num_devices(); ++r) {
    const auto view = local_shape_and_offset(out, mesh, mesh.coordinate(r));
    shape_t local(index.size());
    bool inside = true;
    for (std::size_t d = 0; d < index.size(); ++d) {
      local[d] = index[d] - view.offset[d];
      inside = inside && local[d] >= 0 && local[d] < view.shape[d];
    }
    if (!inside)
      continue;
    const auto& t = locals[static_cast<std::size_t>(r)];
    if (t.shape() != view.shape)
      continue;
    site.rank = r;
    site.local_index = local;
    site.local_value = t.at(local);
    return site;
  }
  return site;
}

validation_result fail(std::string_view code, std::string title, std::string message,
                       std::string hint, const op_call& call, const candidate_strategy& s) {
  validation_result v;
  v.status = validation_status::failed;
  diagnostic d;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.add_field("op", call.op);
  d.add_field("mesh", call.mesh.to_string());
  d.add_field("strategy", to_string(s));
  v.failure = std::move(d);
  return v;
}

// The claim's inputs and outputs, as every step of run_claim() sees them.
struct claim_run {
  const op_call& call;
  const strategy_claim& claim;
  const reference_op& ref;
  const validation_options& options;
  std::vector<tensor_input> inputs;
  std::vector<tensor_spec> in_specs;
  std::vector<tensor_spec> out_specs;

  [[nodiscard]] const candidate_strategy& strategy() const noexcept { return claim.strategy; }
  [[nodiscard]] const device_mesh& mesh() const noexcept { return call.mesh; }
  [[nodiscard]] validation_result failed(std::string_view code, std::string title,
                                         std::string message, std::string hint) const {
    return fail(code, std::move(title), std::move(message), std::move(hint), call, claim.strategy);
  }
};

// The reference outputs on the full inputs, float tensors promoted to float64; nullopt when the
// reference rejects them (the claim is then not applicable).
std::optional<std::vector<dense_tensor>> reference_outputs(sim_args full, const reference_op& ref,
                                                           validation_result& not_applicable) {
  for (auto& a : full) {
    if (a.kind == arg_kind::tensor && a.tensor.is_floating())
      a.tensor = a.tensor.to(dtype::float64);
    for (auto& t : a.tensors) {
      if (t.is_floating())
        t = t.to(dtype::float64);
    }
  }
  try {
    return ref.run(full);
  } catch (const tdiag::error& e) {
    not_applicable.status = validation_status::not_applicable;
    not_applicable.failure = e.report().diagnostics.front();
    return std::nullopt;
  }
}

// Every rank's local input pieces: the claimed placements, with mesh dims the op gathers itself
// replaced by Replicate. Fills run.in_specs and run.out_specs.
std::vector<std::vector<dense_tensor>> distribute_inputs(claim_run& run, const sim_args& full) {
  const auto& s = run.strategy();
  std::vector<std::vector<dense_tensor>> pieces;
  for (std::size_t k = 0; k < run.inputs.size(); ++k) {
    auto ps = s.inputs[k];
    // A masked partial input (embedding's indices) holds the replicated indices; the local op
    // masks them against its rows, as PyTorch's _MaskPartial does.
    for (auto& p : ps) {
      if (p.is_partial() && p.masked)
        p = placement::replicate();
    }
    for (const auto& c : run.claim.op_collectives) {
      if (c.comm == collective::all_gather && c.mesh_dim < ps.size() && ps[c.mesh_dim].is_shard()) {
        ps[c.mesh_dim] = placement::replicate();
      }
    }
    run.in_specs.push_back(tensor_spec{run.inputs[k].spec->meta, s.inputs[k]});
    const auto& arg = full[run.inputs[k].arg_index];
    const auto& t = run.inputs[k].in_list ? arg.tensors[run.inputs[k].list_index] : arg.tensor;
    pieces.push_back(distribute(t, ps, run.mesh(), run.options.seed ^ mix(k + 1)));
  }
  for (std::size_t j = 0; j < run.claim.outputs.size(); ++j) {
    run.out_specs.push_back(
        tensor_spec{run.claim.outputs[j], s.outputs.size() == 1 ? s.outputs[0] : s.outputs.at(j)});
  }
  return pieces;
}

// Runs the op on every rank's pieces; local_out[j] gets output j of every rank, rank order.
std::optional<validation_result> run_ranks(const claim_run& run, const sim_args& full,
                                           const std::vector<std::vector<dense_tensor>>& pieces,
                                           std::vector<std::vector<dense_tensor>>& local_out) {
  const auto& call = run.call;
  const auto& mesh = run.mesh();
  const auto& s = run.strategy();
  local_out.assign(run.claim.outputs.size(), {});
  for (std::int64_t r = 0; r < mesh.num_devices(); ++r) {
    sim_args local = full;
    for (std::size_t k = 0; k < run.inputs.size(); ++k) {
      auto& arg = local[run.inputs[k].arg_index];
      (run.inputs[k].in_list ? arg.tensors[run.inputs[k].list_index] : arg.tensor) =
          pieces[k][static_cast<std::size_t>(r)];
    }
    std::vector<dense_tensor> outs;
    try {
      const local_context ctx{call, run.in_specs, run.out_specs, mesh, r};
      outs = run.ref.run_local ? run.ref.run_local(local, ctx) : run.ref.run(local);
    } catch (const tdiag::error& e) {
      return run.failed(
          codes::local_op_failed, "the op fails on a rank's local pieces",
          fmt::format("{} with strategy {} on mesh {}: rank {} (coordinate {}) cannot run the op "
                      "on its local "
                      "inputs: {}",
                      call.op, to_string(s), mesh.to_string(), r, to_string(mesh.coordinate(r)),
                      e.what()),
          "the claimed input placements leave a rank with pieces the op cannot take; replicate the "
          "dims the op needs whole");
    }
    if (outs.size() != run.claim.outputs.size()) {
      return run.failed(
          codes::wrong_local_shape, "a rank produces a different number of outputs",
          fmt::format(
              "{} with strategy {} on mesh {}: rank {} produces {} outputs, the claim has {}",
              call.op, to_string(s), mesh.to_string(), r, outs.size(), run.claim.outputs.size()),
          "the op's output count depends on a sharded size; replicate that dim");
    }
    for (std::size_t j = 0; j < outs.size(); ++j)
      local_out[j].push_back(std::move(outs[j]));
  }
  return std::nullopt;
}

// Output j's local pieces do not assemble under the claimed placements.
validation_result assembly_failure(const claim_run& run, std::size_t j,
                                   const assembly_issue& issue) {
  const auto& call = run.call;
  const auto& mesh = run.mesh();
  const auto& s = run.strategy();
  const auto& spec = run.out_specs[j];
  auto label = mesh.dim_label(issue.mesh_dim);
  if (issue.what == assembly_issue::kind::local_shape) {
    auto v = run.failed(
        codes::wrong_local_shape, "a rank's local output does not fit the claimed placements",
        fmt::format("{} with strategy {} on mesh {}: output {} claims {} for global shape {}, so "
                    "rank "
                    "{} "
                    "(coordinate {}) should hold a local {} but holds {}; {} placement {} breaks",
                    call.op, to_string(s), mesh.to_string(), j, to_string(spec.placements),
                    to_string(spec.shape()), issue.rank, to_string(mesh.coordinate(issue.rank)),
                    to_string(issue.expected_shape), to_string(issue.actual_shape), label,
                    to_string(spec.placements[issue.mesh_dim])),
        "the output is sharded differently than claimed on that mesh dim");
    v.failure->add_field("rank", issue.rank);
    v.failure->add_field("mesh_dim", static_cast<std::int64_t>(issue.mesh_dim));
    v.broken_mesh_dims = {issue.mesh_dim};
    return v;
  }
  auto v = run.failed(
      codes::replica_mismatch, "ranks claimed to be replicas disagree",
      fmt::format(
          "{} with strategy {} on mesh {}: output {} claims {} on {}, but rank {} holds {} and "
          "rank {} holds {} at index {} (of the tensor gathered over later mesh dims)",
          call.op, to_string(s), mesh.to_string(), j, to_string(spec.placements[issue.mesh_dim]),
          label, issue.rank, fmt_value(issue.value), issue.other_rank, fmt_value(issue.other_value),
          to_string(issue.index)),
      fmt::format(
          "the output is not Replicate on {}: it is still a pending reduction or a shard there",
          label));
  v.failure->add_field("rank", issue.rank);
  v.failure->add_field("other_rank", issue.other_rank);
  v.failure->add_field("mesh_dim", static_cast<std::int64_t>(issue.mesh_dim));
  v.failure->add_field("index", to_string(issue.index));
  v.failure->add_field("expected", issue.other_value);
  v.failure->add_field("actual", issue.value);
  v.broken_mesh_dims = {issue.mesh_dim};
  return v;
}

// Output j assembled to `got`; the first element that differs from the reference `want`.
std::optional<validation_result> compare_values(const claim_run& run, std::size_t j,
                                                const dense_tensor& want, const dense_tensor& got,
                                                const std::vector<dense_tensor>& locals) {
  const auto& call = run.call;
  const auto& mesh = run.mesh();
  const auto& s = run.strategy();
  const auto& spec = run.out_specs[j];
  if (want.shape() != got.shape()) {
    return run.failed(codes::wrong_local_shape, "assembled output has the wrong shape",
                      fmt::format("{} with strategy {} on mesh {}: output {} assembles to shape {} "
                                  "but the reference gives {}",
                                  call.op, to_string(s), mesh.to_string(), j,
                                  to_string(got.shape()), to_string(want.shape())),
                      "the rule's output shape is wrong");
  }
  const double rtol = rtol_for(spec.meta.type, run.options);
  double scale = 1e-30;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    if (std::isfinite(want.flat(i)))
      scale = std::max(scale, std::abs(want.flat(i)));
  }
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double e = want.flat(i);
    const double a = got.flat(i);
    if ((std::isnan(e) && std::isnan(a)) || e == a ||
        std::abs(a - e) <= rtol * (std::abs(e) + scale))
      continue;
    shape_t index(want.ndim());
    auto rest = i;
    for (std::size_t d = want.ndim(); d-- > 0;) {
      index[d] = rest % want.shape()[d];
      rest /= want.shape()[d];
    }
    const auto site = locate(locals, spec, mesh, index);
    auto v = run.failed(
        codes::wrong_values, "the strategy computes wrong values",
        fmt::format("{} with strategy {} on mesh {}: output {} element {} should be {} (float64 "
                    "reference "
                    "on the full tensors) but the claimed placements {} assemble to {}{}",
                    call.op, to_string(s), mesh.to_string(), j, to_string(index), fmt_value(e),
                    to_string(spec.placements), fmt_value(a),
                    site.rank >= 0
                        ? fmt::format("; rank {} (coordinate {}) holds it at local index {} = {}",
                                      site.rank, to_string(mesh.coordinate(site.rank)),
                                      to_string(site.local_index), fmt_value(site.local_value))
                        : std::string()),
        "the op does not commute with the claimed placements; fix the rule for the mesh dims "
        "named");
    v.failure->add_field("output", static_cast<std::int64_t>(j));
    v.failure->add_field("index", to_string(index));
    v.failure->add_field("expected", e);
    v.failure->add_field("actual", a);
    if (site.rank >= 0) {
      v.failure->add_field("rank", site.rank);
      v.failure->add_field("local_index", to_string(site.local_index));
    }
    return v;
  }
  return std::nullopt;
}

// Reference on the full inputs, the op on every rank's pieces, the pieces assembled under the
// claimed output placements and compared element by element.
validation_result run_claim(const op_call& call, const strategy_claim& claim,
                            const reference_op& ref, const validation_options& options) {
  claim_run run{call, claim, ref, options, tensor_inputs(call), {}, {}};
  const auto& s = claim.strategy;
  if (s.inputs.size() != run.inputs.size() || s.outputs.empty()) {
    tdiag::throw_input_error(
        codes::tensor_misuse, "strategy does not fit the call",
        fmt::format(
            "{}: the strategy lists {} inputs and {} outputs; the call has {} tensor inputs",
            call.op, s.inputs.size(), s.outputs.size(), run.inputs.size()));
  }
  std::mt19937_64 rng(options.seed ^ mix(std::hash<std::string>{}(call.op)));
  const sim_args full = make_inputs(call, ref, rng);
  validation_result not_applicable;
  const auto expected = reference_outputs(full, ref, not_applicable);
  if (!expected)
    return not_applicable;
  const auto pieces = distribute_inputs(run, full);
  std::vector<std::vector<dense_tensor>> local_out;
  if (auto failure = run_ranks(run, full, pieces, local_out))
    return std::move(*failure);
  for (std::size_t j = 0; j < claim.outputs.size(); ++j) {
    const auto& spec = run.out_specs[j];
    assembly_issue issue;
    auto got = assemble(local_out[j], spec.placements, call.mesh, spec.shape(),
                        rtol_for(spec.meta.type, options), issue);
    if (!got)
      return assembly_failure(run, j, issue);
    if (auto failure = compare_values(run, j, expected->at(j), *got, local_out[j]))
      return std::move(*failure);
  }
  return {};
}

// The strategy restricted to mesh dim m, on a 1-D mesh of that size.
validation_result project(const op_call& call, const strategy_claim& claim, const reference_op& ref,
                          const validation_options& options, std::size_t m) {
  op_call one = call;
  one.mesh = device_mesh({call.mesh.size(m)});
  const auto single = [m](const placement_list& ps) { return placement_list{ps[m]}; };
  for (auto& a : one.args) {
    if (a.kind == arg_kind::tensor)
      a.tensor.placements = {placement::replicate()};
    for (auto& t : a.tensors)
      t.placements = {placement::replicate()};
  }
  strategy_claim c;
  c.outputs = claim.outputs;
  for (const auto& ps : claim.strategy.inputs)
    c.strategy.inputs.push_back(single(ps));
  for (const auto& ps : claim.strategy.outputs)
    c.strategy.outputs.push_back(single(ps));
  for (auto oc : claim.op_collectives) {
    if (oc.mesh_dim != m)
      continue;
    oc.mesh_dim = 0;
    c.op_collectives.push_back(oc);
  }
  return run_claim(one, c, ref, options);
}

} // namespace

std::string to_string(const candidate_strategy& s) {
  std::vector<std::string> ins;
  std::vector<std::string> outs;
  const auto compact = [](const placement_list& ps) {
    std::vector<std::string> parts;
    for (const auto& p : ps)
      parts.push_back(dtensor::to_string(p));
    return fmt::format("({})", fmt::join(parts, ", "));
  };
  for (const auto& ps : s.inputs)
    ins.push_back(compact(ps));
  for (const auto& ps : s.outputs)
    outs.push_back(compact(ps));
  return fmt::format("{} → {}", fmt::join(ins, ", "), fmt::join(outs, ", "));
}

sim_args make_inputs(const op_call& call, const reference_op& reference, std::mt19937_64& rng) {
  sim_args args;
  for (const auto& a : call.args) {
    switch (a.kind) {
    case arg_kind::tensor:
      args.push_back(sim_arg::of(random_tensor(a.tensor.meta, rng)));
      break;
    case arg_kind::tensors: {
      std::vector<dense_tensor> ts;
      for (const auto& t : a.tensors)
        ts.push_back(random_tensor(t.meta, rng));
      args.push_back(sim_arg::of(std::move(ts)));
      break;
    }
    case arg_kind::int_value:
      args.push_back(sim_arg::of_int(a.int_value));
      break;
    case arg_kind::bool_value:
      args.push_back(sim_arg::of_bool(a.int_value != 0));
      break;
    case arg_kind::ints:
      args.push_back(sim_arg::of_ints(a.ints));
      break;
    case arg_kind::float_value:
      args.push_back(sim_arg::of_float(a.float_value));
      break;
    case arg_kind::none:
    case arg_kind::string_value: // no reference op reads a string kwarg
      args.emplace_back();
      break;
    }
  }
  if (reference.prepare)
    reference.prepare(args, rng);
  return args;
}

validation_result validate_strategy(const op_call& call, const strategy_claim& claim,
                                    const reference_op& reference,
                                    const validation_options& options) {
  auto result = run_claim(call, claim, reference, options);
  if (result.status != validation_status::failed || !result.broken_mesh_dims.empty())
    return result;
  if (call.mesh.ndim() == 1 || !options.attribute_mesh_dims) {
    result.broken_mesh_dims = {0};
  } else {
    for (std::size_t m = 0; m < call.mesh.ndim(); ++m) {
      bool trivial = true;
      for (const auto& ps : claim.strategy.inputs)
        trivial = trivial && ps[m].is_replicate();
      for (const auto& ps : claim.strategy.outputs)
        trivial = trivial && ps[m].is_replicate();
      if (trivial)
        continue;
      auto alone = project(call, claim, reference, options, m);
      if (alone.status == validation_status::failed)
        result.broken_mesh_dims.push_back(m);
    }
  }
  auto& d = *result.failure;
  if (result.broken_mesh_dims.empty()) {
    d.message += "; every mesh dim's part of the strategy holds on its own, so it is the "
                 "combination of mesh dims "
                 "(nested or uneven shards) that breaks";
  } else {
    std::vector<std::string> dims;
    for (auto m : result.broken_mesh_dims) {
      std::vector<std::string> ins;
      for (const auto& ps : claim.strategy.inputs)
        ins.push_back(dtensor::to_string(ps[m]));
      std::vector<std::string> outs;
      for (const auto& ps : claim.strategy.outputs)
        outs.push_back(dtensor::to_string(ps[m]));
      dims.push_back(fmt::format("{} [{} | {}]", call.mesh.dim_label(m), fmt::join(outs, ", "),
                                 fmt::join(ins, ", ")));
    }
    d.message += fmt::format("; the placement that breaks: {}", fmt::join(dims, "; "));
  }
  field_value::list dims;
  for (auto m : result.broken_mesh_dims)
    dims.emplace_back(static_cast<std::int64_t>(m));
  d.add_field("mesh_dims", std::move(dims));
  return result;
}

} // namespace tdiag::dtensor::sim
