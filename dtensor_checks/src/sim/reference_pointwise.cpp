// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reference pointwise and matrix ops: add, sub, mul, div, maximum (tensor or scalar other), relu,
// neg, exp, tanh, gelu, clone, the in-place add_, mul_, relu_, copy_, and mm, bmm, addmm.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tensor_math.hpp"

namespace tdiag::dtensor::sim::detail {
namespace {

using binary = std::function<double(double, double)>;

// `other` as a tensor: a tensor arg as is, a Python scalar as a 0-d tensor of the promoted type.
dense_tensor other_operand(std::string_view op, const sim_args& args, const dense_tensor& self) {
  if (args.size() > 1 && args[1].kind == arg_kind::tensor)
    return args[1].tensor;
  const bool is_float = args.size() > 1 && args[1].kind == arg_kind::float_value;
  const auto type = self.is_floating() ? self.type() : (is_float ? dtype::float32 : dtype::int64);
  return dense_tensor::scalar(number_arg(op, args, 1, 0.0), type);
}

reference_fn binary_op(std::string name, binary f, bool inplace, bool uses_alpha,
                       bool true_divide = false) {
  return [name = std::move(name), f = std::move(f), inplace, uses_alpha,
          true_divide](const sim_args& args) {
    const auto& self = tensor_arg(name, args, 0);
    const auto other = other_operand(name, args, self);
    const double alpha = uses_alpha ? number_arg(name, args, 2, 1.0) : 1.0;
    auto type = inplace ? self.type() : promote(self.type(), other.type());
    if (true_divide && type == dtype::int64)
      type = dtype::float32;
    auto out =
        map_binary(name, self, other, type, [&](double a, double b) { return f(a, alpha * b); });
    if (inplace && out.shape() != self.shape()) {
      bad_args(name, fmt::format("output of shape {} does not match self {}",
                                 to_string(out.shape()), to_string(self.shape())));
    }
    return std::vector<dense_tensor>{out};
  };
}

reference_fn unary_op(std::string name, std::function<double(double)> f) {
  return [name = std::move(name), f = std::move(f)](const sim_args& args) {
    const auto& self = tensor_arg(name, args, 0);
    return std::vector<dense_tensor>{map_unary(self, self.type(), f)};
  };
}

double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
}

std::vector<dense_tensor> copy_ref(const sim_args& args) {
  const auto& self = tensor_arg("copy_", args, 0);
  const auto& src = tensor_arg("copy_", args, 1);
  const auto b = broadcast_to("copy_", src, self.shape());
  return {map_unary(b, self.type(), [](double v) { return v; })};
}

// (batch, m, k) x (batch, k, n); `batched` false drops the batch dim.
dense_tensor matmul(std::string_view op, const dense_tensor& a, const dense_tensor& b,
                    bool batched) {
  const std::size_t nd = batched ? 3 : 2;
  if (a.ndim() != nd || b.ndim() != nd)
    bad_args(op, fmt::format("operands must be {}-D", nd));
  const auto batch = batched ? a.shape()[0] : 1;
  if (batched && b.shape()[0] != batch)
    bad_args(op, "batch sizes differ");
  const auto m = a.shape()[nd - 2];
  const auto k = a.shape()[nd - 1];
  const auto n = b.shape()[nd - 1];
  if (b.shape()[nd - 2] != k) {
    bad_args(op, fmt::format("{} and {} cannot be multiplied", to_string(a.shape()),
                             to_string(b.shape())));
  }
  shape_t shape = batched ? shape_t{batch, m, n} : shape_t{m, n};
  dense_tensor out(shape, promote(a.type(), b.type()));
  for (std::int64_t p = 0; p < batch; ++p) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0.0;
        for (std::int64_t q = 0; q < k; ++q) {
          acc += batched ? a.at({p, i, q}) * b.at({p, q, j}) : a.at({i, q}) * b.at({q, j});
        }
        if (batched)
          out.set({p, i, j}, acc);
        else
          out.set({i, j}, acc);
      }
    }
  }
  return out;
}

std::vector<dense_tensor> addmm_ref(const sim_args& args) {
  const auto& bias = tensor_arg("addmm", args, 0);
  const auto prod =
      matmul("addmm", tensor_arg("addmm", args, 1), tensor_arg("addmm", args, 2), false);
  const double beta = number_arg("addmm", args, 3, 1.0);
  const double alpha = number_arg("addmm", args, 4, 1.0);
  const auto b = broadcast_to("addmm", bias, prod.shape());
  dense_tensor out(prod.shape(), promote(prod.type(), bias.type()));
  for (std::int64_t i = 0; i < out.numel(); ++i)
    out.set_flat(i, beta * b.flat(i) + alpha * prod.flat(i));
  return {out};
}

} // namespace

void add_pointwise_references(reference_registry& r) {
  const auto add = [](double a, double b) { return a + b; };
  const auto sub = [](double a, double b) { return a - b; };
  const auto mul = [](double a, double b) { return a * b; };
  const auto div = [](double a, double b) { return a / b; };
  const auto maximum = [](double a, double b) {
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  };
  r.add({"aten.add.Tensor", binary_op("add", add, false, true), {}, {}});
  r.add({"aten.sub.Tensor", binary_op("sub", sub, false, true), {}, {}});
  r.add({"aten.mul.Tensor", binary_op("mul", mul, false, false), {}, {}});
  r.add({"aten.div.Tensor", binary_op("div", div, false, false, true), {}, {}});
  r.add({"aten.maximum.default", binary_op("maximum", maximum, false, false), {}, {}});
  r.add({"aten.add_.Tensor", binary_op("add_", add, true, true), {}, {}});
  r.add({"aten.mul_.Tensor", binary_op("mul_", mul, true, false), {}, {}});
  const auto relu = [](double x) { return x > 0 ? x : 0.0; };
  r.add({"aten.relu.default", unary_op("relu", relu), {}, {}});
  r.add({"aten.relu_.default", unary_op("relu_", relu), {}, {}});
  r.add({"aten.neg.default", unary_op("neg", [](double x) { return -x; }), {}, {}});
  r.add({"aten.exp.default", unary_op("exp", [](double x) { return std::exp(x); }), {}, {}});
  r.add({"aten.tanh.default", unary_op("tanh", [](double x) { return std::tanh(x); }), {}, {}});
  r.add({"aten.gelu.default", unary_op("gelu", gelu), {}, {}});
  r.add({"aten.clone.default", unary_op("clone", [](double x) { return x; }), {}, {}});
  r.add({"aten.copy_.default", copy_ref, {}, {}});
  r.add({"aten.mm.default",
         [](const sim_args& a) {
           return std::vector<dense_tensor>{
               matmul("mm", tensor_arg("mm", a, 0), tensor_arg("mm", a, 1), false)};
         },
         {},
         {}});
  r.add({"aten.bmm.default",
         [](const sim_args& a) {
           return std::vector<dense_tensor>{
               matmul("bmm", tensor_arg("bmm", a, 0), tensor_arg("bmm", a, 1), true)};
         },
         {},
         {}});
  r.add({"aten.addmm.default", addmm_ref, {}, {}});
}

} // namespace tdiag::dtensor::sim::detail
