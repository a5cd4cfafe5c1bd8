// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reference view and data-movement ops: view, transpose.int, permute, t, unsqueeze, squeeze.dim,
// expand, cat, split.Tensor and embedding. Views share storage as torch's do.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "tensor_math.hpp"

namespace tdiag::dtensor::sim::detail {
namespace {

shape_t infer_size(std::string_view op, std::vector<std::int64_t> sizes, std::int64_t numel_in) {
  std::int64_t known = 1;
  std::ptrdiff_t infer = -1;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0)
        bad_args(op, "only one dimension can be inferred");
      infer = static_cast<std::ptrdiff_t>(i);
    } else {
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel_in % known != 0)
      bad_args(op, fmt::format("shape '[{}]' is invalid for input of size {}",
                               fmt::join(sizes, ", "), numel_in));
    sizes[static_cast<std::size_t>(infer)] = numel_in / known;
  }
  return sizes;
}

std::vector<dense_tensor> view_ref(const sim_args& args) {
  const auto& self = tensor_arg("view", args, 0);
  return {self.view(infer_size("view", ints_arg("view", args, 1), self.numel()))};
}

dense_tensor permuted(std::string_view op, const dense_tensor& self,
                      const std::vector<std::int64_t>& dims) {
  const auto nd = static_cast<std::int64_t>(self.ndim());
  if (static_cast<std::int64_t>(dims.size()) != nd)
    bad_args(op, "permutation has the wrong length");
  shape_t shape;
  shape_t strides;
  std::vector<bool> seen(self.ndim(), false);
  for (auto d : dims) {
    const auto w = static_cast<std::size_t>(wrap_dim(op, d, nd));
    if (seen[w])
      bad_args(op, "repeated dim in permutation");
    seen[w] = true;
    shape.push_back(self.shape()[w]);
    strides.push_back(self.strides()[w]);
  }
  return self.as_strided(shape, strides, self.storage_offset());
}

dense_tensor transposed(std::string_view op, const dense_tensor& self, std::int64_t a,
                        std::int64_t b) {
  const auto nd = static_cast<std::int64_t>(self.ndim());
  if (nd == 0)
    return self;
  std::vector<std::int64_t> dims(self.ndim());
  std::iota(dims.begin(), dims.end(), 0);
  std::swap(dims[static_cast<std::size_t>(wrap_dim(op, a, nd))],
            dims[static_cast<std::size_t>(wrap_dim(op, b, nd))]);
  return permuted(op, self, dims);
}

std::vector<dense_tensor> unsqueeze_ref(const sim_args& args) {
  const auto& self = tensor_arg("unsqueeze", args, 0);
  const auto nd = static_cast<std::int64_t>(self.ndim());
  auto d = int_arg("unsqueeze", args, 1, 0);
  if (d < -(nd + 1) || d > nd)
    bad_args("unsqueeze", fmt::format("dim {} out of range", d));
  if (d < 0)
    d += nd + 1;
  auto shape = self.shape();
  auto strides = self.strides();
  const auto at = static_cast<std::size_t>(d);
  const std::int64_t stride = at < shape.size() ? shape[at] * strides[at] : 1;
  shape.insert(shape.begin() + d, 1);
  strides.insert(strides.begin() + d, stride);
  return {self.as_strided(shape, strides, self.storage_offset())};
}

std::vector<dense_tensor> squeeze_ref(const sim_args& args) {
  const auto& self = tensor_arg("squeeze", args, 0);
  if (self.ndim() == 0)
    return {self};
  const auto d = static_cast<std::size_t>(
      wrap_dim("squeeze", int_arg("squeeze", args, 1, 0), static_cast<std::int64_t>(self.ndim())));
  if (self.shape()[d] != 1)
    return {self};
  auto shape = self.shape();
  auto strides = self.strides();
  shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(d));
  strides.erase(strides.begin() + static_cast<std::ptrdiff_t>(d));
  return {self.as_strided(shape, strides, self.storage_offset())};
}

std::vector<dense_tensor> expand_ref(const sim_args& args) {
  const auto& self = tensor_arg("expand", args, 0);
  auto sizes = ints_arg("expand", args, 1);
  if (sizes.size() < self.ndim())
    bad_args("expand", "fewer sizes than dims");
  const auto lead = sizes.size() - self.ndim();
  for (std::size_t d = 0; d < self.ndim(); ++d) {
    if (sizes[lead + d] == -1)
      sizes[lead + d] = self.shape()[d];
  }
  return {broadcast_to("expand", self, sizes)};
}

std::vector<dense_tensor> cat_ref(const sim_args& args) {
  if (args.empty() || args[0].kind != arg_kind::tensors || args[0].tensors.empty()) {
    bad_args("cat", "arg 0 must be a non-empty list of tensors");
  }
  const auto& ts = args[0].tensors;
  const auto& first = ts.front();
  const auto dim = static_cast<std::size_t>(
      wrap_dim("cat", int_arg("cat", args, 1, 0), static_cast<std::int64_t>(first.ndim())));
  shape_t shape = first.shape();
  shape[dim] = 0;
  dtype type = first.type();
  for (const auto& t : ts) {
    if (t.ndim() != first.ndim())
      bad_args("cat", "tensors must have the same number of dims");
    for (std::size_t d = 0; d < t.ndim(); ++d) {
      if (d != dim && t.shape()[d] != first.shape()[d]) {
        bad_args("cat", fmt::format("sizes of tensors must match except in dimension {}: {} vs {}",
                                    dim, to_string(first.shape()), to_string(t.shape())));
      }
    }
    shape[dim] += t.shape()[dim];
    type = promote(type, t.type());
  }
  dense_tensor out(shape, type);
  std::int64_t at = 0;
  for (const auto& t : ts) {
    for_each_index(t.shape(), [&](const shape_t& idx) {
      auto o = idx;
      o[dim] += at;
      out.set(o, t.at(idx));
    });
    at += t.shape()[dim];
  }
  return {out};
}

