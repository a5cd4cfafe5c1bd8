// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/reference_ops.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "tensor_math.hpp"

namespace tdiag::dtensor::sim {

sim_arg sim_arg::of(dense_tensor t) {
  sim_arg a;
  a.kind = arg_kind::tensor;
  a.tensor = std::move(t);
  return a;
}

sim_arg sim_arg::of(std::vector<dense_tensor> ts) {
  sim_arg a;
  a.kind = arg_kind::tensors;
  a.tensors = std::move(ts);
  return a;
}

sim_arg sim_arg::of_int(std::int64_t v) {
  sim_arg a;
  a.kind = arg_kind::int_value;
  a.int_value = v;
  return a;
}

sim_arg sim_arg::of_ints(std::vector<std::int64_t> v) {
  sim_arg a;
  a.kind = arg_kind::ints;
  a.ints = std::move(v);
  return a;
}

sim_arg sim_arg::of_float(double v) {
  sim_arg a;
  a.kind = arg_kind::float_value;
  a.float_value = v;
  return a;
}

sim_arg sim_arg::of_bool(bool v) {
  sim_arg a;
  a.kind = arg_kind::bool_value;
  a.int_value = v ? 1 : 0;
  return a;
}

void reference_registry::add(reference_op op) {
  if (op.name.empty() || !op.run) {
    tdiag::throw_input_error(
        validation_codes::no_reference, "invalid reference op",
        fmt::format("cannot register reference '{}': it needs a name and a function", op.name));
  }
  auto name = op.name;
  ops_.insert_or_assign(std::move(name), std::move(op));
}

const reference_op* reference_registry::find(std::string_view name) const {
  auto it = ops_.find(std::string(name));
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> reference_registry::names() const {
  std::vector<std::string> out;
  out.reserve(ops_.size());
  for (const auto& [name, op] : ops_)
    out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

reference_registry reference_registry::with_builtin_ops() {
  reference_registry r;
  detail::add_pointwise_references(r);
  detail::add_reduction_references(r);
  detail::add_shape_references(r);
  return r;
}

const reference_registry& reference_registry::builtin() {
  static const reference_registry registry = with_builtin_ops();
  return registry;
}

} // namespace tdiag::dtensor::sim
