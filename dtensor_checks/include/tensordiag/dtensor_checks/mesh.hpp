// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The device mesh: an N-D grid of ranks, row-major as torch.distributed's DeviceMesh.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// An N-D device mesh over ranks 0..N-1 laid out row-major (the last mesh dim varies fastest).
class device_mesh {
public:
  device_mesh() = default;
  /// Throws tdiag::input_error when a size is < 1 or `names` is neither empty nor one per dim.
  explicit device_mesh(std::vector<std::int64_t> shape, std::vector<std::string> names = {});

  [[nodiscard]] const std::vector<std::int64_t>& shape() const noexcept { return shape_; }
  [[nodiscard]] const std::vector<std::string>& names() const noexcept { return names_; }
  [[nodiscard]] std::size_t ndim() const noexcept { return shape_.size(); }
  [[nodiscard]] std::int64_t size(std::size_t mesh_dim) const { return shape_.at(mesh_dim); }
  /// The number of ranks (product of the sizes).
  [[nodiscard]] std::int64_t num_devices() const noexcept;
  /// The coordinate of `rank` (0 <= rank < num_devices()), one entry per mesh dim.
  [[nodiscard]] std::vector<std::int64_t> coordinate(std::int64_t rank) const;
  /// `(2, 4)`; with names `(dp=2, tp=4)`.
  [[nodiscard]] std::string to_string() const;
  /// PyTorch's repr: `DeviceMesh((2, 4), 'cpu', stride=(4, 1))`.
  [[nodiscard]] std::string to_torch_string() const;
  /// "mesh dim 1" or "mesh dim 1 (tp)" when named.
  [[nodiscard]] std::string dim_label(std::size_t mesh_dim) const;

  friend bool operator==(const device_mesh&, const device_mesh&) = default;

private:
  std::vector<std::int64_t> shape_;
  std::vector<std::string> names_;
};

/// Parses `2,4`, `(2, 4)`, `[8]` or `dp=2,tp=4`; throws tdiag::input_error on anything else.
[[nodiscard]] device_mesh parse_mesh(std::string_view text);

} // namespace tdiag::dtensor
