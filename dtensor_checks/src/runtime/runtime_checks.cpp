// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace tdiag::dtensor::runtime {
namespace codes = validation_codes;
namespace {

struct context {
  const local_tensor& local;
  const tensor_spec& spec;
  const comm::mesh_communicators& comms;
  scan_backend& backend;
  const check_options& options;
  report& out;
  [[nodiscard]] std::int64_t rank() const { return comms.world().rank(); }
};

shape_t unflatten(std::int64_t i, const shape_t& shape) {
  shape_t index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0)
      continue;
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

diagnostic& add(context& ctx, std::string_view code, std::string title, std::string message,
                std::string hint) {
  diagnostic d;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.add_field("rank", ctx.rank());
  d.add_field("tensor", ctx.options.tensor_name);
  d.add_field("spec", to_string(ctx.spec));
  ctx.out.diagnostics.push_back(std::move(d));
  return ctx.out.diagnostics.back();
}

std::string chunk_sizes(std::int64_t size, std::int64_t parts) {
  std::vector<std::int64_t> sizes;
  for (std::int64_t c = 0; c < parts; ++c)
    sizes.push_back(chunk_of(size, parts, c).size);
  return fmt::format("{}", fmt::join(sizes, ", "));
}

void check_shape(context& ctx) {
  const auto& mesh = ctx.comms.mesh();
  const auto view = local_shape_and_offset(ctx.spec, mesh, ctx.comms.coordinate());
  const auto& actual = ctx.local.shape;
  if (actual.size() != view.shape.size()) {
    add(ctx, codes::local_shape, "local tensor has the wrong number of dims",
        fmt::format("rank {} {}: local tensor is {}-D {} but the spec {} is {}-D", ctx.rank(),
                    ctx.options.tensor_name, actual.size(), to_string(actual), to_string(ctx.spec),
                    view.shape.size()),
        "build the local tensor from the same global shape as the spec");
    return;
  }
  for (std::size_t d = 0; d < actual.size(); ++d) {
    if (actual[d] == view.shape[d])
      continue;
    std::vector<std::string> sharding;
    for (std::size_t m = 0; m < ctx.spec.placements.size(); ++m) {
      if (ctx.spec.placements[m].is_shard(static_cast<std::int32_t>(d))) {
        sharding.push_back(fmt::format("{} (size {}, torch.chunk of {} gives {})",
                                       mesh.dim_label(m), mesh.size(m), ctx.spec.shape()[d],
                                       chunk_sizes(ctx.spec.shape()[d], mesh.size(m))));
      }
    }
    auto& diag =
        add(ctx, codes::local_shape, "local shape does not match the spec",
            fmt::format(
                "rank {} (coordinate {}) {}: local dim {} is {} but {} on mesh {} gives {} there{}",
                ctx.rank(), to_string(ctx.comms.coordinate()), ctx.options.tensor_name, d,
                actual[d], to_string(ctx.spec), mesh.to_string(), view.shape[d],
                sharding.empty() ? std::string(" (the dim is not sharded)")
                                 : fmt::format("; sharded by {}", fmt::join(sharding, "; "))),
            "cut the local tensor with torch.chunk semantics (the last ranks get less or nothing), "
            "or fix "
            "the spec; DTensor.from_local does not check this");
    diag.add_field("dim", static_cast<std::int64_t>(d));
    diag.add_field("expected", view.shape[d]);
    diag.add_field("actual", actual[d]);
  }
  if (ctx.options.claimed_offset && *ctx.options.claimed_offset != view.offset) {
    auto& diag = add(ctx, codes::local_shape, "global offset does not match the spec",
                     fmt::format("rank {} {}: claimed global offset {} but {} gives {}", ctx.rank(),
                                 ctx.options.tensor_name, to_string(*ctx.options.claimed_offset),
                                 to_string(ctx.spec), to_string(view.offset)),
                     "compute offsets in mesh-dim order with torch.chunk sizes");
    diag.add_field("expected", to_string(view.offset));
    diag.add_field("actual", to_string(*ctx.options.claimed_offset));
  }
}

std::string value_text(const unsigned char* p, dtype type) {
  switch (type) {
  case dtype::float32: {
    float f;
    std::memcpy(&f, p, 4);
    return fmt::format("{:.9g}", f);
  }
  case dtype::float64: {
    double v;
    std::memcpy(&v, p, 8);
    return fmt::format("{:.17g}", v);
  }
  case dtype::int64: {
    std::int64_t v;
    std::memcpy(&v, p, 8);
    return fmt::format("{}", v);
  }
  default: {
    std::string hex;
    for (std::int64_t k = 0; k < itemsize(type); ++k)
      hex += fmt::format("{:02x}", p[k]);
    return "0x" + hex;
  }
  }
}

// Rank 0 reports a Replicate mesh dim whose ranks hold different byte counts (`sizes` by
// coordinate along mesh dim m).
void report_sizes(context& ctx, std::size_t m, const std::vector<std::int64_t>& all, int n) {
  std::vector<std::string> sizes;
  for (int r = 0; r < n; ++r)
    sizes.push_back(fmt::format("{}", all[2 * static_cast<std::size_t>(r)]));
  if (ctx.comms.dim(m).rank() != 0)
    return;
  add(ctx, codes::replica_divergence, "replicas have different sizes",
      fmt::format("{} {} is Replicate on {} but the group's local tensors have {} bytes (by "
                  "coordinate)",
                  ctx.options.tensor_name, to_string(ctx.spec), ctx.comms.mesh().dim_label(m),
                  fmt::join(sizes, ", ")),
      "every rank of a Replicate mesh dim must hold the same tensor")
      .add_field("mesh_dim", static_cast<std::int64_t>(m));
}

// Second pass: block hashes find the first block of `block_bytes` that differs anywhere in the
// group along mesh dim m.
std::int64_t first_differing_block(context& ctx, std::size_t m, std::int64_t block_bytes) {
  auto& c = ctx.comms.dim(m);
  const auto n = c.size();
  auto hashes = ctx.backend.block_hashes(ctx.local.data, ctx.local.bytes(), block_bytes);
  const auto count = static_cast<std::int64_t>(hashes.size());
  std::vector<std::uint64_t> every(hashes.size() * static_cast<std::size_t>(n));
  c.all_gather(hashes.data(), every.data(), count, dtype::int64);
  std::int64_t first = -1;
  for (std::int64_t b = 0; b < count && first < 0; ++b) {
    for (int r = 1; r < n; ++r) {
      if (every[static_cast<std::size_t>(r * count + b)] != every[static_cast<std::size_t>(b)])
        first = b;
    }
  }
  return first < 0 ? 0 : first; // equal block hashes but different totals: scan block 0
}

// The ranks of the group holding the majority value of element e of the gathered block; a tie
// goes to the value of coordinate 0. Empty when all ranks agree.
std::vector<int> majority_of(const std::vector<unsigned char>& group, std::int64_t block_bytes,
                             std::int64_t e, std::int64_t esize, int n) {
  std::map<std::string, std::vector<int>> by_value;
  for (int r = 0; r < n; ++r) {
    const auto* p = group.data() + static_cast<std::size_t>(r * block_bytes + e * esize);
    by_value[std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(esize))]
        .push_back(r);
  }
  if (by_value.size() == 1)
    return {};
  const std::vector<int>* majority = nullptr;
  for (const auto& [v, ranks] : by_value) {
    if (!majority || ranks.size() > majority->size() ||
        (ranks.size() == majority->size() && ranks.front() == 0)) {
      majority = &ranks;
    }
  }
  return *majority;
}

