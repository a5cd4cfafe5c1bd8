// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "tensor_math.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

namespace tdiag::dtensor::sim::detail {

void bad_args(std::string_view op, std::string message) {
  tdiag::throw_input_error(validation_codes::reference_failed,
                           "reference op rejected its arguments",
                           fmt::format("{}: {}", op, message));
}

bool has_arg(const sim_args& args, std::size_t i) noexcept {
  return i < args.size() && args[i].kind != arg_kind::none;
}

const dense_tensor& tensor_arg(std::string_view op, const sim_args& args, std::size_t i) {
  if (i >= args.size() || args[i].kind != arg_kind::tensor)
    bad_args(op, fmt::format("arg {} must be a tensor", i));
  return args[i].tensor;
}

std::int64_t int_arg(std::string_view op, const sim_args& args, std::size_t i,
                     std::int64_t fallback) {
  if (!has_arg(args, i))
    return fallback;
  const auto& a = args[i];
  if (a.kind == arg_kind::int_value || a.kind == arg_kind::bool_value)
    return a.int_value;
  if (a.kind == arg_kind::ints && a.ints.size() == 1)
    return a.ints[0];
  bad_args(op, fmt::format("arg {} must be an int, got {}", i, to_string(a.kind)));
}

std::vector<std::int64_t> ints_arg(std::string_view op, const sim_args& args, std::size_t i) {
  if (!has_arg(args, i))
    return {};
  const auto& a = args[i];
  if (a.kind == arg_kind::ints)
    return a.ints;
  if (a.kind == arg_kind::int_value)
    return {a.int_value};
  bad_args(op, fmt::format("arg {} must be a list of ints, got {}", i, to_string(a.kind)));
}

double number_arg(std::string_view op, const sim_args& args, std::size_t i, double fallback) {
  if (!has_arg(args, i))
    return fallback;
  const auto& a = args[i];
  if (a.kind == arg_kind::float_value)
    return a.float_value;
  if (a.kind == arg_kind::int_value || a.kind == arg_kind::bool_value)
    return static_cast<double>(a.int_value);
  bad_args(op, fmt::format("arg {} must be a number, got {}", i, to_string(a.kind)));
}

bool bool_arg(std::string_view op, const sim_args& args, std::size_t i, bool fallback) {
  return int_arg(op, args, i, fallback ? 1 : 0) != 0;
}

std::int64_t wrap_dim(std::string_view op, std::int64_t dim, std::int64_t ndim) {
  const auto n = std::max<std::int64_t>(ndim, 1);
  if (dim < -n || dim >= n)
    bad_args(op, fmt::format("dim {} out of range for {} dims", dim, ndim));
  return dim < 0 ? dim + n : dim;
}

dtype promote(dtype a, dtype b) noexcept {
  if (a == dtype::float64 || b == dtype::float64)
    return dtype::float64;
  if (a == dtype::float32 || b == dtype::float32)
    return dtype::float32;
  return dtype::int64;
}

shape_t broadcast_shape(std::string_view op, const shape_t& a, const shape_t& b) {
  const auto n = std::max(a.size(), b.size());
  shape_t out(n, 1);
  for (std::size_t i = 1; i <= n; ++i) {
    const auto x = i <= a.size() ? a[a.size() - i] : 1;
    const auto y = i <= b.size() ? b[b.size() - i] : 1;
    if (x != y && x != 1 && y != 1) {
      bad_args(op, fmt::format("shapes {} and {} do not broadcast", to_string(a), to_string(b)));
    }
    out[n - i] = x == 1 ? y : x;
  }
  return out;
}

dense_tensor broadcast_to(std::string_view op, const dense_tensor& t, const shape_t& shape) {
  if (t.shape() == shape)
    return t;
  if (t.ndim() > shape.size())
    bad_args(op, fmt::format("cannot broadcast {} to {}", to_string(t.shape()), to_string(shape)));
  shape_t strides(shape.size(), 0);
  const auto lead = shape.size() - t.ndim();
  for (std::size_t d = 0; d < t.ndim(); ++d) {
    const auto s = t.shape()[d];
    if (s == shape[lead + d])
      strides[lead + d] = t.strides()[d];
    else if (s != 1)
      bad_args(op,
               fmt::format("cannot broadcast {} to {}", to_string(t.shape()), to_string(shape)));
  }
  return t.as_strided(shape, std::move(strides), t.storage_offset());
}

dense_tensor map_unary(const dense_tensor& a, dtype out, const std::function<double(double)>& f) {
  dense_tensor r(a.shape(), out);
  for (std::int64_t i = 0; i < a.numel(); ++i)
    r.set_flat(i, f(a.flat(i)));
  return r;
}

dense_tensor map_binary(std::string_view op, const dense_tensor& a, const dense_tensor& b,
                        dtype out, const std::function<double(double, double)>& f) {
  const auto shape = broadcast_shape(op, a.shape(), b.shape());
  const auto x = broadcast_to(op, a, shape);
  const auto y = broadcast_to(op, b, shape);
  dense_tensor r(shape, out);
  for (std::int64_t i = 0; i < r.numel(); ++i)
    r.set_flat(i, f(x.flat(i), y.flat(i)));
  return r;
}

dense_tensor reduce_dims(const dense_tensor& a, const std::vector<bool>& reduced, bool keepdim,
                         dtype out, const std::function<double(double, double)>& combine,
                         const std::function<double(double, std::int64_t)>& finish, double empty) {
  shape_t kept_shape; // with keepdim, for indexing
  shape_t result_shape;
  for (std::size_t d = 0; d < a.ndim(); ++d) {
    kept_shape.push_back(reduced[d] ? 1 : a.shape()[d]);
    if (!reduced[d])
      result_shape.push_back(a.shape()[d]);
    else if (keepdim)
      result_shape.push_back(1);
  }
  const auto groups = numel(kept_shape);
  std::vector<double> acc(static_cast<std::size_t>(groups), 0.0);
  std::vector<std::int64_t> count(static_cast<std::size_t>(groups), 0);
  const auto kept_strides = contiguous_strides(kept_shape);
  for_each_index(a.shape(), [&](const shape_t& idx) {
    std::int64_t g = 0;
    for (std::size_t d = 0; d < idx.size(); ++d)
      g += reduced[d] ? 0 : idx[d] * kept_strides[d];
    auto& c = count[static_cast<std::size_t>(g)];
    const double v = a.at(idx);
    acc[static_cast<std::size_t>(g)] = c == 0 ? v : combine(acc[static_cast<std::size_t>(g)], v);
    ++c;
  });
  std::vector<double> values(acc.size());
  for (std::size_t g = 0; g < acc.size(); ++g)
    values[g] = count[g] == 0 ? empty : finish(acc[g], count[g]);
  return dense_tensor::from_values(result_shape, out, values);
}

} // namespace tdiag::dtensor::sim::detail
