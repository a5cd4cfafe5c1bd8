// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// An op call: the aten overload name, the mesh, and the positional arguments (DTensor specs,
// tensor lists, ints, floats, bools), as PyTorch's OpSchema holds them.
#pragma once

#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tdiag::dtensor {

enum class arg_kind : std::uint8_t {
  tensor,
  tensors,
  int_value,
  ints,
  float_value,
  bool_value,
  none,
  string_value ///< a flattened string kwarg of a recording (`approximate="tanh"`)
};

[[nodiscard]] std::string_view to_string(arg_kind kind) noexcept;

/// One positional argument. Only the member matching `kind` is meaningful.
struct op_arg {
  arg_kind kind = arg_kind::none;
  tensor_spec tensor;               ///< kind == tensor
  std::vector<tensor_spec> tensors; ///< kind == tensors
  std::int64_t int_value = 0;       ///< kind == int_value (also bool as 0/1)
  std::vector<std::int64_t> ints;   ///< kind == ints
  double float_value = 0.0;         ///< kind == float_value
  std::string text;                 ///< kind == string_value

  [[nodiscard]] static op_arg of(tensor_spec spec);
  [[nodiscard]] static op_arg of(std::vector<tensor_spec> specs);
  [[nodiscard]] static op_arg of_int(std::int64_t v);
  [[nodiscard]] static op_arg of_ints(std::vector<std::int64_t> v);
  [[nodiscard]] static op_arg of_float(double v);
  [[nodiscard]] static op_arg of_bool(bool v);
  [[nodiscard]] static op_arg of_string(std::string v);
  [[nodiscard]] bool is_tensor() const noexcept { return kind == arg_kind::tensor; }
};

/// `f32[4, 2] (R)`, `[f32[4] (R), f32[2] (R)]`, `3`, `[1, 2]`, `2.0`, `True`, `None`, `'tanh'`.
[[nodiscard]] std::string to_string(const op_arg& arg);
/// PyTorch's form inside "Sharding propagation failed for ...": `Spec(f32[4, 2](R))`, `[1, 2]`.
[[nodiscard]] std::string to_torch_string(const op_arg& arg);

/// A call of one aten overload on DTensor arguments.
struct op_call {
  std::string op; ///< full overload name, e.g. `aten.mm.default`
  device_mesh mesh;
  std::vector<op_arg> args;
};

/// A tensor input of a call, flattened (tensor lists contribute one per element) in aten order,
/// which is the order of PyTorch's args_spec and of every cost and plan list.
struct tensor_input {
  const tensor_spec* spec = nullptr;
  std::size_t arg_index = 0;  ///< position in op_call::args
  std::size_t list_index = 0; ///< position inside a tensor list; 0 otherwise
  bool in_list = false;
};

/// The flattened tensor inputs of `call`.
[[nodiscard]] std::vector<tensor_input> tensor_inputs(const op_call& call);

} // namespace tdiag::dtensor
