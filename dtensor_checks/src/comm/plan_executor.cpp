// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/plan_executor.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <cstring>
#include <numeric>

namespace tdiag::dtensor::comm {
namespace {

using sim::dense_tensor;

[[noreturn]] void fail(std::string title, std::string message) {
  diagnostic d;
  d.code = std::string(validation_codes::plan_execution);
  d.title = std::move(title);
  d.message = std::move(message);
  throw tdiag::error(std::move(d));
}

// Elements as raw bytes of the tensor's dtype, so the collective moves the real type.
std::vector<char> pack(const dense_tensor& t) {
  const auto n = static_cast<std::size_t>(t.numel());
  std::vector<char> out(n * element_size(t.type()));
  for (std::size_t i = 0; i < n; ++i) {
    const double v = t.flat(static_cast<std::int64_t>(i));
    if (t.type() == dtype::float32) {
      const auto f = static_cast<float>(v);
      std::memcpy(out.data() + i * 4, &f, 4);
    } else if (t.type() == dtype::int64) {
      const auto k = static_cast<std::int64_t>(v);
      std::memcpy(out.data() + i * 8, &k, 8);
    } else {
      std::memcpy(out.data() + i * 8, &v, 8);
    }
  }
  return out;
}

dense_tensor unpack(const char* data, shape_t shape, dtype type) {
  dense_tensor t(std::move(shape), type);
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (type == dtype::float32) {
      float f;
      std::memcpy(&f, data + at * 4, 4);
      t.set_flat(i, f);
    } else if (type == dtype::int64) {
      std::int64_t k;
      std::memcpy(&k, data + at * 8, 8);
      t.set_flat(i, static_cast<double>(k));
    } else {
      double v;
      std::memcpy(&v, data + at * 8, 8);
      t.set_flat(i, v);
    }
  }
  return t;
}

// `t` with dim d moved to the front (a contiguous copy) and the permutation to undo it.
dense_tensor front(const dense_tensor& t, std::int64_t d) {
  shape_t shape{t.shape()[static_cast<std::size_t>(d)]};
  shape_t strides{t.strides()[static_cast<std::size_t>(d)]};
  for (std::size_t k = 0; k < t.ndim(); ++k) {
    if (static_cast<std::int64_t>(k) == d)
      continue;
    shape.push_back(t.shape()[k]);
    strides.push_back(t.strides()[k]);
  }
  return t.as_strided(shape, strides, t.storage_offset()).clone();
}

dense_tensor unfront(const dense_tensor& t, std::int64_t d) {
  shape_t shape;
  shape_t strides;
  for (std::size_t k = 1; k < t.ndim(); ++k) {
    if (static_cast<std::int64_t>(k) == d + 1) {
      shape.push_back(t.shape()[0]);
      strides.push_back(t.strides()[0]);
    }
    shape.push_back(t.shape()[k]);
    strides.push_back(t.strides()[k]);
  }
  if (static_cast<std::int64_t>(t.ndim()) == d + 1) {
    shape.push_back(t.shape()[0]);
    strides.push_back(t.strides()[0]);
  }
  return t.as_strided(shape, strides, t.storage_offset()).clone();
}

// Rows [0, rows) of a front-major tensor, zero-padded to `rows_to` rows.
dense_tensor pad_rows(const dense_tensor& t, std::int64_t rows_to) {
  auto shape = t.shape();
  shape[0] = rows_to;
  dense_tensor out(shape, t.type());
  for (std::int64_t i = 0; i < t.numel(); ++i)
    out.set_flat(i, t.flat(i));
  return out;
}

// The size of tensor dim d as mesh dim m chunks it: the global size cut by every earlier mesh
// dim that shards d, in mesh-dim order.
std::int64_t size_at(const tensor_meta& meta, const placement_list& cur, const device_mesh& mesh,
                     const std::vector<std::int64_t>& coord, std::int32_t d, std::size_t m) {
  auto size = meta.shape[static_cast<std::size_t>(d)];
  for (std::size_t k = 0; k < m; ++k) {
    if (cur[k].is_shard(d))
      size = chunk_of(size, mesh.size(k), coord[k]).size;
  }
  return size;
}

void require_unsharded_later(const placement_list& cur, std::size_t m, std::int32_t d,
                             const redistribute_step& s, const device_mesh& mesh) {
  for (std::size_t k = m + 1; k < cur.size(); ++k) {
    if (cur[k].is_shard(d)) {
      fail("plan step order not supported",
           fmt::format(
               "{}: tensor dim {} is still sharded on the later {}, so {} cannot be undone first",
               to_string(s, mesh), d, mesh.dim_label(k), mesh.dim_label(m)));
    }
  }
}

dense_tensor all_gather_dim(const dense_tensor& x, std::int32_t d, std::int64_t size,
                            communicator& c) {
  const auto n = c.size();
  const auto rows = chunk_of(size, n, 0).size;
  const auto f = pad_rows(front(x, d), rows);
  const auto send = pack(f);
  std::vector<char> recv(send.size() * static_cast<std::size_t>(n));
  c.all_gather(send.data(), recv.data(), f.numel(), x.type());
  std::vector<dense_tensor> parts;
  for (int r = 0; r < n; ++r) {
    auto shape = f.shape();
    shape[0] = chunk_of(size, n, r).size;
    parts.push_back(
        unpack(recv.data() + send.size() * static_cast<std::size_t>(r), shape, x.type()));
  }
  return unfront(sim::concat(parts, 0), d);
}

dense_tensor reduce_scatter_dim(const dense_tensor& x, std::int32_t d, reduce_op op,
                                communicator& c) {
  const auto n = c.size();
  const auto size = x.shape()[static_cast<std::size_t>(d)];
  const auto rows = chunk_of(size, n, 0).size;
  const auto f = front(x, d);
  const auto inner = numel(shape_t(f.shape().begin() + 1, f.shape().end()));
  // Block r holds chunk r padded to `rows` rows.
  auto block_shape = f.shape();
  block_shape[0] = rows;
  dense_tensor blocks_t(
      [&] {
        auto s = block_shape;
        s[0] = rows * n;
        return s;
      }(),
      x.type());
  for (int r = 0; r < n; ++r) {
    const auto ch = chunk_of(size, n, r);
    const auto piece = f.narrow(0, ch.offset, ch.size).clone();
    const auto base = static_cast<std::int64_t>(r) * rows * inner;
    for (std::int64_t i = 0; i < piece.numel(); ++i)
      blocks_t.set_flat(base + i, piece.flat(i));
  }
  const auto send = pack(blocks_t);
  const auto count = blocks_t.numel() / n;
  std::vector<char> recv(static_cast<std::size_t>(count) * element_size(x.type()));
  c.reduce_scatter(send.data(), recv.data(), count, x.type(), op);
  auto mine = unpack(recv.data(), block_shape, x.type());
  return unfront(mine.narrow(0, 0, chunk_of(size, n, c.rank()).size).clone(), d);
}

// x holds chunk `me` of dim i (of size_i) and all of dim j (size_j); returns all of dim i and
// chunk `me` of dim j.
dense_tensor all_to_all_dims(const dense_tensor& x, std::int32_t i, std::int32_t j,
                             std::int64_t size_i, communicator& c) {
  const auto n = c.size();
  const auto me = c.rank();
  const auto size_j = x.shape()[static_cast<std::size_t>(j)];
  const auto rows_i = chunk_of(size_i, n, 0).size;
  const auto rows_j = chunk_of(size_j, n, 0).size;
  // Move i to the front, then j (now at j' = j < i ? j + 1 : j) to position 1.
  const auto fi = front(x, i);
  const auto jj = j < i ? j + 1 : j;
  shape_t perm_shape{fi.shape()[0], fi.shape()[static_cast<std::size_t>(jj)]};
  shape_t perm_strides{fi.strides()[0], fi.strides()[static_cast<std::size_t>(jj)]};
  for (std::size_t k = 1; k < fi.ndim(); ++k) {
    if (static_cast<std::int64_t>(k) == jj)
      continue;
    perm_shape.push_back(fi.shape()[k]);
    perm_strides.push_back(fi.strides()[k]);
  }
  const auto ij = fi.as_strided(perm_shape, perm_strides, fi.storage_offset()).clone();
  shape_t block{rows_i, rows_j};
  for (std::size_t k = 2; k < ij.ndim(); ++k)
    block.push_back(ij.shape()[k]);
  const auto block_numel = numel(block);
  dense_tensor send_t(
      [&] {
        auto s = block;
        s[0] *= n;
        return s;
      }(),
      x.type());
  for (int t = 0; t < n; ++t) {
    const auto ch = chunk_of(size_j, n, t);
    const auto piece = ij.narrow(1, ch.offset, ch.size);
    sim::for_each_index(piece.shape(), [&](const shape_t& idx) {
      std::int64_t at = 0;
      for (std::size_t k = 0; k < idx.size(); ++k)
        at = at * block[k] + idx[k];
      send_t.set_flat(t * block_numel + at, piece.at(idx));
    });
  }
  const auto send = pack(send_t);
  std::vector<char> recv(send.size());
  c.all_to_all(send.data(), recv.data(), block_numel, x.type());
  const auto all = unpack(recv.data(), send_t.shape(), x.type());
  std::vector<dense_tensor> parts;
  const auto my_j = chunk_of(size_j, n, me).size;
  for (int s = 0; s < n; ++s) {
    const auto blk = all.narrow(0, s * rows_i, rows_i);
    parts.push_back(blk.narrow(0, 0, chunk_of(size_i, n, s).size).narrow(1, 0, my_j).clone());
  }
  auto merged =
      sim::concat(parts, 0); // [size_i, my_j, rest...]: move dim 1 back to jj, then dim 0 to i
  shape_t back_shape;
  shape_t back_strides;
  back_shape.push_back(merged.shape()[0]);
  back_strides.push_back(merged.strides()[0]);
  for (std::size_t k = 2, out_k = 1; out_k < merged.ndim(); ++out_k) {
    if (static_cast<std::int64_t>(out_k) == jj) {
      back_shape.push_back(merged.shape()[1]);
      back_strides.push_back(merged.strides()[1]);
    } else {
      back_shape.push_back(merged.shape()[k]);
      back_strides.push_back(merged.strides()[k]);
      ++k;
    }
  }
  return unfront(merged.as_strided(back_shape, back_strides, merged.storage_offset()).clone(), i);
}

dense_tensor partition(const dense_tensor& x, reduce_op op, std::int64_t n) {
  if (op != reduce_op::sum)
    return x.clone();
  dense_tensor out(x.shape(), x.type());
  for (std::int64_t i = 0; i < x.numel(); ++i)
    out.set_flat(i, x.flat(i) / static_cast<double>(n));
  return out;
}

} // namespace

