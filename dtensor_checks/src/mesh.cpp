// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/codes.hpp>
#include <tensordiag/dtensor_checks/mesh.hpp>

#include <fmt/format.h>

#include <charconv>

namespace tdiag::dtensor {
namespace {
[[noreturn]] void bad_mesh(std::string_view text, std::string_view why) {
  throw_input_error(codes::placement_count, "invalid device mesh",
                    fmt::format("invalid device mesh '{}': {}", text, why),
                    "write the mesh shape as sizes separated by commas, e.g. --mesh 2,4");
}
} // namespace

device_mesh::device_mesh(std::vector<std::int64_t> shape, std::vector<std::string> names)
    : shape_(std::move(shape)), names_(std::move(names)) {
  for (auto s : shape_) {
    if (s < 1)
      bad_mesh(to_string(), "every mesh dim needs at least one rank");
  }
  if (!names_.empty() && names_.size() != shape_.size()) {
    bad_mesh(to_string(), "give one name per mesh dim or none");
  }
  if (shape_.empty() || shape_.size() > 8)
    bad_mesh(to_string(), "a mesh has 1 to 8 dims");
  // Local views are computed rank by rank; a bound keeps that cheap and the products exact.
  std::int64_t n = 1;
  for (auto s : shape_) {
    if (s > 65536 || n * s > 65536)
      bad_mesh(to_string(), "more than 65,536 ranks");
    n *= s;
  }
}

std::int64_t device_mesh::num_devices() const noexcept {
  std::int64_t n = 1;
  for (auto s : shape_)
    n *= s;
  return n;
}

std::vector<std::int64_t> device_mesh::coordinate(std::int64_t rank) const {
  std::vector<std::int64_t> coord(shape_.size(), 0);
  for (std::size_t i = shape_.size(); i-- > 0;) {
    coord[i] = rank % shape_[i];
    rank /= shape_[i];
  }
  return coord;
}

std::string device_mesh::to_string() const {
  std::string out = "(";
  for (std::size_t i = 0; i < shape_.size(); ++i) {
    if (i)
      out += ", ";
    if (!names_.empty())
      out += fmt::format("{}=", names_[i]);
    out += fmt::format("{}", shape_[i]);
  }
  if (shape_.size() == 1 && names_.empty())
    out += ",";
  return out + ")";
}

std::string device_mesh::to_torch_string() const {
  std::vector<std::int64_t> stride(shape_.size(), 1);
  for (std::size_t i = shape_.size(); i-- > 1;)
    stride[i - 1] = stride[i] * shape_[i];
  auto tuple = [](const std::vector<std::int64_t>& v) {
    return v.size() == 1 ? fmt::format("({},)", v[0]) : fmt::format("({})", fmt::join(v, ", "));
  };
  return fmt::format("DeviceMesh({}, 'cpu', stride={})", tuple(shape_), tuple(stride));
}

std::string device_mesh::dim_label(std::size_t mesh_dim) const {
  if (mesh_dim < names_.size())
    return fmt::format("mesh dim {} ({})", mesh_dim, names_[mesh_dim]);
  return fmt::format("mesh dim {}", mesh_dim);
}

device_mesh parse_mesh(std::string_view text) {
  std::vector<std::int64_t> shape;
  std::vector<std::string> names;
  std::string_view rest = text;
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '(' || s.front() == '['))
      s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == ')' || s.back() == ']'))
      s.remove_suffix(1);
    return s;
  };
  rest = trim(rest);
  if (rest.empty())
    bad_mesh(text, "no sizes");
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto item = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) {
      if (rest.empty() && !shape.empty())
        break; // `(8,)`
      bad_mesh(text, "empty size");
    }
    if (auto eq = item.find('='); eq != std::string_view::npos) {
      names.emplace_back(trim(item.substr(0, eq)));
      item = trim(item.substr(eq + 1));
    }
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc{} || p != item.data() + item.size()) {
      bad_mesh(text, fmt::format("'{}' is not a number", item));
    }
    if (v < 1 || v > (1 << 20))
      bad_mesh(text, fmt::format("size {} is out of range", v));
    shape.push_back(v);
  }
  if (!names.empty() && names.size() != shape.size())
    bad_mesh(text, "name every mesh dim or none");
  return device_mesh(std::move(shape), std::move(names));
}

} // namespace tdiag::dtensor