// This rank's element e of the gathered block (at byte `offset` of the local tensor) differs
// from the majority's: the finding, with local, flat and global indices and the agreeing ranks.
void report_divergence(context& ctx, std::size_t m, const std::vector<unsigned char>& group,
                       std::int64_t block_bytes, std::int64_t offset, std::int64_t e,
                       const std::vector<int>& majority) {
  const auto& c = ctx.comms.dim(m);
  const auto& mesh = ctx.comms.mesh();
  const auto esize = itemsize(ctx.local.type);
  const auto flat = offset / esize + e;
  const auto index = unflatten(flat, ctx.local.shape);
  const auto view = local_shape_and_offset(ctx.spec, mesh, ctx.comms.coordinate());
  shape_t global = index;
  for (std::size_t d = 0; d < global.size() && d < view.offset.size(); ++d)
    global[d] += view.offset[d];
  auto coord_of = [&](int r) {
    auto coord = ctx.comms.coordinate();
    coord[m] = r;
    std::int64_t w = 0;
    for (std::size_t k = 0; k < coord.size(); ++k)
      w = w * mesh.size(k) + coord[k];
    return w;
  };
  std::vector<std::int64_t> agree;
  for (int r : majority)
    agree.push_back(coord_of(r));
  const auto* mine_p = group.data() + static_cast<std::size_t>(c.rank() * block_bytes + e * esize);
  const auto* ref_p =
      group.data() + static_cast<std::size_t>(majority.front() * block_bytes + e * esize);
  auto& d = add(
      ctx, codes::replica_divergence, "replicated tensor differs across ranks",
      fmt::format(
          "rank {} {} is Replicate on {} but differs from ranks {}: first difference at local "
          "element {} (flat {}, global {}): rank {} has {}, ranks {} have {}",
          ctx.rank(), ctx.options.tensor_name, mesh.dim_label(m), fmt::join(agree, ", "),
          to_string(index), flat, to_string(global), ctx.rank(), value_text(mine_p, ctx.local.type),
          fmt::join(agree, ", "), value_text(ref_p, ctx.local.type)),
      "a replica diverged: look for a rank-dependent op (dropout seed, non-deterministic kernel, "
      "a "
      "missed all-reduce) on this rank; broadcast from a good rank to resync");
  d.add_field("mesh_dim", static_cast<std::int64_t>(m));
  d.add_field("index", to_string(index));
  d.add_field("flat_index", flat);
  d.add_field("global_index", to_string(global));
  field_value::list others;
  for (auto r : agree)
    others.emplace_back(r);
  d.add_field("agreeing_ranks", std::move(others));
}

