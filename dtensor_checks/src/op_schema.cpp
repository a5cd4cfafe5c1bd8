// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/op_schema.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor {

std::string_view to_string(arg_kind kind) noexcept {
  switch (kind) {
  case arg_kind::tensor:
    return "tensor";
  case arg_kind::tensors:
    return "tensors";
  case arg_kind::int_value:
    return "int";
  case arg_kind::ints:
    return "ints";
  case arg_kind::float_value:
    return "float";
  case arg_kind::bool_value:
    return "bool";
  case arg_kind::none:
    return "none";
  case arg_kind::string_value:
    return "str";
  }
  return "none";
}

op_arg op_arg::of(tensor_spec spec) {
  op_arg a;
  a.kind = arg_kind::tensor;
  a.tensor = std::move(spec);
  return a;
}
op_arg op_arg::of(std::vector<tensor_spec> specs) {
  op_arg a;
  a.kind = arg_kind::tensors;
  a.tensors = std::move(specs);
  return a;
}
op_arg op_arg::of_int(std::int64_t v) {
  op_arg a;
  a.kind = arg_kind::int_value;
  a.int_value = v;
  return a;
}
op_arg op_arg::of_ints(std::vector<std::int64_t> v) {
  op_arg a;
  a.kind = arg_kind::ints;
  a.ints = std::move(v);
  return a;
}
op_arg op_arg::of_float(double v) {
  op_arg a;
  a.kind = arg_kind::float_value;
  a.float_value = v;
  return a;
}
op_arg op_arg::of_bool(bool v) {
  op_arg a;
  a.kind = arg_kind::bool_value;
  a.int_value = v ? 1 : 0;
  return a;
}
op_arg op_arg::of_string(std::string v) {
  op_arg a;
  a.kind = arg_kind::string_value;
  a.text = std::move(v);
  return a;
}

std::string to_string(const op_arg& arg) {
  switch (arg.kind) {
  case arg_kind::tensor:
    return to_string(arg.tensor);
  case arg_kind::tensors: {
    std::string out = "[";
    for (std::size_t i = 0; i < arg.tensors.size(); ++i) {
      if (i)
        out += "; ";
      out += to_string(arg.tensors[i]);
    }
    return out + "]";
  }
  case arg_kind::int_value:
    return fmt::format("{}", arg.int_value);
  case arg_kind::ints:
    return fmt::format("[{}]", fmt::join(arg.ints, ", "));
  case arg_kind::float_value:
    return fmt::format("{}", arg.float_value);
  case arg_kind::bool_value:
    return arg.int_value ? "True" : "False";
  case arg_kind::none:
    return "None";
  case arg_kind::string_value:
    return fmt::format("'{}'", arg.text);
  }
  return "None";
}

std::string to_torch_string(const op_arg& arg) {
  switch (arg.kind) {
  case arg_kind::tensor:
    return to_torch_string(arg.tensor);
  case arg_kind::tensors: {
    std::string out = "[";
    for (std::size_t i = 0; i < arg.tensors.size(); ++i) {
      if (i)
        out += ", ";
      out += to_torch_string(arg.tensors[i]);
    }
    return out + "]";
  }
  default:
    return to_string(arg);
  }
}

std::vector<tensor_input> tensor_inputs(const op_call& call) {
  std::vector<tensor_input> out;
  for (std::size_t i = 0; i < call.args.size(); ++i) {
    const auto& a = call.args[i];
    if (a.kind == arg_kind::tensor) {
      out.push_back({&a.tensor, i, 0, false});
    } else if (a.kind == arg_kind::tensors) {
      for (std::size_t j = 0; j < a.tensors.size(); ++j)
        out.push_back({&a.tensors[j], i, j, true});
    }
  }
  return out;
}

} // namespace tdiag::dtensor
