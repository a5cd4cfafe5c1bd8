// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// What an op's sharding rule sees and returns. A rule computes the output metas (the shape
// inference PyTorch runs on fake tensors first, with its shape errors) and the candidate
// strategies; the propagator then scores, selects and plans (propagate.hpp).
#pragma once

#include <tensordiag/dtensor_checks/errors.hpp>
#include <tensordiag/dtensor_checks/op_schema.hpp>
#include <tensordiag/dtensor_checks/redistribute.hpp>
#include <tensordiag/dtensor_checks/strategy.hpp>

#include <functional>
#include <string>
#include <vector>

namespace tdiag::dtensor {

struct op_rule;

/// The call as a rule sees it. Accessors validate argument kinds and throw a sharding_error
/// (TDIAG-DT-011) naming the argument when the call does not match the schema.
class rule_context {
public:
  rule_context(const op_call& call, const op_rule& rule, const std::vector<tensor_input>& inputs)
      : call_(call), rule_(rule), inputs_(inputs) {}

  [[nodiscard]] const op_call& call() const noexcept { return call_; }
  [[nodiscard]] const op_rule& rule() const noexcept { return rule_; }
  [[nodiscard]] const device_mesh& mesh() const noexcept { return call_.mesh; }
  [[nodiscard]] std::size_t mesh_ndim() const noexcept { return call_.mesh.ndim(); }
  /// Flattened tensor inputs (aten order).
  [[nodiscard]] const std::vector<tensor_input>& inputs() const noexcept { return inputs_; }
  [[nodiscard]] const tensor_spec& input(std::size_t i) const { return *inputs_.at(i).spec; }
  [[nodiscard]] std::size_t arg_count() const noexcept { return call_.args.size(); }
  [[nodiscard]] bool has_arg(std::size_t i) const noexcept {
    return i < call_.args.size() && call_.args[i].kind != arg_kind::none;
  }

  [[nodiscard]] const tensor_spec& tensor_arg(std::size_t i) const;
  [[nodiscard]] const std::vector<tensor_spec>& tensors_arg(std::size_t i) const;
  [[nodiscard]] std::int64_t int_arg(std::size_t i) const;
  [[nodiscard]] std::int64_t int_arg_or(std::size_t i, std::int64_t fallback) const;
  [[nodiscard]] std::vector<std::int64_t> ints_arg(std::size_t i) const;
  [[nodiscard]] bool bool_arg_or(std::size_t i, bool fallback) const;
  [[nodiscard]] bool is_scalar_arg(std::size_t i) const noexcept;

  /// `self` (the schema name of argument i), or `arg3` when the schema does not name it.
  [[nodiscard]] std::string arg_name(std::size_t i) const;
  /// `arg 1 (mat2) f32[6, 8] [S(0), R]` for the tensor input `input_index`.
  [[nodiscard]] std::string describe_input(std::size_t input_index) const;
  /// The short op name used in messages: `aten.mm` for `aten.mm.default`.
  [[nodiscard]] std::string short_op() const;
  /// Normalises a possibly negative dim against `ndim`; throws TDIAG-DT-011 naming arg i.
  [[nodiscard]] std::int64_t wrap_dim(std::int64_t dim, std::int64_t ndim,
                                      std::size_t arg_index) const;

  /// Throws a sharding_error built with make_diagnostic() for this op.
  [[noreturn]] void fail(error_class cls, std::string_view code, std::string title,
                         std::string message, std::string hint) const;
  [[noreturn]] void fail(error_class cls, diagnostic d) const;
  /// Throws TDIAG-DT-011 for argument i: "`short_op`: arg i (name) `why`", with the schema's
  /// argument order as the hint.
  [[noreturn]] void fail_argument(std::size_t i, std::string_view why) const;

private:
  const op_call& call_;
  const op_rule& rule_;
  const std::vector<tensor_input>& inputs_;
};

/// A collective the op runs itself, beyond redistributing its inputs (e.g. max.dim over a
/// sharded dim gathers values and indices).
struct op_collective {
  std::size_t mesh_dim = 0;
  collective comm = collective::none;
  std::int64_t count = 1;
  std::string why;
};

/// What a rule returns.
struct rule_result {
  std::vector<tensor_meta> outputs;           ///< global meta of every output
  std::vector<candidate_strategy> candidates; ///< in PyTorch's order (ties resolve by it)
  /// Per tensor input: how to plan its redistribution (copy_ reduces a mismatched Partial).
  std::vector<plan_options> input_plan_options;
  /// Collectives inside the op's own implementation, counted with the plans' ones.
  std::vector<op_collective> op_collectives;
};

using rule_function = std::function<rule_result(const rule_context&)>;

/// One mesh dim's rule `[out... | in...]`: placements of every output, then of every tensor input.
using mesh_dim_rule = std::vector<placement>;

/// Expands per-mesh-dim rules over the whole mesh as PyTorch's expand_to_full_mesh_op_strategy
/// does: the product of the rules with the first mesh dim varying slowest, dropping a
/// combination when a sharded input dim is smaller than the product of the mesh sizes sharding
/// it, or a spec mixes Partial kinds other than {sum, avg}. `input_shapes[k]` is the global
/// shape of the rule's k-th input column.
[[nodiscard]] std::vector<candidate_strategy>
expand_mesh_dim_rules(const device_mesh& mesh, const std::vector<mesh_dim_rule>& rules,
                      std::size_t num_outputs, const std::vector<shape_t>& input_shapes);

/// True when every Shard of `ps` fits `shape` (the sharded size is at least the product of the
/// mesh sizes sharding it) — PyTorch's is_tensor_shardable.
[[nodiscard]] bool is_shardable(const shape_t& shape, const placement_list& ps,
                                const device_mesh& mesh);

} // namespace tdiag::dtensor
