// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reference reductions and normalisations: sum, sum.dim_IntList, mean.dim, amax, max.dim,
// _softmax, _log_softmax and native_layer_norm. An empty local group reduces to the identity of
// the reduction (0, -inf) so a Partial over an empty shard still reduces correctly; mean gives NaN
// as torch does.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "tensor_math.hpp"

namespace tdiag::dtensor::sim::detail {
namespace {

std::vector<bool> dims_flags(std::string_view op, const dense_tensor& t,
                             const std::vector<std::int64_t>& dims) {
  std::vector<bool> reduced(t.ndim(), dims.empty());
  for (auto d : dims) {
    const auto w = wrap_dim(op, d, static_cast<std::int64_t>(t.ndim()));
    if (t.ndim() > 0)
      reduced[static_cast<std::size_t>(w)] = true;
  }
  return reduced;
}

const auto plus = [](double a, double b) { return a + b; };
const auto keep = [](double a, std::int64_t) { return a; };
const auto larger = [](double a, double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
};

std::vector<dense_tensor> sum_all(const sim_args& args) {
  const auto& self = tensor_arg("sum", args, 0);
  return {
      reduce_dims(self, std::vector<bool>(self.ndim(), true), false, self.type(), plus, keep, 0.0)};
}

std::vector<dense_tensor> sum_dims(const sim_args& args) {
  const auto& self = tensor_arg("sum", args, 0);
  const auto reduced = dims_flags("sum", self, ints_arg("sum", args, 1));
  return {
      reduce_dims(self, reduced, bool_arg("sum", args, 2, false), self.type(), plus, keep, 0.0)};
}

std::vector<dense_tensor> mean_dims(const sim_args& args) {
  const auto& self = tensor_arg("mean", args, 0);
  const auto reduced = dims_flags("mean", self, ints_arg("mean", args, 1));
  return {reduce_dims(
      self, reduced, bool_arg("mean", args, 2, false), self.type(), plus,
      [](double a, std::int64_t n) { return a / static_cast<double>(n); },
      std::numeric_limits<double>::quiet_NaN())};
}

std::vector<dense_tensor> amax_dims(const sim_args& args) {
  const auto& self = tensor_arg("amax", args, 0);
  const auto reduced = dims_flags("amax", self, ints_arg("amax", args, 1));
  return {reduce_dims(self, reduced, bool_arg("amax", args, 2, false), self.type(), larger, keep,
                      -std::numeric_limits<double>::infinity())};
}

// (values, indices) with the first index of the maximum, as torch.max(dim) returns on CPU.
std::vector<dense_tensor> max_dim(const sim_args& args) {
  const auto& self = tensor_arg("max.dim", args, 0);
  const auto nd = static_cast<std::int64_t>(self.ndim());
  const auto dim =
      static_cast<std::size_t>(wrap_dim("max.dim", int_arg("max.dim", args, 1, 0), nd));
  const bool keepdim = bool_arg("max.dim", args, 2, false);
  if (nd == 0)
    return {self.clone(), dense_tensor::scalar(0, dtype::int64)};
  shape_t kept = self.shape();
  kept[dim] = 1;
  dense_tensor values(kept, self.type());
  dense_tensor indices(kept, dtype::int64);
  for_each_index(kept, [&](const shape_t& at) {
    double best = -std::numeric_limits<double>::infinity();
    std::int64_t best_i = 0;
    auto idx = at;
    for (std::int64_t i = 0; i < self.shape()[dim]; ++i) {
      idx[dim] = i;
      const double v = self.at(idx);
      if (std::isnan(v) || v > best) {
        best = v;
        best_i = i;
        if (std::isnan(v))
          break;
      }
    }
    values.set(at, best);
    indices.set(at, static_cast<double>(best_i));
  });
  if (keepdim)
    return {values, indices};
  shape_t squeezed = self.shape();
  squeezed.erase(squeezed.begin() + static_cast<std::ptrdiff_t>(dim));
  return {values.view(squeezed), indices.view(squeezed)};
}

std::vector<dense_tensor> softmax(const sim_args& args, bool log) {
  const char* name = log ? "_log_softmax" : "_softmax";
  const auto& self = tensor_arg(name, args, 0);
  const auto nd = static_cast<std::int64_t>(self.ndim());
  const auto dim = static_cast<std::size_t>(wrap_dim(name, int_arg(name, args, 1, 0), nd));
  dense_tensor out(self.shape(), self.type());
  if (nd == 0) {
    out.set({}, log ? 0.0 : 1.0);
    return {out};
  }
  shape_t kept = self.shape();
  kept[dim] = 1;
  for_each_index(kept, [&](const shape_t& at) {
    auto idx = at;
    double mx = -std::numeric_limits<double>::infinity();
    for (std::int64_t i = 0; i < self.shape()[dim]; ++i) {
      idx[dim] = i;
      mx = std::max(mx, self.at(idx));
    }
    double total = 0.0;
    for (std::int64_t i = 0; i < self.shape()[dim]; ++i) {
      idx[dim] = i;
      total += std::exp(self.at(idx) - mx);
    }
    for (std::int64_t i = 0; i < self.shape()[dim]; ++i) {
      idx[dim] = i;
      const double z = self.at(idx) - mx;
      out.set(idx, log ? z - std::log(total) : std::exp(z) / total);
    }
  });
  return {out};
}

// (out, mean, rstd) over the trailing dims named by normalized_shape.
std::vector<dense_tensor> layer_norm(const sim_args& args) {
  constexpr std::string_view name = "native_layer_norm";
  const auto& x = tensor_arg(name, args, 0);
  const auto normalized = ints_arg(name, args, 1);
  if (normalized.size() > x.ndim())
    bad_args(name, "normalized_shape has more dims than the input");
  const auto axis = x.ndim() - normalized.size();
  for (std::size_t i = 0; i < normalized.size(); ++i) {
    if (normalized[i] != x.shape()[axis + i]) {
      bad_args(name, fmt::format("normalized_shape [{}] does not match the trailing dims of {}",
                                 fmt::join(normalized, ", "), to_string(x.shape())));
    }
  }
  const double eps = number_arg(name, args, 4, 1e-5);
  std::vector<bool> reduced(x.ndim(), false);
  for (std::size_t d = axis; d < x.ndim(); ++d)
    reduced[d] = true;
  const auto mean_fn = [](double a, std::int64_t n) { return a / static_cast<double>(n); };
  const auto mean = reduce_dims(x, reduced, true, dtype::float64, plus, mean_fn, NAN);
  const auto centered = map_binary(name, x.to(dtype::float64), mean, dtype::float64,
                                   [](double a, double m) { return a - m; });
  const auto sq = map_unary(centered, dtype::float64, [](double v) { return v * v; });
  const auto var = reduce_dims(sq, reduced, true, dtype::float64, plus, mean_fn, NAN);
  const auto rstd =
      map_unary(var, dtype::float64, [eps](double v) { return 1.0 / std::sqrt(v + eps); });
  auto out = map_binary(name, centered, rstd, x.type(), [](double c, double r) { return c * r; });
  if (has_arg(args, 2)) {
    out = map_binary(name, out, tensor_arg(name, args, 2), x.type(),
                     [](double a, double w) { return a * w; });
  }
  if (has_arg(args, 3)) {
    out = map_binary(name, out, tensor_arg(name, args, 3), x.type(),
                     [](double a, double b) { return a + b; });
  }
  return {out, mean.to(x.type()), rstd.to(x.type())};
}

} // namespace

void add_reduction_references(reference_registry& r) {
  r.add({"aten.sum.default", sum_all, {}, {}});
  r.add({"aten.sum.dim_IntList", sum_dims, {}, {}});
  r.add({"aten.mean.dim", mean_dims, {}, {}});
  r.add({"aten.amax.default", amax_dims, {}, {}});
  r.add({"aten.max.dim", max_dim, {}, {}});
  r.add({"aten._softmax.default", [](const sim_args& a) { return softmax(a, false); }, {}, {}});
  r.add({"aten._log_softmax.default", [](const sim_args& a) { return softmax(a, true); }, {}, {}});
  // A rank normalises over its local trailing dims, so normalized_shape follows the local shape.
  r.add({"aten.native_layer_norm.default",
         layer_norm,
         [](const sim_args& local, const local_context&) {
           auto args = local;
           const auto& x = tensor_arg("native_layer_norm", args, 0);
           auto normalized = ints_arg("native_layer_norm", args, 1);
           if (normalized.size() <= x.ndim()) {
             for (std::size_t i = 0; i < normalized.size(); ++i) {
               normalized[i] = x.shape()[x.ndim() - normalized.size() + i];
             }
             args[1] = sim_arg::of_ints(normalized);
           }
           return layer_norm(args);
         },
         {}});
}

} // namespace tdiag::dtensor::sim::detail