std::vector<dense_tensor> split_ref(const sim_args& args) {
  const auto& self = tensor_arg("split", args, 0);
  const auto size = int_arg("split", args, 1, 1);
  if (size <= 0)
    bad_args("split", "split_size must be positive");
  const auto dim =
      wrap_dim("split", int_arg("split", args, 2, 0), static_cast<std::int64_t>(self.ndim()));
  const auto n = self.shape()[static_cast<std::size_t>(dim)];
  std::vector<dense_tensor> out;
  for (std::int64_t start = 0; start < n || (n == 0 && out.empty()); start += size) {
    out.push_back(self.narrow(dim, start, std::min(size, n - start)));
  }
  return out;
}

// Rows outside [row_begin, row_begin + row_count) of the full table give zeros: a rank holding a
// row shard of the weight returns only its rows, the masked partial that a sum reduces.
dense_tensor embedding(const dense_tensor& weight, const dense_tensor& indices,
                       std::int64_t row_begin, std::int64_t row_count) {
  if (weight.ndim() != 2)
    bad_args("embedding", "weight must be 2-D");
  if (indices.is_floating())
    bad_args("embedding", "indices must be int64");
  shape_t shape = indices.shape();
  shape.push_back(weight.shape()[1]);
  dense_tensor out(shape, weight.type());
  for_each_index(indices.shape(), [&](const shape_t& idx) {
    const auto row = static_cast<std::int64_t>(indices.at(idx)) - row_begin;
    if (row < 0 || row >= row_count)
      return;
    if (row >= weight.shape()[0])
      bad_args("embedding", fmt::format("index {} out of range", row + row_begin));
    auto o = idx;
    o.push_back(0);
    for (std::int64_t j = 0; j < weight.shape()[1]; ++j) {
      o.back() = j;
      out.set(o, weight.at({row, j}));
    }
  });
  return out;
}

// The local output shape a rank must produce, from the claimed output placements.
shape_t local_output_shape(const local_context& ctx) {
  return local_shape_and_offset(ctx.outputs.at(0), ctx.mesh, ctx.mesh.coordinate(ctx.rank)).shape;
}

} // namespace

void add_shape_references(reference_registry& r) {
  // DTensor computes the local sizes of view and expand from the output spec.
  const auto local_sizes = [](reference_fn f) {
    return [f = std::move(f)](const sim_args& local, const local_context& ctx) {
      auto args = local;
      args[1] = sim_arg::of_ints(local_output_shape(ctx));
      return f(args);
    };
  };
  r.add({"aten.view.default", view_ref, local_sizes(view_ref), {}});
  r.add({"aten.expand.default", expand_ref, local_sizes(expand_ref), {}});
  r.add({"aten.transpose.int",
         [](const sim_args& a) {
           return std::vector<dense_tensor>{transposed("transpose", tensor_arg("transpose", a, 0),
                                                       int_arg("transpose", a, 1, 0),
                                                       int_arg("transpose", a, 2, 1))};
         },
         {},
         {}});
  r.add({"aten.t.default",
         [](const sim_args& a) {
           const auto& self = tensor_arg("t", a, 0);
           if (self.ndim() > 2)
             bad_args("t", "expects a tensor with <= 2 dims");
           return std::vector<dense_tensor>{self.ndim() < 2 ? self : transposed("t", self, 0, 1)};
         },
         {},
         {}});
  r.add({"aten.permute.default",
         [](const sim_args& a) {
           return std::vector<dense_tensor>{
               permuted("permute", tensor_arg("permute", a, 0), ints_arg("permute", a, 1))};
         },
         {},
         {}});
  r.add({"aten.unsqueeze.default", unsqueeze_ref, {}, {}});
  r.add({"aten.squeeze.dim", squeeze_ref, {}, {}});
  r.add({"aten.cat.default", cat_ref, {}, {}});
  r.add({"aten.split.Tensor", split_ref, {}, {}});
  r.add({"aten.embedding.default",
         [](const sim_args& a) {
           const auto& w = tensor_arg("embedding", a, 0);
           return std::vector<dense_tensor>{
               embedding(w, tensor_arg("embedding", a, 1), 0, w.ndim() ? w.shape()[0] : 0)};
         },
         [](const sim_args& a, const local_context& ctx) {
           const auto& w = tensor_arg("embedding", a, 0);
           const auto view =
               local_shape_and_offset(ctx.inputs.at(0), ctx.mesh, ctx.mesh.coordinate(ctx.rank));
           const auto begin = view.offset.empty() ? 0 : view.offset[0];
           return std::vector<dense_tensor>{
               embedding(w, tensor_arg("embedding", a, 1), begin, w.ndim() ? w.shape()[0] : 0)};
         },
         [](sim_args& a, std::mt19937_64& rng) {
           const auto rows = tensor_arg("embedding", a, 0).ndim() ? a[0].tensor.shape()[0] : 1;
           std::uniform_int_distribution<std::int64_t> pick(0, std::max<std::int64_t>(rows - 1, 0));
           auto& idx = a.at(1).tensor;
           for (std::int64_t i = 0; i < idx.numel(); ++i)
             idx.set_flat(i, static_cast<double>(pick(rng)));
         }});
}

} // namespace tdiag::dtensor::sim::detail
