// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/op_registry.hpp>
#include <tensordiag/dtensor_checks/sharding_rule.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor {

std::string rule_context::arg_name(std::size_t i) const {
  if (i < rule_.arg_names.size())
    return rule_.arg_names[i];
  return fmt::format("arg{}", i);
}

std::string rule_context::short_op() const {
  std::string_view name = call_.op;
  const auto first = name.find('.');
  const auto last = name.rfind('.');
  if (first != std::string_view::npos && last != first)
    name = name.substr(0, last);
  return std::string(name);
}

std::string rule_context::describe_input(std::size_t input_index) const {
  const auto& in = inputs_.at(input_index);
  const auto name = in.in_list ? fmt::format("{}[{}]", arg_name(in.arg_index), in.list_index)
                               : arg_name(in.arg_index);
  return fmt::format("arg {} ({}) {}", in.arg_index, name, to_string(*in.spec));
}

void rule_context::fail(error_class cls, std::string_view code, std::string title,
                        std::string message, std::string hint) const {
  throw sharding_error(cls, make_diagnostic(code, call_.op, cls, std::move(title),
                                            std::move(message), std::move(hint)));
}

void rule_context::fail(error_class cls, diagnostic d) const {
  throw sharding_error(cls, std::move(d));
}

void rule_context::fail_argument(std::size_t i, std::string_view why) const {
  auto d = make_diagnostic(
      codes::bad_arguments, call_.op, error_class::user_error,
      "argument does not match the op's schema",
      fmt::format("{}: arg {} ({}) {}", short_op(), i, arg_name(i), why),
      fmt::format("pass the arguments in aten order: {}", fmt::join(rule_.arg_names, ", ")));
  d.add_field("arg_index", static_cast<std::int64_t>(i));
  d.add_field("arg", arg_name(i));
  fail(error_class::user_error, std::move(d));
}

namespace {
[[noreturn]] void bad_arg(const rule_context& ctx, std::size_t i, std::string_view expected) {
  const auto got =
      i < ctx.arg_count() ? std::string(to_string(ctx.call().args[i].kind)) : "nothing";
  ctx.fail_argument(i, fmt::format("must be {}, got {}", expected, got));
}
} // namespace

const tensor_spec& rule_context::tensor_arg(std::size_t i) const {
  if (i >= call_.args.size() || call_.args[i].kind != arg_kind::tensor)
    bad_arg(*this, i, "a tensor");
  return call_.args[i].tensor;
}

const std::vector<tensor_spec>& rule_context::tensors_arg(std::size_t i) const {
  if (i >= call_.args.size() || call_.args[i].kind != arg_kind::tensors ||
      call_.args[i].tensors.empty()) {
    bad_arg(*this, i, "a non-empty list of tensors");
  }
  return call_.args[i].tensors;
}

std::int64_t rule_context::int_arg(std::size_t i) const {
  if (i >= call_.args.size() || (call_.args[i].kind != arg_kind::int_value))
    bad_arg(*this, i, "an int");
  return call_.args[i].int_value;
}

std::int64_t rule_context::int_arg_or(std::size_t i, std::int64_t fallback) const {
  return has_arg(i) ? int_arg(i) : fallback;
}

std::vector<std::int64_t> rule_context::ints_arg(std::size_t i) const {
  if (i < call_.args.size() && call_.args[i].kind == arg_kind::int_value)
    return {call_.args[i].int_value};
  if (i >= call_.args.size() || call_.args[i].kind != arg_kind::ints)
    bad_arg(*this, i, "a list of ints");
  return call_.args[i].ints;
}

bool rule_context::bool_arg_or(std::size_t i, bool fallback) const {
  if (!has_arg(i))
    return fallback;
  const auto& a = call_.args[i];
  if (a.kind != arg_kind::bool_value && a.kind != arg_kind::int_value)
    bad_arg(*this, i, "a bool");
  return a.int_value != 0;
}

