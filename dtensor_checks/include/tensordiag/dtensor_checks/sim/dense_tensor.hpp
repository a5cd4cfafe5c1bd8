// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A small dense CPU tensor for the simulated mesh: shape, strides, storage offset and a dtype
// (float32, float64 or int64). Elements are held as double and rounded to the dtype on every
// store, so float32 arithmetic rounds as a float32 kernel would and int64 stays exact below 2^53.
#pragma once

#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace tdiag::dtensor::sim {

/// Rounds `v` to what a tensor of `type` can hold (float32: nearest float; int64: truncation).
[[nodiscard]] double round_to(dtype type, double v) noexcept;

/// Calls `fn(index)` for every multi-index of `shape` in row-major order.
void for_each_index(const shape_t& shape, const std::function<void(const shape_t&)>& fn);

class dense_tensor {
public:
  dense_tensor() = default;
  /// A contiguous zero tensor. Throws tdiag::input_error for a dtype other than float32, float64
  /// or int64, or a negative size.
  dense_tensor(shape_t shape, dtype type);
  /// A contiguous tensor holding `values` (row-major, rounded to `type`); throws
  /// tdiag::input_error when the count does not match the shape.
  [[nodiscard]] static dense_tensor from_values(shape_t shape, dtype type,
                                                const std::vector<double>& values);
  /// A 0-d tensor.
  [[nodiscard]] static dense_tensor scalar(double v, dtype type = dtype::float64);

  [[nodiscard]] const shape_t& shape() const noexcept { return shape_; }
  [[nodiscard]] const shape_t& strides() const noexcept { return strides_; }
  [[nodiscard]] std::int64_t storage_offset() const noexcept { return offset_; }
  [[nodiscard]] dtype type() const noexcept { return type_; }
  [[nodiscard]] std::size_t ndim() const noexcept { return shape_.size(); }
  [[nodiscard]] std::int64_t numel() const noexcept;
  [[nodiscard]] std::int64_t size(std::int64_t dim) const;
  [[nodiscard]] bool is_contiguous() const noexcept;
  [[nodiscard]] bool is_floating() const noexcept { return type_ != dtype::int64; }

  /// Element at a multi-index (bounds-checked; throws tdiag::input_error).
  [[nodiscard]] double at(const shape_t& index) const;
  /// Element at a row-major logical position 0 <= i < numel().
  [[nodiscard]] double flat(std::int64_t i) const;
  /// Stores at a multi-index, rounding to the dtype. Writes through views.
  void set(const shape_t& index, double v);
  void set_flat(std::int64_t i, double v);

  /// The elements in row-major logical order.
  [[nodiscard]] std::vector<double> values() const;
  /// A contiguous copy (always a new storage).
  [[nodiscard]] dense_tensor clone() const;
  /// This tensor when contiguous, else a contiguous copy.
  [[nodiscard]] dense_tensor contiguous() const;
  /// A copy converted to `type`.
  [[nodiscard]] dense_tensor to(dtype type) const;
  /// A view sharing storage. Throws tdiag::input_error when it reaches outside the storage.
  [[nodiscard]] dense_tensor as_strided(shape_t shape, shape_t strides, std::int64_t offset) const;
  /// The elements [start, start+length) of `dim`, a view.
  [[nodiscard]] dense_tensor narrow(std::int64_t dim, std::int64_t start,
                                    std::int64_t length) const;
  /// A row-major reshape sharing storage when the strides allow it (torch's view rules);
  /// throws tdiag::input_error otherwise or when the element counts differ.
  [[nodiscard]] dense_tensor view(const shape_t& shape) const;

private:
  [[nodiscard]] std::int64_t storage_index(const shape_t& index) const;
  [[nodiscard]] std::int64_t storage_index_flat(std::int64_t i) const;

  std::shared_ptr<std::vector<double>> storage_;
  shape_t shape_;
  shape_t strides_;
  std::int64_t offset_ = 0;
  dtype type_ = dtype::float32;
};

/// True when both have the same shape and every element pair satisfies
/// |a - b| <= atol + rtol * |b| (NaNs equal NaNs at the same position).
[[nodiscard]] bool all_close(const dense_tensor& a, const dense_tensor& b, double rtol,
                             double atol);

} // namespace tdiag::dtensor::sim
