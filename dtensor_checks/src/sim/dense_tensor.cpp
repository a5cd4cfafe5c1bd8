// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <cmath>

namespace tdiag::dtensor::sim {

namespace codes = validation_codes;

double round_to(dtype type, double v) noexcept {
  switch (type) {
  case dtype::float32:
    return static_cast<double>(static_cast<float>(v));
  case dtype::int64:
    return std::isfinite(v) ? std::trunc(v) : 0.0;
  default:
    return v;
  }
}

void for_each_index(const shape_t& shape, const std::function<void(const shape_t&)>& fn) {
  const auto n = numel(shape);
  if (n == 0)
    return;
  shape_t index(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    fn(index);
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
}

dense_tensor::dense_tensor(shape_t shape, dtype type) : shape_(std::move(shape)), type_(type) {
  if (type != dtype::float32 && type != dtype::float64 && type != dtype::int64) {
    throw_input_error(
        codes::tensor_misuse, "unsupported dtype",
        fmt::format("the simulated mesh holds float32, float64 and int64 tensors, not {}",
                    to_string(type)),
        "convert the tensor to float32, float64 or int64");
  }
  for (auto s : shape_) {
    if (s < 0)
      throw_input_error(codes::tensor_misuse, "negative size",
                        fmt::format("shape {} has a negative size", to_string(shape_)));
  }
  strides_ = contiguous_strides(shape_);
  storage_ =
      std::make_shared<std::vector<double>>(static_cast<std::size_t>(dtensor::numel(shape_)), 0.0);
}

dense_tensor dense_tensor::from_values(shape_t shape, dtype type,
                                       const std::vector<double>& values) {
  dense_tensor t(std::move(shape), type);
  if (static_cast<std::int64_t>(values.size()) != t.numel()) {
    throw_input_error(codes::tensor_misuse, "wrong element count",
                      fmt::format("{} values given for shape {} ({} elements)", values.size(),
                                  to_string(t.shape_), t.numel()));
  }
  for (std::size_t i = 0; i < values.size(); ++i)
    (*t.storage_)[i] = round_to(type, values[i]);
  return t;
}

dense_tensor dense_tensor::scalar(double v, dtype type) {
  return from_values({}, type, {v});
}

std::int64_t dense_tensor::numel() const noexcept {
  return dtensor::numel(shape_);
}

std::int64_t dense_tensor::size(std::int64_t dim) const {
  const auto n = static_cast<std::int64_t>(shape_.size());
  if (dim < -n || dim >= n) {
    throw_input_error(codes::tensor_misuse, "dim out of range",
                      fmt::format("dim {} is out of range for a {}-D tensor", dim, n));
  }
  return shape_[static_cast<std::size_t>(dim < 0 ? dim + n : dim)];
}

bool dense_tensor::is_contiguous() const noexcept {
  if (numel() == 0)
    return true; // as torch: an empty tensor is contiguous
  std::int64_t expected = 1;
  for (std::size_t d = shape_.size(); d-- > 0;) {
    if (shape_[d] != 1 && strides_[d] != expected)
      return false;
    expected *= shape_[d];
  }
  return true;
}

std::int64_t dense_tensor::storage_index(const shape_t& index) const {
  if (index.size() != shape_.size()) {
    throw_input_error(
        codes::tensor_misuse, "wrong index rank",
        fmt::format("index of {} dims for a {}-D tensor", index.size(), shape_.size()));
  }
  std::int64_t at = offset_;
  for (std::size_t d = 0; d < index.size(); ++d) {
    if (index[d] < 0 || index[d] >= shape_[d]) {
      throw_input_error(
          codes::tensor_misuse, "index out of range",
          fmt::format("index {} is outside shape {}", to_string(index), to_string(shape_)));
    }
    at += index[d] * strides_[d];
  }
  return at;
}

std::int64_t dense_tensor::storage_index_flat(std::int64_t i) const {
  std::int64_t at = offset_;
  for (std::size_t d = shape_.size(); d-- > 0;) {
    const auto s = shape_[d];
    at += (i % s) * strides_[d];
    i /= s;
  }
  return at;
}

double dense_tensor::at(const shape_t& index) const {
  return (*storage_)[static_cast<std::size_t>(storage_index(index))];
}

double dense_tensor::flat(std::int64_t i) const {
  return (*storage_)[static_cast<std::size_t>(storage_index_flat(i))];
}

void dense_tensor::set(const shape_t& index, double v) {
  (*storage_)[static_cast<std::size_t>(storage_index(index))] = round_to(type_, v);
}

void dense_tensor::set_flat(std::int64_t i, double v) {
  (*storage_)[static_cast<std::size_t>(storage_index_flat(i))] = round_to(type_, v);
}

std::vector<double> dense_tensor::values() const {
  std::vector<double> out(static_cast<std::size_t>(numel()));
  for (std::int64_t i = 0; i < numel(); ++i)
    out[static_cast<std::size_t>(i)] = flat(i);
  return out;
}

dense_tensor dense_tensor::clone() const {
  return from_values(shape_, type_, values());
}

dense_tensor dense_tensor::contiguous() const {
  return is_contiguous() ? *this : clone();
}

dense_tensor dense_tensor::to(dtype type) const {
  return from_values(shape_, type, values());
}

dense_tensor dense_tensor::as_strided(shape_t shape, shape_t strides, std::int64_t offset) const {
  if (shape.size() != strides.size()) {
    throw_input_error(codes::tensor_misuse, "bad view", "shape and strides differ in length");
  }
  std::int64_t lo = offset;
  std::int64_t hi = offset;
  bool empty = false;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0)
      empty = true;
    if (shape[d] < 0)
      throw_input_error(codes::tensor_misuse, "bad view", "negative size in a view");
    const auto reach = (shape[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  const auto storage_size = static_cast<std::int64_t>(storage_ ? storage_->size() : 0);
  if (!empty && (lo < 0 || hi >= storage_size)) {
    throw_input_error(
        codes::tensor_misuse, "view outside storage",
        fmt::format(
            "a view of shape {} strides {} at offset {} reaches outside a storage of {} elements",
            to_string(shape), to_string(strides), offset, storage_size));
  }
  dense_tensor t = *this;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

dense_tensor dense_tensor::narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const {
  const auto d = static_cast<std::size_t>(dim);
  if (dim < 0 || d >= shape_.size() || start < 0 || length < 0 || start + length > shape_[d]) {
    throw_input_error(codes::tensor_misuse, "narrow out of range",
                      fmt::format("narrow(dim={}, start={}, length={}) on shape {}", dim, start,
                                  length, to_string(shape_)));
  }
  auto shape = shape_;
  shape[d] = length;
  return as_strided(std::move(shape), strides_, offset_ + (length > 0 ? start * strides_[d] : 0));
}

dense_tensor dense_tensor::view(const shape_t& shape) const {
  if (dtensor::numel(shape) != numel()) {
    throw_input_error(
        codes::tensor_misuse, "view size mismatch",
        fmt::format("shape {} is invalid for input of size {}", to_string(shape), numel()));
  }
  if (is_contiguous())
    return as_strided(shape, contiguous_strides(shape), offset_);
  // torch's computeStride: each run of input dims that is contiguous in memory may be regrouped.
  shape_t strides(shape.size(), 0);
  std::int64_t view_d = static_cast<std::int64_t>(shape.size()) - 1;
  std::int64_t chunk_base_stride = strides_.empty() ? 1 : strides_.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (std::int64_t td = static_cast<std::int64_t>(shape_.size()) - 1; td >= 0; --td) {
    tensor_numel *= shape_[static_cast<std::size_t>(td)];
    if (td == 0 ||
        (shape_[static_cast<std::size_t>(td - 1)] != 1 &&
         strides_[static_cast<std::size_t>(td - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || shape[static_cast<std::size_t>(view_d)] == 1)) {
        strides[static_cast<std::size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= shape[static_cast<std::size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) {
        throw_input_error(
            codes::tensor_misuse, "view of non-contiguous data",
            fmt::format(
                "view size {} is not compatible with input tensor's size {} and stride {}; use "
                "reshape instead",
                to_string(shape), to_string(shape_), to_string(strides_)));
      }
      if (td > 0) {
        chunk_base_stride = strides_[static_cast<std::size_t>(td - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return as_strided(shape, std::move(strides), offset_);
}

bool all_close(const dense_tensor& a, const dense_tensor& b, double rtol, double atol) {
  if (a.shape() != b.shape())
    return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.flat(i);
    const double y = b.flat(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y))
        return false;
      continue;
    }
    if (x == y)
      continue;
    if (!(std::abs(x - y) <= atol + rtol * std::abs(y)))
      return false;
  }
  return true;
}

} // namespace tdiag::dtensor::sim
