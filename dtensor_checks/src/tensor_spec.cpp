// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/codes.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <limits>

namespace tdiag::dtensor {
namespace {
struct dtype_names {
  dtype type;
  std::string_view long_name;
  std::string_view short_name;
  std::int64_t size;
};
constexpr dtype_names dtype_table[] = {
    {dtype::float32, "float32", "f32", 4},    {dtype::float16, "float16", "f16", 2},
    {dtype::bfloat16, "bfloat16", "bf16", 2}, {dtype::float64, "float64", "f64", 8},
    {dtype::int64, "int64", "i64", 8},        {dtype::int32, "int32", "i32", 4},
    {dtype::int8, "int8", "i8", 1},           {dtype::uint8, "uint8", "u8", 1},
    {dtype::boolean, "bool", "b8", 1},
};

[[noreturn]] void bad_spec(std::string_view text, std::string_view why) {
  throw_input_error(codes::placement_count, "invalid tensor spec",
                    fmt::format("invalid tensor spec '{}': {}", text, why),
                    "write a spec as dtype[shape] (placements), e.g. 'f32[12,16] (S(0),P(sum))'");
}

std::string_view trim(std::string_view s) noexcept {
  while (!s.empty() && s.front() == ' ')
    s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ')
    s.remove_suffix(1);
  return s;
}
} // namespace

std::int64_t itemsize(dtype t) noexcept {
  for (const auto& e : dtype_table) {
    if (e.type == t)
      return e.size;
  }
  return 4;
}

std::string_view to_string(dtype t) noexcept {
  for (const auto& e : dtype_table) {
    if (e.type == t)
      return e.long_name;
  }
  return "float32";
}

std::string_view short_name(dtype t) noexcept {
  for (const auto& e : dtype_table) {
    if (e.type == t)
      return e.short_name;
  }
  return "f32";
}

std::optional<dtype> parse_dtype(std::string_view text) noexcept {
  if (text.substr(0, 6) == "torch.")
    text.remove_prefix(6);
  for (const auto& e : dtype_table) {
    if (text == e.long_name || text == e.short_name)
      return e.type;
  }
  if (text == "float")
    return dtype::float32;
  if (text == "long")
    return dtype::int64;
  return std::nullopt;
}

std::string to_string(const shape_t& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::int64_t numel(const shape_t& shape) noexcept {
  std::int64_t n = 1;
  for (auto s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      return std::numeric_limits<std::int64_t>::max();
  return n;
}

bool numel_fits(const shape_t& shape) noexcept {
  std::int64_t n = 1;
  for (auto s : shape) {
    if (s < 0 || (s != 0 && n > max_numel / s))
      return false;
    n *= s;
  }
  return true;
}

shape_t contiguous_strides(const shape_t& shape) {
  shape_t stride(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;)
    stride[i - 1] = stride[i] * std::max<std::int64_t>(shape[i], 1);
  return stride;
}

std::int64_t num_shards(const device_mesh& mesh, const placement_list& ps) {
  std::int64_t n = 1;
  for (std::size_t i = 0; i < ps.size() && i < mesh.ndim(); ++i) {
    if (ps[i].is_shard())
      n *= mesh.size(i);
  }
  return n;
}

std::int64_t global_bytes(const tensor_meta& meta) noexcept {
  std::int64_t bytes = 0;
  if (__builtin_mul_overflow(itemsize(meta.type), numel(meta.shape), &bytes))
    return std::numeric_limits<std::int64_t>::max(); // saturated, as numel() is
  return bytes;
}

chunk chunk_of(std::int64_t size, std::int64_t parts, std::int64_t index) noexcept {
  if (parts <= 0)
    return {size, 0};
  if (size % parts == 0)
    return {size / parts, index * (size / parts)};
  const std::int64_t full = (size + parts - 1) / parts;
  const std::int64_t start = full * index;
  const std::int64_t end = std::min(size, start + full);
  return {std::max<std::int64_t>(0, end - start), std::min(start, size)};
}

local_view local_shape_and_offset(const tensor_spec& spec, const device_mesh& mesh,
                                  const std::vector<std::int64_t>& coordinate) {
  local_view v{spec.shape(), shape_t(spec.ndim(), 0)};
  for (std::size_t m = 0; m < spec.placements.size() && m < mesh.ndim(); ++m) {
    const auto& p = spec.placements[m];
    if (!p.is_shard() || p.dim < 0 || static_cast<std::size_t>(p.dim) >= spec.ndim())
      continue;
    const auto c = chunk_of(v.shape[p.dim], mesh.size(m), coordinate.at(m));
    v.shape[p.dim] = c.size;
    v.offset[p.dim] += c.offset;
  }
  return v;
}

std::vector<local_view> local_views(const tensor_spec& spec, const device_mesh& mesh) {
  std::vector<local_view> out;
  const auto n = mesh.num_devices();
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r)
    out.push_back(local_shape_and_offset(spec, mesh, mesh.coordinate(r)));
  return out;
}

std::string to_string(const tensor_spec& spec) {
  return fmt::format("{}{} {}", short_name(spec.meta.type), to_string(spec.shape()),
                     to_string(spec.placements));
}

std::string to_torch_string(const tensor_spec& spec) {
  return fmt::format("Spec({}{}({}))", short_name(spec.meta.type), to_string(spec.shape()),
                     to_compact_string(spec.placements));
}

tensor_spec parse_tensor_spec(std::string_view text, std::size_t mesh_ndim) {
  auto t = trim(text);
  const auto open = t.find('[');
  if (open == std::string_view::npos)
    bad_spec(text, "missing '[' after the dtype");
  const auto close = t.find(']', open);
  if (close == std::string_view::npos)
    bad_spec(text, "missing ']' after the shape");
  tensor_spec spec;
  auto type = parse_dtype(trim(t.substr(0, open)));
  if (!type)
    bad_spec(text, fmt::format("unknown dtype '{}'", trim(t.substr(0, open))));
  spec.meta.type = *type;
  auto dims = trim(t.substr(open + 1, close - open - 1));
  while (!dims.empty()) {
    auto comma = dims.find(',');
    auto item = trim(dims.substr(0, comma));
    dims = comma == std::string_view::npos ? std::string_view{} : trim(dims.substr(comma + 1));
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (ec != std::errc{} || p != item.data() + item.size() || v < 0 ||
        v > (std::int64_t{1} << 40)) {
      bad_spec(text, fmt::format("'{}' is not a dim size", item));
    }
    spec.meta.shape.push_back(v);
    if (spec.meta.shape.size() > 16)
      bad_spec(text, "more than 16 dims");
  }
  if (!numel_fits(spec.meta.shape))
    bad_spec(text, fmt::format("{} holds more than 2^50 elements", to_string(spec.meta.shape)));
  spec.meta.stride = contiguous_strides(spec.meta.shape);
  auto rest = trim(t.substr(close + 1));
  if (rest.empty()) {
    spec.placements.assign(mesh_ndim, placement::replicate());
  } else {
    spec.placements = parse_placements(rest);
  }
  return spec;
}

void validate_spec(const tensor_spec& spec, const device_mesh& mesh, std::string_view what) {
  auto fail = [&](std::string message, std::string hint) {
    diagnostic d;
    d.code = codes::placement_count;
    d.title = "placements do not fit the mesh";
    d.message = fmt::format("{} {}: {}", what, to_string(spec), message);
    d.hint = std::move(hint);
    d.add_field("mesh", mesh.to_string());
    throw input_error(std::move(d));
  };
  if (spec.placements.size() != mesh.ndim()) {
    fail(fmt::format("has {} placements but mesh {} has {} dims", spec.placements.size(),
                     mesh.to_string(), mesh.ndim()),
         "give exactly one placement per mesh dim");
  }
  for (std::size_t m = 0; m < spec.placements.size(); ++m) {
    const auto& p = spec.placements[m];
    if (p.is_shard() && static_cast<std::size_t>(p.dim) >= spec.ndim()) {
      fail(fmt::format("{} is {} but the tensor has {} dims", mesh.dim_label(m), to_string(p),
                       spec.ndim()),
           "shard a dim that exists (S(0) .. S(ndim-1))");
    }
  }
  for (auto s : spec.shape()) {
    if (s < 0)
      fail("negative dim size", "sizes must be >= 0");
  }
}

} // namespace tdiag::dtensor