// First pass: sizes and whole-tensor hashes; then the differing block; then, in that block's
// gathered bytes, the first element where ranks differ.
void check_replicas(context& ctx, std::size_t m) {
  auto& c = ctx.comms.dim(m);
  const auto n = c.size();
  const auto bytes = ctx.local.bytes();
  std::int64_t mine[2] = {bytes,
                          static_cast<std::int64_t>(ctx.backend.hash(ctx.local.data, bytes))};
  std::vector<std::int64_t> all(static_cast<std::size_t>(2 * n));
  c.all_gather(mine, all.data(), 2, dtype::int64);
  bool same = true;
  bool same_size = true;
  for (int r = 1; r < n; ++r) {
    same = same && all[2 * r] == all[0] && all[2 * r + 1] == all[1];
    same_size = same_size && all[2 * r] == all[0];
  }
  if (same)
    return;
  if (!same_size) {
    report_sizes(ctx, m, all, n);
    return;
  }
  const auto esize = itemsize(ctx.local.type);
  const auto numel_local = numel(ctx.local.shape);
  const auto blocks = std::max<std::int64_t>(1, std::min(ctx.options.hash_blocks, numel_local));
  const auto per_block = ((numel_local + blocks - 1) / blocks);
  const auto block_bytes = ((per_block * esize + 3) / 4) * 4;
  const auto first = first_differing_block(ctx, m, block_bytes);
  const auto offset = first * block_bytes;
  const auto len = std::min(block_bytes, bytes - offset);
  std::vector<unsigned char> block(static_cast<std::size_t>(block_bytes), 0);
  ctx.backend.read(ctx.local.data, offset, len, block.data());
  std::vector<unsigned char> group(block.size() * static_cast<std::size_t>(n));
  c.all_gather(block.data(), group.data(), block_bytes, dtype::uint8);
  for (std::int64_t e = 0; e * esize < len; ++e) {
    const auto majority = majority_of(group, block_bytes, e, esize, n);
    if (majority.empty())
      continue;
    if (std::find(majority.begin(), majority.end(), c.rank()) == majority.end())
      report_divergence(ctx, m, group, block_bytes, offset, e, majority);
    return;
  }
}

void check_nonfinite(context& ctx) {
  const auto counts =
      ctx.backend.scan_nonfinite(ctx.local.data, numel(ctx.local.shape), ctx.local.type);
  if (counts.clean())
    return;
  const auto first =
      counts.first_nan >= 0 && (counts.first_inf < 0 || counts.first_nan < counts.first_inf)
          ? counts.first_nan
          : counts.first_inf;
  auto& d = add(
      ctx, codes::non_finite, "NaN or Inf in a local tensor",
      fmt::format(
          "rank {} {}: {} NaN, {} +Inf, {} -Inf among {} local elements; first at local element {}",
          ctx.rank(), ctx.options.tensor_name, counts.nan, counts.pos_inf, counts.neg_inf,
          numel(ctx.local.shape), to_string(unflatten(first, ctx.local.shape))),
      "find the op that produced it on this rank (tdiag assertions can trap at the first bad "
      "write)");
  d.add_field("nan", counts.nan);
  d.add_field("pos_inf", counts.pos_inf);
  d.add_field("neg_inf", counts.neg_inf);
  d.add_field("index", to_string(unflatten(first, ctx.local.shape)));
}

