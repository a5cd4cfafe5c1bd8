// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace tdiag::dtensor::sim {
namespace {

void check_fits(const placement_list& ps, const device_mesh& mesh, std::size_t ndim) {
  if (ps.size() != mesh.ndim()) {
    tdiag::throw_input_error(validation_codes::tensor_misuse, "placements do not fit the mesh",
                             fmt::format("{} placements for mesh {}", ps.size(), mesh.to_string()));
  }
  for (const auto& p : ps) {
    if (p.is_shard() && (p.dim < 0 || static_cast<std::size_t>(p.dim) >= ndim)) {
      tdiag::throw_input_error(validation_codes::tensor_misuse, "shard dim out of range",
                               fmt::format("{} on a {}-D tensor", to_string(p), ndim));
    }
  }
}

std::int64_t rank_of(const device_mesh& mesh, const std::vector<std::int64_t>& coord) {
  std::int64_t r = 0;
  for (std::size_t m = 0; m < mesh.ndim(); ++m)
    r = r * mesh.size(m) + coord[m];
  return r;
}

std::uint64_t mix(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// The n pieces of `v` for one Partial mesh dim (floating values; integers take integer noise).
std::vector<dense_tensor> partial_pieces(const dense_tensor& cur, reduce_op op, std::int64_t n,
                                         std::mt19937_64& rng) {
  const bool integral = !cur.is_floating();
  std::uniform_real_distribution<double> noise(-1.0, 1.0);
  std::uniform_real_distribution<double> gap(0.5, 1.5);
  std::uniform_int_distribution<std::int64_t> inoise(-3, 3);
  std::uniform_int_distribution<std::int64_t> holder(0, n - 1);
  std::vector<dense_tensor> out;
  for (std::int64_t c = 0; c < n; ++c)
    out.emplace_back(cur.shape(), cur.type());
  std::vector<double> s(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < cur.numel(); ++i) {
    const double v = cur.flat(i);
    if (op == reduce_op::max || op == reduce_op::min) {
      const auto keeper = holder(rng);
      for (std::int64_t c = 0; c < n; ++c) {
        const double d = integral ? static_cast<double>(1 + std::abs(inoise(rng))) : gap(rng);
        out[static_cast<std::size_t>(c)].set_flat(
            i, c == keeper ? v : (op == reduce_op::max ? v - d : v + d));
      }
      continue;
    }
    double mean = 0.0;
    for (auto& x : s) {
      x = integral ? static_cast<double>(inoise(rng)) : noise(rng);
      mean += x;
    }
    mean /= static_cast<double>(n);
    // Cancelling noise: integers put the whole correction on the last piece.
    if (integral) {
      double total = 0.0;
      for (std::size_t c = 0; c + 1 < s.size(); ++c)
        total += s[c];
      s.back() = -total;
    } else {
      for (auto& x : s)
        x -= mean;
    }
    for (std::int64_t c = 0; c < n; ++c) {
      double piece = v + s[static_cast<std::size_t>(c)];
      if (op == reduce_op::sum) {
        if (integral) {
          piece = (c == 0 ? v : 0.0) + s[static_cast<std::size_t>(c)];
        } else {
          // Unequal shares 0.6, 0.7, 0.8, ... normalised to 1, as PyTorch's validator does.
          double total = 0.0;
          for (std::int64_t k = 0; k < n; ++k)
            total += 0.6 + 0.1 * static_cast<double>(k % 3);
          piece =
              v * (0.6 + 0.1 * static_cast<double>(c % 3)) / total + s[static_cast<std::size_t>(c)];
        }
      }
      out[static_cast<std::size_t>(c)].set_flat(i, piece);
    }
  }
  return out;
}

void split_level(const dense_tensor& cur, const placement_list& ps, const device_mesh& mesh,
                 std::size_t m, std::vector<std::int64_t>& coord, std::uint64_t seed,
                 std::vector<dense_tensor>& out) {
  if (m == mesh.ndim()) {
    out[static_cast<std::size_t>(rank_of(mesh, coord))] = cur.clone();
    return;
  }
  const auto n = mesh.size(m);
  const auto& p = ps[m];
  std::vector<dense_tensor> parts;
  if (p.is_partial()) {
    std::uint64_t key = seed ^ mix(m + 1);
    for (std::size_t i = 0; i < m; ++i)
      key = mix(key + static_cast<std::uint64_t>(coord[i]) + 1);
    std::mt19937_64 rng(key);
    parts = partial_pieces(cur, p.op, n, rng);
  }
  for (std::int64_t c = 0; c < n; ++c) {
    coord[m] = c;
    if (p.is_shard()) {
      const auto ch = chunk_of(cur.shape()[static_cast<std::size_t>(p.dim)], n, c);
      split_level(cur.narrow(p.dim, ch.offset, ch.size), ps, mesh, m + 1, coord, seed, out);
    } else if (p.is_partial()) {
      split_level(parts[static_cast<std::size_t>(c)], ps, mesh, m + 1, coord, seed, out);
    } else {
      split_level(cur, ps, mesh, m + 1, coord, seed, out);
    }
  }
}

} // namespace

double reduce_pair(reduce_op op, double a, double b) noexcept {
  switch (op) {
  case reduce_op::sum:
  case reduce_op::avg:
    return a + b;
  case reduce_op::max:
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  case reduce_op::min:
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  }
  return a + b;
}

dense_tensor concat(const std::vector<dense_tensor>& parts, std::int64_t dim) {
  shape_t shape = parts.front().shape();
  const auto d = static_cast<std::size_t>(dim);
  shape[d] = 0;
  for (const auto& p : parts)
    shape[d] += p.shape()[d];
  dense_tensor out(shape, parts.front().type());
  std::int64_t at = 0;
  for (const auto& p : parts) {
    for_each_index(p.shape(), [&](const shape_t& idx) {
      auto o = idx;
      o[d] += at;
      out.set(o, p.at(idx));
    });
    at += p.shape()[d];
  }
  return out;
}

dense_tensor local_piece(const dense_tensor& full, const placement_list& placements,
                         const device_mesh& mesh, std::int64_t rank) {
  check_fits(placements, mesh, full.ndim());
  const tensor_spec spec{tensor_meta{full.shape(), contiguous_strides(full.shape()), full.type()},
                         placements};
  const auto view = local_shape_and_offset(spec, mesh, mesh.coordinate(rank));
  dense_tensor t = full;
  for (std::size_t d = 0; d < full.ndim(); ++d)
    t = t.narrow(static_cast<std::int64_t>(d), view.offset[d], view.shape[d]);
  return t.clone();
}

std::vector<dense_tensor> distribute(const dense_tensor& full, const placement_list& placements,
                                     const device_mesh& mesh, std::uint64_t seed) {
  check_fits(placements, mesh, full.ndim());
  std::vector<dense_tensor> out(static_cast<std::size_t>(mesh.num_devices()));
  std::vector<std::int64_t> coord(mesh.ndim(), 0);
  split_level(full, placements, mesh, 0, coord, seed, out);
  return out;
}

std::optional<dense_tensor> assemble(const std::vector<dense_tensor>& locals,
                                     const placement_list& placements, const device_mesh& mesh,
                                     const shape_t& global_shape, double rtol,
                                     assembly_issue& issue) {
  check_fits(placements, mesh, global_shape.size());
  const auto ranks = mesh.num_devices();
  const tensor_spec spec{
      tensor_meta{global_shape, contiguous_strides(global_shape), dtype::float64}, placements};
  for (std::int64_t r = 0; r < ranks; ++r) {
    const auto expected = local_shape_and_offset(spec, mesh, mesh.coordinate(r)).shape;
    const auto& actual = locals[static_cast<std::size_t>(r)].shape();
    if (expected != actual) {
      issue.what = assembly_issue::kind::local_shape;
      issue.rank = r;
      issue.expected_shape = expected;
      issue.actual_shape = actual;
      // Blame the last mesh dim that shards a dim whose size is off, else mesh dim 0.
      issue.mesh_dim = 0;
      for (std::size_t m = 0; m < placements.size(); ++m) {
        const auto& p = placements[m];
        const auto d = static_cast<std::size_t>(p.dim);
        if (p.is_shard() && (actual.size() != expected.size() || actual[d] != expected[d]))
          issue.mesh_dim = m;
      }
      return std::nullopt;
    }
  }
  double scale = 0.0;
  for (const auto& t : locals) {
    for (std::int64_t i = 0; i < t.numel(); ++i) {
      if (std::isfinite(t.flat(i)))
        scale = std::max(scale, std::abs(t.flat(i)));
    }
  }
  std::vector<dense_tensor> cur = locals;
  for (std::size_t m = mesh.ndim(); m-- > 0;) {
    const auto n = mesh.size(m);
    const auto& p = placements[m];
    for (std::int64_t r = 0; r < ranks; ++r) {
      auto coord = mesh.coordinate(r);
      if (coord[m] != 0)
        continue; // r leads its group along mesh dim m
      std::vector<std::int64_t> members;
      for (std::int64_t c = 0; c < n; ++c) {
        coord[m] = c;
        members.push_back(rank_of(mesh, coord));
      }
      dense_tensor merged;
      if (p.is_shard()) {
        std::vector<dense_tensor> parts;
        for (auto g : members)
          parts.push_back(cur[static_cast<std::size_t>(g)]);
        merged = concat(parts, p.dim);
      } else if (p.is_partial()) {
        merged = cur[static_cast<std::size_t>(members[0])].clone();
        for (std::int64_t i = 0; i < merged.numel(); ++i) {
          double acc = merged.flat(i);
          for (std::size_t k = 1; k < members.size(); ++k) {
            acc = reduce_pair(p.op, acc, cur[static_cast<std::size_t>(members[k])].flat(i));
          }
          merged.set_flat(i, p.op == reduce_op::avg ? acc / static_cast<double>(n) : acc);
        }
      } else {
        merged = cur[static_cast<std::size_t>(members[0])];
        for (std::size_t k = 1; k < members.size(); ++k) {
          const auto& other = cur[static_cast<std::size_t>(members[k])];
          for (std::int64_t i = 0; i < merged.numel(); ++i) {
            const double a = other.flat(i);
            const double b = merged.flat(i);
            const bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                              std::abs(a - b) <= rtol * (std::abs(b) + scale);
            if (same)
              continue;
            issue.what = assembly_issue::kind::replica_mismatch;
            issue.mesh_dim = m;
            issue.rank = members[k];
            issue.other_rank = members[0];
            issue.index.assign(merged.ndim(), 0);
            auto rest = i;
            for (std::size_t d = merged.ndim(); d-- > 0;) {
              issue.index[d] = rest % merged.shape()[d];
              rest /= merged.shape()[d];
            }
            issue.value = a;
            issue.other_value = b;
            return std::nullopt;
          }
        }
      }
      for (auto g : members)
        cur[static_cast<std::size_t>(g)] = merged;
    }
  }
  return cur.front();
}

} // namespace tdiag::dtensor::sim