bool rule_context::is_scalar_arg(std::size_t i) const noexcept {
  return i < call_.args.size() &&
         (call_.args[i].kind == arg_kind::float_value ||
          call_.args[i].kind == arg_kind::int_value || call_.args[i].kind == arg_kind::bool_value);
}

std::int64_t rule_context::wrap_dim(std::int64_t dim, std::int64_t ndim,
                                    std::size_t arg_index) const {
  const std::int64_t n = ndim == 0 ? 1 : ndim;
  if (dim < -n || dim >= n) {
    auto d = make_diagnostic(
        codes::bad_arguments, call_.op, error_class::user_error, "dim out of range",
        fmt::format("{}: arg {} ({}) = {} is out of range for a {}-d tensor (expected {} .. {})",
                    short_op(), arg_index, arg_name(arg_index), dim, ndim, -n, n - 1),
        "pass a dim that exists in the tensor");
    d.add_field("arg_index", static_cast<std::int64_t>(arg_index));
    fail(error_class::user_error, std::move(d));
  }
  return dim < 0 ? dim + n : dim;
}

bool is_shardable(const shape_t& shape, const placement_list& ps, const device_mesh& mesh) {
  for (std::size_t m = 0; m < ps.size(); ++m) {
    if (!ps[m].is_shard())
      continue;
    const auto d = static_cast<std::size_t>(ps[m].dim);
    if (d >= shape.size())
      return false;
    std::int64_t shards = 1;
    for (std::size_t k = 0; k < ps.size(); ++k) {
      if (ps[k].is_shard(ps[m].dim))
        shards *= mesh.size(k);
    }
    if (shape[d] < shards)
      return false;
  }
  return true;
}

namespace {
bool mixes_partials(const placement_list& ps) {
  bool seen = false;
  reduce_op first = reduce_op::sum;
  for (const auto& p : ps) {
    if (!p.is_partial())
      continue;
    if (!seen) {
      seen = true;
      first = p.op;
      continue;
    }
    if (p.op == first)
      continue;
    const bool linear_pair = (p.op == reduce_op::sum || p.op == reduce_op::avg) &&
                             (first == reduce_op::sum || first == reduce_op::avg);
    if (!linear_pair)
      return true;
  }
  return false;
}
} // namespace

std::vector<candidate_strategy> expand_mesh_dim_rules(const device_mesh& mesh,
                                                      const std::vector<mesh_dim_rule>& rules,
                                                      std::size_t num_outputs,
                                                      const std::vector<shape_t>& input_shapes) {
  std::vector<candidate_strategy> out;
  const auto nd = mesh.ndim();
  if (rules.empty())
    return out;
  const auto width = rules.front().size();
  const auto num_inputs = width - num_outputs;
  std::vector<std::size_t> index(nd, 0);
  while (true) {
    candidate_strategy c;
    c.outputs.assign(num_outputs, placement_list(nd));
    c.inputs.assign(num_inputs, placement_list(nd));
    for (std::size_t m = 0; m < nd; ++m) {
      const auto& r = rules[index[m]];
      for (std::size_t k = 0; k < num_outputs; ++k)
        c.outputs[k][m] = r[k];
      for (std::size_t k = 0; k < num_inputs; ++k)
        c.inputs[k][m] = r[num_outputs + k];
    }
    bool keep = true;
    for (std::size_t k = 0; k < num_inputs && keep; ++k) {
      if (k < input_shapes.size() && !is_shardable(input_shapes[k], c.inputs[k], mesh))
        keep = false;
      if (mixes_partials(c.inputs[k]))
        keep = false;
    }
    for (std::size_t k = 0; k < num_outputs && keep; ++k) {
      if (mixes_partials(c.outputs[k]))
        keep = false;
    }
    if (keep)
      out.push_back(std::move(c));
    // Odometer with the first mesh dim varying slowest.
    std::size_t m = nd;
    while (m > 0) {
      --m;
      if (++index[m] < rules.size())
        break;
      index[m] = 0;
      if (m == 0)
        return out;
    }
    if (nd == 0)
      return out;
  }
}

} // namespace tdiag::dtensor