void check_partials(context& ctx) {
  const auto& ps = ctx.spec.placements;
  if (std::none_of(ps.begin(), ps.end(), [](const placement& p) { return p.is_partial(); }))
    return;
  // Reducing needs equal sizes in every group; a wrong local shape (reported by the shape check)
  // anywhere skips this check on every rank alike.
  std::int64_t fits =
      local_shape_and_offset(ctx.spec, ctx.comms.mesh(), ctx.comms.coordinate()).shape ==
      ctx.local.shape;
  ctx.comms.world().all_reduce(&fits, 1, dtype::int64, reduce_op::min);
  if (fits == 0)
    return;
  const auto n = numel(ctx.local.shape);
  std::vector<unsigned char> raw(static_cast<std::size_t>(ctx.local.bytes()));
  ctx.backend.read(ctx.local.data, 0, ctx.local.bytes(), raw.data());
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const auto* p = raw.data() + i * itemsize(ctx.local.type);
    if (ctx.local.type == dtype::float32) {
      float f;
      std::memcpy(&f, p, 4);
      v[static_cast<std::size_t>(i)] = f;
    } else if (ctx.local.type == dtype::float64) {
      std::memcpy(&v[static_cast<std::size_t>(i)], p, 8);
    } else {
      std::int64_t k = 0;
      std::memcpy(&k, p,
                  static_cast<std::size_t>(std::min<std::int64_t>(8, itemsize(ctx.local.type))));
      v[static_cast<std::size_t>(i)] = static_cast<double>(k);
    }
  }
  bool leader = true;
  for (std::size_t m = ps.size(); m-- > 0;) {
    if (!ps[m].is_partial())
      continue;
    ctx.comms.dim(m).all_reduce(v.data(), n, dtype::float64, ps[m].op);
    leader = leader && ctx.comms.dim(m).rank() == 0;
  }
  if (!leader)
    return; // one report per reduced group
  std::int64_t bad = -1;
  std::int64_t bad_count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[static_cast<std::size_t>(i)])) {
      if (bad < 0)
        bad = i;
      ++bad_count;
    }
  }
  if (bad >= 0) {
    auto& d = add(ctx, codes::partial_non_finite, "a Partial reduces to NaN or Inf",
                  fmt::format("{} {}: reducing the Partial mesh dims gives {} non-finite values; "
                              "first at local element "
                              "{} = {}",
                              ctx.options.tensor_name, to_string(ctx.spec), bad_count,
                              to_string(unflatten(bad, ctx.local.shape)),
                              v[static_cast<std::size_t>(bad)]),
                  "a rank's partial value overflowed or was NaN; scan each rank's local tensor");
    d.add_field("index", to_string(unflatten(bad, ctx.local.shape)));
  }
  if (!ctx.options.partial_reference)
    return;
  const auto& ref = *ctx.options.partial_reference;
  if (ref.numel() != n) {
    add(ctx, codes::partial_mismatch, "Partial reference has the wrong size",
        fmt::format("{}: the reference has {} elements, the local tensor {}",
                    ctx.options.tensor_name, ref.numel(), n),
        "pass this rank's expected local values");
    return;
  }
  double scale = 0.0;
  for (std::int64_t i = 0; i < n; ++i)
    scale = std::max(scale, std::abs(ref.flat(i)));
  for (std::int64_t i = 0; i < n; ++i) {
    const double want = ref.flat(i);
    const double got = v[static_cast<std::size_t>(i)];
    if (std::abs(got - want) <= ctx.options.rtol * (std::abs(want) + scale))
      continue;
    auto& d = add(ctx, codes::partial_mismatch, "a Partial reduces to the wrong value",
                  fmt::format("{} {}: reducing the Partial mesh dims gives {} at local element {} "
                              "but the reference is {}",
                              ctx.options.tensor_name, to_string(ctx.spec), got,
                              to_string(unflatten(i, ctx.local.shape)), want),
                  "a rank's partial value is wrong or the Partial kind in the spec is not how the "
                  "values combine");
    d.add_field("index", to_string(unflatten(i, ctx.local.shape)));
    d.add_field("expected", want);
    d.add_field("actual", got);
    return;
  }
}

} // namespace

report check_local_tensor(const local_tensor& local, const tensor_spec& spec,
                          const comm::mesh_communicators& comms, scan_backend& backend,
                          const check_options& options) {
  report out;
  out.metadata = make_report_metadata("tdiag-dtensor-runtime");
  out.metadata.rank = comms.world().rank();
  context ctx{local, spec, comms, backend, options, out};
  if (options.shapes)
    check_shape(ctx);
  if (options.nonfinite)
    check_nonfinite(ctx);
  if (options.replicas) {
    for (std::size_t m = 0; m < spec.placements.size(); ++m) {
      if (spec.placements[m].is_replicate())
        check_replicas(ctx, m);
    }
  }
  if (options.partials)
    check_partials(ctx);
  return out;
}

} // namespace tdiag::dtensor::runtime
