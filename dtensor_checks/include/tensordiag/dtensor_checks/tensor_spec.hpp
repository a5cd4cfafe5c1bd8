// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Tensor metadata and the DTensor spec (meta + placements), with the local shape and global
// offset of every rank under torch.chunk semantics, and the spec notation
// `f32[12,16] (S(0),P(sum))`.
#pragma once

#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/placement.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

enum class dtype : std::uint8_t {
  float32,
  float16,
  bfloat16,
  float64,
  int64,
  int32,
  int8,
  uint8,
  boolean
};

/// Bytes per element.
[[nodiscard]] std::int64_t itemsize(dtype t) noexcept;
/// The corpus name: `float32`, `int64`, ...
[[nodiscard]] std::string_view to_string(dtype t) noexcept;
/// The short name used in spec notation and by PyTorch's spec repr: `f32`, `i64`, ...
[[nodiscard]] std::string_view short_name(dtype t) noexcept;
/// Accepts both the long (`float32`, `torch.float32`) and the short (`f32`) names.
[[nodiscard]] std::optional<dtype> parse_dtype(std::string_view text) noexcept;

using shape_t = std::vector<std::int64_t>;

/// `[12, 16]`.
[[nodiscard]] std::string to_string(const shape_t& shape);
/// The product of the sizes, saturating at INT64_MAX (sizes from outside can be anything).
[[nodiscard]] std::int64_t numel(const shape_t& shape) noexcept;
/// Most elements a tensor read from outside (a case file, a --arg spec) may hold: 2^50, so that
/// sizes, strides, element and byte counts of it and of its shards never overflow.
inline constexpr std::int64_t max_numel = std::int64_t{1} << 50;
/// True when every size is non-negative and numel(shape) <= max_numel.
[[nodiscard]] bool numel_fits(const shape_t& shape) noexcept;
/// Contiguous (row-major) strides of `shape`.
[[nodiscard]] shape_t contiguous_strides(const shape_t& shape);

/// The global metadata of a tensor: shape, stride and dtype (PyTorch's TensorMeta).
struct tensor_meta {
  shape_t shape;
  shape_t stride; ///< contiguous unless given
  dtype type = dtype::float32;
  friend bool operator==(const tensor_meta&, const tensor_meta&) = default;
};

/// A DTensor's spec: its global meta and one placement per mesh dim. The mesh is carried by the
/// call (every argument of one op shares it), so specs stay small.
struct tensor_spec {
  tensor_meta meta;
  placement_list placements;

  [[nodiscard]] const shape_t& shape() const noexcept { return meta.shape; }
  [[nodiscard]] std::size_t ndim() const noexcept { return meta.shape.size(); }
  friend bool operator==(const tensor_spec&, const tensor_spec&) = default;
};

/// Product of the mesh sizes of the Shard placements (Partial counts as 1).
[[nodiscard]] std::int64_t num_shards(const device_mesh& mesh, const placement_list& ps);
/// Global bytes of the tensor (itemsize × numel).
[[nodiscard]] std::int64_t global_bytes(const tensor_meta& meta) noexcept;

/// One rank's piece of a dim of `size` split `parts` ways as torch.chunk does: every rank gets
/// ceil(size/parts) until the elements run out (uneven shards: the last ranks get less or none).
struct chunk {
  std::int64_t size = 0;
  std::int64_t offset = 0;
};
[[nodiscard]] chunk chunk_of(std::int64_t size, std::int64_t parts, std::int64_t index) noexcept;

/// The local shape and global offset of the rank at `coordinate` (one index per mesh dim):
/// shards apply per mesh dim in mesh-dim order to the current local size.
struct local_view {
  shape_t shape;
  shape_t offset;
};
[[nodiscard]] local_view local_shape_and_offset(const tensor_spec& spec, const device_mesh& mesh,
                                                const std::vector<std::int64_t>& coordinate);
/// Every rank's view, rank order.
[[nodiscard]] std::vector<local_view> local_views(const tensor_spec& spec, const device_mesh& mesh);

/// `f32[12, 16] (S(0), P(sum))`.
[[nodiscard]] std::string to_string(const tensor_spec& spec);
/// PyTorch's repr: `Spec(f32[12, 16](S(0)P(sum)))`.
[[nodiscard]] std::string to_torch_string(const tensor_spec& spec);
/// Parses `f32[12,16] (S(0),P(sum))`, `float32[4]` (all Replicate) or `f32[] (R)`;
/// `mesh_ndim` gives the number of placements when they are omitted. Throws tdiag::input_error
/// with the offending text.
[[nodiscard]] tensor_spec parse_tensor_spec(std::string_view text, std::size_t mesh_ndim);

/// Checks that `spec` fits `mesh`: one placement per mesh dim, shard dims within the tensor's
/// ndim, non-negative sizes. Throws tdiag::input_error naming `what` otherwise.
void validate_spec(const tensor_spec& spec, const device_mesh& mesh, std::string_view what);

} // namespace tdiag::dtensor
