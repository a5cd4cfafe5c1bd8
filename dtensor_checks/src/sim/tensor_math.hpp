// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: the building blocks of the reference ops (argument access, broadcasting, reductions)
// and the per-family registration functions.
#pragma once

#include <tensordiag/dtensor_checks/sim/reference_ops.hpp>

#include <functional>
#include <string_view>

namespace tdiag::dtensor::sim::detail {

/// Argument access that names the op and the position when the kind is wrong.
[[nodiscard]] const dense_tensor& tensor_arg(std::string_view op, const sim_args& args,
                                             std::size_t i);
[[nodiscard]] bool has_arg(const sim_args& args, std::size_t i) noexcept;
[[nodiscard]] std::int64_t int_arg(std::string_view op, const sim_args& args, std::size_t i,
                                   std::int64_t fallback);
[[nodiscard]] std::vector<std::int64_t> ints_arg(std::string_view op, const sim_args& args,
                                                 std::size_t i);
[[nodiscard]] double number_arg(std::string_view op, const sim_args& args, std::size_t i,
                                double fallback);
[[nodiscard]] bool bool_arg(std::string_view op, const sim_args& args, std::size_t i,
                            bool fallback);
[[nodiscard]] std::int64_t wrap_dim(std::string_view op, std::int64_t dim, std::int64_t ndim);
[[noreturn]] void bad_args(std::string_view op, std::string message);

/// float64 if either is float64, else float32 if either is float32, else int64.
[[nodiscard]] dtype promote(dtype a, dtype b) noexcept;
[[nodiscard]] shape_t broadcast_shape(std::string_view op, const shape_t& a, const shape_t& b);
/// `t` expanded (stride 0) to `shape`; `t` must broadcast to it.
[[nodiscard]] dense_tensor broadcast_to(std::string_view op, const dense_tensor& t,
                                        const shape_t& shape);

[[nodiscard]] dense_tensor map_unary(const dense_tensor& a, dtype out,
                                     const std::function<double(double)>& f);
[[nodiscard]] dense_tensor map_binary(std::string_view op, const dense_tensor& a,
                                      const dense_tensor& b, dtype out,
                                      const std::function<double(double, double)>& f);

/// Reduces `a` over the dims flagged in `reduced` with `combine`, starting from the first element
/// of each group. `finish(acc, count)` maps the result (mean divides). Empty groups give `empty`.
[[nodiscard]] dense_tensor reduce_dims(const dense_tensor& a, const std::vector<bool>& reduced,
                                       bool keepdim, dtype out,
                                       const std::function<double(double, double)>& combine,
                                       const std::function<double(double, std::int64_t)>& finish,
                                       double empty);

void add_pointwise_references(reference_registry& registry);
void add_reduction_references(reference_registry& registry);
void add_shape_references(reference_registry& registry);

} // namespace tdiag::dtensor::sim::detail
