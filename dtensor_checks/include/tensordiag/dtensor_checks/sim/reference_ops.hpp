// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reference implementations of ops on dense CPU tensors, and the registry the strategy
// validator looks them up in. The built-in registry covers the 37 ops of the corpus; users add
// a reference for their own op next to the sharding rule they register in op_registry.
#pragma once

#include <tensordiag/dtensor_checks/op_schema.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>

#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tdiag::dtensor::sim {

/// One positional argument of a reference call; the member matching `kind` is meaningful.
struct sim_arg {
  arg_kind kind = arg_kind::none;
  dense_tensor tensor;
  std::vector<dense_tensor> tensors;
  std::int64_t int_value = 0;
  std::vector<std::int64_t> ints;
  double float_value = 0.0;

  [[nodiscard]] static sim_arg of(dense_tensor t);
  [[nodiscard]] static sim_arg of(std::vector<dense_tensor> ts);
  [[nodiscard]] static sim_arg of_int(std::int64_t v);
  [[nodiscard]] static sim_arg of_ints(std::vector<std::int64_t> v);
  [[nodiscard]] static sim_arg of_float(double v);
  [[nodiscard]] static sim_arg of_bool(bool v);
};
using sim_args = std::vector<sim_arg>;

/// Runs an op on whole tensors; returns every output (tuple outputs in order). Throws
/// tdiag::input_error (TDIAG-DT-101) when the arguments do not fit the op.
using reference_fn = std::function<std::vector<dense_tensor>(const sim_args&)>;

/// What one rank knows when it runs the op on its local pieces, as DTensor's local op sees it.
struct local_context {
  const op_call& call;                     ///< the global call (global shapes and scalars)
  const std::vector<tensor_spec>& inputs;  ///< flattened tensor inputs in the strategy's placements
  const std::vector<tensor_spec>& outputs; ///< global output metas with the claimed placements
  const device_mesh& mesh;
  std::int64_t rank = 0;
};

/// Runs the op on one rank's local args. Ops whose scalar args depend on global sizes (view and
/// expand sizes, layer norm's normalized_shape) or on the rank (embedding's masked rows) set one.
using local_fn =
    std::function<std::vector<dense_tensor>(const sim_args& local_args, const local_context& ctx)>;

/// Adjusts freshly drawn random inputs so the op is defined on them (embedding indices inside
/// the table). Runs on the full tensors before sharding.
using prepare_fn = std::function<void(sim_args& args, std::mt19937_64& rng)>;

struct reference_op {
  std::string name; ///< full overload name, as in op_registry
  reference_fn run;
  local_fn run_local; ///< empty: run(local_args)
  prepare_fn prepare; ///< empty: nothing to adjust
};

/// Maps overload names to reference implementations. Not thread-safe for concurrent add().
class reference_registry {
public:
  /// Adds or replaces; throws tdiag::input_error when the name or the function is missing.
  void add(reference_op op);
  [[nodiscard]] const reference_op* find(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] std::size_t size() const noexcept { return ops_.size(); }

  /// A copy of the built-in references (adding to it never changes builtin()).
  [[nodiscard]] static reference_registry with_builtin_ops();
  [[nodiscard]] static const reference_registry& builtin();

private:
  std::unordered_map<std::string, reference_op> ops_;
};

} // namespace tdiag::dtensor::sim