dense_tensor execute_plan(const redistribution_plan& plan, const tensor_meta& meta,
                          const dense_tensor& local, const mesh_communicators& comms) {
  const auto& mesh = comms.mesh();
  const auto& coord = comms.coordinate();
  const tensor_spec start{meta, plan.current};
  const auto expected = local_shape_and_offset(start, mesh, coord).shape;
  if (local.shape() != expected) {
    fail("local tensor does not fit the plan's source spec",
         fmt::format("rank {}: local shape {} but {} on mesh {} gives {}", comms.world().rank(),
                     to_string(local.shape()), to_string(start), mesh.to_string(),
                     to_string(expected)));
  }
  auto cur = plan.current;
  dense_tensor x = local.contiguous();
  for (const auto& s : plan.steps) {
    if (s.problem != step_problem::none) {
      fail("plan step cannot be executed",
           fmt::format("{}: PyTorch refuses this transform", to_string(s, mesh)));
    }
    const auto m = s.mesh_dim;
    auto& c = comms.dim(m);
    const auto n = mesh.size(m);
    if (s.from.is_shard() && s.to.is_replicate()) {
      require_unsharded_later(cur, m, s.from.dim, s, mesh);
      x = all_gather_dim(x, s.from.dim, size_at(meta, cur, mesh, coord, s.from.dim, m), c);
    } else if (s.from.is_shard() && s.to.is_shard()) {
      require_unsharded_later(cur, m, s.from.dim, s, mesh);
      require_unsharded_later(cur, m, s.to.dim, s, mesh);
      x = all_to_all_dims(x, s.from.dim, s.to.dim, size_at(meta, cur, mesh, coord, s.from.dim, m),
                          c);
    } else if (s.from.is_partial() && s.to.is_replicate()) {
      auto buf = pack(x);
      c.all_reduce(buf.data(), x.numel(), x.type(), s.from.op);
      x = unpack(buf.data(), x.shape(), x.type());
    } else if (s.from.is_partial() && s.to.is_shard()) {
      require_unsharded_later(cur, m, s.to.dim, s, mesh);
      x = reduce_scatter_dim(x, s.to.dim, s.from.op, c);
    } else if (s.from.is_replicate() && s.to.is_shard()) {
      require_unsharded_later(cur, m, s.to.dim, s, mesh);
      const auto ch = chunk_of(x.shape()[static_cast<std::size_t>(s.to.dim)], n, coord[m]);
      x = x.narrow(s.to.dim, ch.offset, ch.size).clone();
    } else if (s.from.is_replicate() && s.to.is_partial()) {
      x = partition(x, s.to.op, n);
    } else if (s.from.is_partial() && s.to.is_partial()) {
      auto buf = pack(x);
      c.all_reduce(buf.data(), x.numel(), x.type(), s.from.op);
      x = partition(unpack(buf.data(), x.shape(), x.type()), s.to.op, n);
    }
    cur[m] = s.to;
  }
  return x;
}

} // namespace tdiag::dtensor::comm
