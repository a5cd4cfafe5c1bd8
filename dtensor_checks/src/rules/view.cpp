// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// View-like ops (_view_ops.py propagate_shape_and_sharding): a Shard follows its input dim to
// the output dim made from it; a dim that disappears, a later dim of a flatten or a split piece
// that does not divide evenly is replicated, and the strict `view` refuses to reshard.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "builtin_rules.hpp"
#include "view_groups.hpp"

namespace tdiag::dtensor::detail {
namespace {

std::string placement_names(const placement_list& ps) {
  std::string out = "[";
  for (std::size_t i = 0; i < ps.size(); ++i)
    out += (i ? ", " : "") + to_torch_string(ps[i]);
  return out + "]";
}

struct view_propagation {
  placement_list input_target;
  placement_list output;
};

// What every step of propagate_dims() sees: the call, the input, the view's description for
// messages (`view [6, 3]→[18]`), and which input dim may stay sharded on which mesh dim.
struct dims_state {
  const rule_context& ctx;
  const tensor_spec& in;
  bool strict = false;
  const std::string& op_text;
  std::vector<std::vector<bool>> shardable; ///< [input dim][mesh dim]

  [[nodiscard]] const placement_list& ps() const noexcept { return in.placements; }
  // The mesh dim that shards input dim `d`, or -1.
  [[nodiscard]] std::ptrdiff_t sharding_mesh_dim(std::int64_t d) const {
    for (std::size_t m = 0; m < ps().size(); ++m) {
      if (ps()[m].is_shard(static_cast<std::int32_t>(d)))
        return static_cast<std::ptrdiff_t>(m);
    }
    return -1;
  }
};

// The fields every view diagnostic carries, then the rejection.
[[noreturn]] void fail_view(const dims_state& st, error_class cls, diagnostic diag,
                            std::size_t mesh_dim) {
  diag.add_field("arg_index", std::int64_t{0});
  diag.add_field("arg", st.ctx.arg_name(0));
  diag.add_field("mesh_dim", static_cast<std::int64_t>(mesh_dim));
  diag.add_field("placements", to_string(st.ps()));
  diag.add_field("shape", to_string(st.in.shape()));
  st.ctx.fail(cls, std::move(diag));
}

// A strict view merging input dim `d`, sharded on mesh dim `m`, into an earlier dim.
[[noreturn]] void flatten_sharded(const dims_state& st, const std::vector<std::int64_t>& dims,
                                  std::int64_t d, std::size_t m) {
  const auto& ps = st.ps();
  std::vector<std::string> merged;
  for (auto x : dims)
    merged.push_back(fmt::format("{} (size {})", x, st.in.shape()[static_cast<std::size_t>(x)]));
  auto relaxed = ps;
  for (auto& p : relaxed) {
    if (p.is_shard(static_cast<std::int32_t>(d)))
      p = placement::replicate();
  }
  auto diag = make_diagnostic(
      codes::flatten_sharded, st.ctx.call().op, error_class::user_error,
      "view would merge a sharded dim that is not the leftmost of its group",
      fmt::format("{}: {}: dims {} would be merged into one output dim, and dim {} is {} "
                  "on {}; only the "
                  "leftmost dim of a merged group may stay sharded, because each rank's "
                  "slice of dim {} is "
                  "not a contiguous block of the merged dim. A strict view cannot reshard.",
                  st.op_text, st.ctx.describe_input(0), fmt::join(merged, ", "), d,
                  to_string(ps[m]), st.ctx.mesh().dim_label(m), d),
      fmt::format("x.redistribute(mesh, {}) before the view, or use x.reshape(...) which "
                  "redistributes "
                  "by itself",
                  placement_names(relaxed)));
  fail_view(st, error_class::user_error, std::move(diag), m);
}

// A strict view merging the unevenly sharded leading dim `d` (mesh dim `m`) with later dims.
[[noreturn]] void flatten_uneven(const dims_state& st, const std::vector<std::int64_t>& dims,
                                 std::int64_t d, std::size_t m) {
  const auto& ps = st.ps();
  const auto size = st.in.shape()[static_cast<std::size_t>(d)];
  const auto n = st.ctx.mesh().size(m);
  std::vector<std::int64_t> chunks;
  for (std::int64_t r = 0; r < n; ++r)
    chunks.push_back(chunk_of(size, n, r).size);
  auto relaxed = ps;
  relaxed[m] = placement::replicate();
  auto diag = make_diagnostic(
      codes::flatten_uneven, st.ctx.call().op, error_class::user_error,
      "view would merge an unevenly sharded dim",
      fmt::format("{}: {}: dim {} (size {}) is {} on {} ({} ranks), so the ranks hold [{}] rows; "
                  "merging "
                  "it with dims {} would give ranks blocks that do not line up with an even "
                  "split of "
                  "the merged dim. A strict view cannot reshard.",
                  st.op_text, st.ctx.describe_input(0), d, size, to_string(ps[m]),
                  st.ctx.mesh().dim_label(m), n, fmt::join(chunks, ", "),
                  fmt::join(std::vector<std::int64_t>(dims.begin() + 1, dims.end()), ", ")),
      fmt::format("x.redistribute(mesh, {}) before the view, pad dim {} to a multiple of "
                  "{}, or use "
                  "x.reshape(...)",
                  placement_names(relaxed), d, n));
  fail_view(st, error_class::user_error, std::move(diag), m);
}

// A sharded size-1 input dim that the view broadcasts (mesh dim `m` shards it).
[[noreturn]] void expand_sharded(const dims_state& st, const placement& p, std::size_t m) {
  // PyTorch fails here with a bare KeyError (`0`): a sharded size-1 dim is broadcast.
  auto relaxed = st.ps();
  relaxed[m] = placement::replicate();
  auto diag = make_diagnostic(
      codes::expand_sharded, st.ctx.call().op, error_class::limitation,
      "expand of a sharded size-1 dim",
      fmt::format("{}: {}: dim {} has size 1 and is {} on {} (only one rank holds its "
                  "element), but it is "
                  "broadcast to a larger size; PyTorch does not replicate it by itself",
                  st.op_text, st.ctx.describe_input(0), p.dim, to_string(p),
                  st.ctx.mesh().dim_label(m)),
      fmt::format("x.redistribute(mesh, {}) before expanding (a size-1 dim gains nothing from "
                  "sharding)",
                  placement_names(relaxed)));
  fail_view(st, error_class::limitation, std::move(diag), m);
}

// A group of input dims merged into one output dim: only the leftmost may stay sharded, and only
// when it splits evenly; a strict view refuses either instead. Returns the leftmost dim.
std::int64_t flatten_first(dims_state& st, const std::vector<std::int64_t>& dims) {
  const auto nm = st.ctx.mesh_ndim();
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = dims[i];
    bool can_shard = true;
    const auto m = st.sharding_mesh_dim(d);
    if (i > 0) {
      can_shard = false;
      if (st.strict && m >= 0)
        flatten_sharded(st, dims, d, static_cast<std::size_t>(m));
    } else if (m >= 0) {
      const auto size = st.in.shape()[static_cast<std::size_t>(d)];
      if (size % st.ctx.mesh().size(static_cast<std::size_t>(m)) != 0) {
        can_shard = false;
        if (st.strict)
          flatten_uneven(st, dims, d, static_cast<std::size_t>(m));
      }
    }
    st.shardable[static_cast<std::size_t>(d)].assign(nm, can_shard);
  }
  return dims.front();
}

// Input dim → the output dim a Shard of it follows to.
std::map<std::int64_t, std::int64_t> follow_dims(dims_state& st, const dim_map& map) {
  const auto& mesh = st.ctx.mesh();
  std::map<std::int64_t, std::int64_t> shard_dim_map;
  for (std::size_t o = 0; o < map.size(); ++o) {
    const auto& s = map[o];
    std::int64_t in_dim = -1;
    switch (s.kind) {
    case dim_kind::input_dim:
      in_dim = s.dims.front();
      break;
    case dim_kind::flatten:
      in_dim = flatten_first(st, s.dims);
      break;
    case dim_kind::split: {
      std::int64_t inner = -1;
      if (s.dims.size() == 1)
        inner = s.dims.front();
      else if (s.dims.size() > 1)
        inner = flatten_first(st, s.dims);
      if (s.split_id == 0 && inner >= 0) {
        const auto out_size = s.group[0];
        for (std::size_t m = 0; m < mesh.ndim(); ++m)
          st.shardable[static_cast<std::size_t>(inner)][m] = out_size % mesh.size(m) == 0;
        in_dim = inner;
      }
      break;
    }
    case dim_kind::singleton:
    case dim_kind::broadcast:
      break;
    }
    if (in_dim >= 0)
      shard_dim_map[in_dim] = static_cast<std::int64_t>(o);
  }
  return shard_dim_map;
}

// `op_text` describes the view for messages, e.g. `view [6, 3]→[18]`.
view_propagation propagate_dims(const rule_context& ctx, const tensor_spec& in, const dim_map& map,
                                bool strict, const std::string& op_text) {
  const auto nm = ctx.mesh_ndim();
  const auto& ps = in.placements;
  std::vector<bool> seen(in.ndim(), false);
  for (const auto& s : map) {
    for (auto d : s.dims)
      seen[static_cast<std::size_t>(d)] = true;
  }
  dims_state st{ctx, in, strict, op_text, std::vector<std::vector<bool>>(in.ndim())};
  for (std::size_t d = 0; d < in.ndim(); ++d)
    st.shardable[d].assign(nm, seen[d]);
  const auto shard_dim_map = follow_dims(st, map);
  view_propagation r;
  for (std::size_t m = 0; m < ps.size(); ++m) {
    const auto& p = ps[m];
    r.input_target.push_back(p.is_shard() && !st.shardable[static_cast<std::size_t>(p.dim)][m]
                                 ? placement::replicate()
                                 : p);
  }
  for (std::size_t m = 0; m < nm; ++m) {
    const auto& p = r.input_target[m];
    if (!p.is_shard()) {
      r.output.push_back(p);
      continue;
    }
    auto it = shard_dim_map.find(p.dim);
    if (it == shard_dim_map.end())
      expand_sharded(st, p, m);
    r.output.push_back(placement::shard(static_cast<std::int32_t>(it->second)));
  }
  return r;
}

rule_result single(const tensor_meta& out, const view_propagation& v) {
  rule_result r;
  r.outputs.push_back(out);
  r.candidates.push_back(candidate_strategy{{v.output}, {v.input_target}});
  return r;
}

tensor_meta meta_of(const shape_t& shape, dtype t) {
  return tensor_meta{shape, contiguous_strides(shape), t};
}

[[noreturn]] void view_size_error(const rule_context& ctx, const tensor_spec& in,
                                  const std::vector<std::int64_t>& size, std::string why) {
  auto d = make_diagnostic(
      codes::view_size, ctx.call().op, error_class::user_error, "invalid view size",
      fmt::format("{}: size [{}] is invalid for {} ({} elements): {}", ctx.short_op(),
                  fmt::join(size, ", "), ctx.describe_input(0), numel(in.shape()), why),
      "pass sizes whose product is the element count (at most one -1)");
  d.add_field("arg_index", std::int64_t{1});
  d.add_field("arg", ctx.arg_name(1));
  ctx.fail(error_class::user_error, std::move(d));
}

// Every rank's local view must hold as many elements as its input shard (PyTorch checks
// evenness per mesh dim only, then fails inside the local view).
void check_local_views(const rule_context& ctx, const tensor_spec& in, const view_propagation& v,
                       const shape_t& out, const std::string& op_text) {
  const tensor_spec from{in.meta, v.input_target};
  const tensor_spec to{meta_of(out, in.meta.type), v.output};
  const auto& mesh = ctx.mesh();
  for (std::int64_t r = 0; r < mesh.num_devices(); ++r) {
    const auto coord = mesh.coordinate(r);
    const auto a = local_shape_and_offset(from, mesh, coord);
    const auto b = local_shape_and_offset(to, mesh, coord);
    if (numel(a.shape) == numel(b.shape))
      continue;
    auto d = make_diagnostic(
        codes::view_local_mismatch, ctx.call().op, error_class::limitation,
        "local views would disagree",
        fmt::format("{}: {}: rank {} (coordinate [{}]) holds a {} block ({} elements) but would "
                    "need a {} block "
                    "({} elements) of the output {} {}; the shards of a tensor dim split over "
                    "several mesh dims are "
                    "uneven, so the merged output dim cannot be cut the same way",
                    op_text, ctx.describe_input(0), r, fmt::join(coord, ", "), to_string(a.shape),
                    numel(a.shape), to_string(b.shape), numel(b.shape), to_string(out),
                    to_string(v.output)),
        fmt::format("redistribute so that the merged dim is sharded on one mesh dim only, or to "
                    "Replicate, before the view: x.redistribute(mesh, {})",
                    placement_names(placement_list(mesh.ndim(), placement::replicate()))));
    d.add_field("arg_index", std::int64_t{0});
    d.add_field("arg", ctx.arg_name(0));
    d.add_field("placements", to_string(in.placements));
    d.add_field("shape", to_string(in.shape()));
    ctx.fail(error_class::limitation, std::move(d));
  }
}

rule_result view_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto size = ctx.ints_arg(1);
  shape_t out(size.begin(), size.end());
  const auto total = numel(in.shape());
  std::ptrdiff_t infer = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      if (infer >= 0)
        view_size_error(ctx, in, size, "only one dim can be -1");
      infer = static_cast<std::ptrdiff_t>(i);
    } else if (out[i] < 0) {
      view_size_error(ctx, in, size, fmt::format("dim {} is negative", i));
    } else {
      if (__builtin_mul_overflow(known, out[i], &known)) // sizes from outside: [2^40, 2^40]
        view_size_error(ctx, in, size, "the sizes hold more than 2^63 elements");
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      view_size_error(ctx, in, size, "the -1 dim cannot be inferred");
    out[static_cast<std::size_t>(infer)] = total / known;
  }
  if (numel(out) != total) {
    view_size_error(ctx, in, size, fmt::format("the sizes hold {} elements", numel(out)));
  }
  const auto op_text =
      fmt::format("{} {}→{}", ctx.short_op(), to_string(in.shape()), to_string(out));
  const auto v = propagate_dims(ctx, in, view_groups(in.shape(), out), true, op_text);
  check_local_views(ctx, in, v, out, op_text);
  return single(meta_of(out, in.meta.type), v);
}

rule_result permute_like(const rule_context& ctx, const tensor_spec& in,
                         const std::vector<std::int64_t>& perm) {
  dim_map map;
  shape_t out;
  for (auto d : perm) {
    map.push_back(dim_source{dim_kind::input_dim, {d}, {}, 0, 1});
    out.push_back(in.shape()[static_cast<std::size_t>(d)]);
  }
  const auto v = propagate_dims(ctx, in, map, false, ctx.short_op());
  return single(meta_of(out, in.meta.type), v);
}

rule_result transpose_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  const auto a = ctx.wrap_dim(ctx.int_arg(1), nd, 1);
  const auto b = ctx.wrap_dim(ctx.int_arg(2), nd, 2);
  std::vector<std::int64_t> perm(in.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  if (nd > 0)
    std::swap(perm[static_cast<std::size_t>(a)], perm[static_cast<std::size_t>(b)]);
  return permute_like(ctx, in, perm);
}

rule_result permute_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto dims = ctx.ints_arg(1);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  std::vector<std::int64_t> perm;
  std::vector<bool> used(in.ndim(), false);
  for (auto d : dims) {
    const auto w = ctx.wrap_dim(d, nd, 1);
    if (static_cast<std::size_t>(w) >= used.size() || used[static_cast<std::size_t>(w)]) {
      ctx.fail(error_class::user_error, codes::bad_arguments, "permutation repeats a dim",
               fmt::format("{}: dims [{}] is not a permutation of the {} dims of {}",
                           ctx.short_op(), fmt::join(dims, ", "), nd, ctx.describe_input(0)),
               "name every dim exactly once");
    }
    used[static_cast<std::size_t>(w)] = true;
    perm.push_back(w);
  }
  if (perm.size() != in.ndim()) {
    ctx.fail(error_class::user_error, codes::bad_arguments, "permutation has the wrong length",
             fmt::format("{}: dims [{}] names {} dims but {} has {}", ctx.short_op(),
                         fmt::join(dims, ", "), perm.size(), ctx.describe_input(0), nd),
             "name every dim exactly once");
  }
  return permute_like(ctx, in, perm);
}

rule_result t_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  if (in.ndim() > 2) {
    ctx.fail(error_class::user_error, codes::bad_arguments, "t() needs at most 2 dims",
             fmt::format("{}: {} has {} dims; t() transposes 2-D tensors", ctx.short_op(),
                         ctx.describe_input(0), in.ndim()),
             "use transpose(dim0, dim1) or permute(...) for higher ranks");
  }
  std::vector<std::int64_t> perm(in.ndim());
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  return permute_like(ctx, in, perm);
}

rule_result unsqueeze_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  const auto at = ctx.wrap_dim(ctx.int_arg(1), nd + 1, 1);
  dim_map map;
  shape_t out;
  for (std::int64_t d = 0; d < nd; ++d) {
    if (d == at) {
      map.push_back(dim_source{});
      out.push_back(1);
    }
    map.push_back(dim_source{dim_kind::input_dim, {d}, {}, 0, 1});
    out.push_back(in.shape()[static_cast<std::size_t>(d)]);
  }
  if (at == nd) {
    map.push_back(dim_source{});
    out.push_back(1);
  }
  const auto v = propagate_dims(ctx, in, map, false, ctx.short_op());
  return single(meta_of(out, in.meta.type), v);
}

rule_result squeeze_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto nd = static_cast<std::int64_t>(in.ndim());
  const auto at = ctx.wrap_dim(ctx.int_arg(1), nd, 1);
  dim_map map;
  shape_t out;
  for (std::int64_t d = 0; d < nd; ++d) {
    const auto s = in.shape()[static_cast<std::size_t>(d)];
    if (d == at && s == 1)
      continue;
    map.push_back(dim_source{dim_kind::input_dim, {d}, {}, 0, 1});
    out.push_back(s);
  }
  const auto v = propagate_dims(ctx, in, map, false, ctx.short_op());
  return single(meta_of(out, in.meta.type), v);
}

rule_result expand_rule(const rule_context& ctx) {
  const auto& in = ctx.tensor_arg(0);
  const auto size = ctx.ints_arg(1);
  if (size.size() < in.ndim()) {
    view_size_error(ctx, in, size, fmt::format("expand needs at least {} sizes", in.ndim()));
  }
  const auto lead = size.size() - in.ndim();
  dim_map map;
  shape_t out;
  for (std::size_t i = 0; i < size.size(); ++i) {
    const auto want = size[i];
    if (i < lead) {
      if (want < 0)
        view_size_error(ctx, in, size, fmt::format("new leading dim {} cannot be -1", i));
      map.push_back(want == 1 ? dim_source{} : dim_source{dim_kind::broadcast, {}, {}, 0, want});
      out.push_back(want);
      continue;
    }
    const auto d = static_cast<std::int64_t>(i - lead);
    const auto have = in.shape()[static_cast<std::size_t>(d)];
    if (want != -1 && want != have && have != 1) {
      view_size_error(
          ctx, in, size,
          fmt::format("dim {} has size {} and can only expand from size 1 (asked for {})", d, have,
                      want));
    }
    const bool keep = want == -1 || want == 1 || want == have;
    map.push_back(keep ? dim_source{dim_kind::input_dim, {d}, {}, 0, 1}
                       : dim_source{dim_kind::broadcast, {d}, {}, 0, want});
    out.push_back(want == -1 ? have : want);
  }
  const auto op_text =
      fmt::format("{} {}→{}", ctx.short_op(), to_string(in.shape()), to_string(out));
  const auto v = propagate_dims(ctx, in, map, false, op_text);
  return single(meta_of(out, in.meta.type), v);
}

} // namespace

void add_view_rules(op_registry& registry) {
  registry.add(op_rule{"aten.view.default", "view", {"self", "size"}, false, view_rule});
  registry.add(
      op_rule{"aten.transpose.int", "view", {"self", "dim0", "dim1"}, false, transpose_rule});
  registry.add(op_rule{"aten.permute.default", "view", {"self", "dims"}, false, permute_rule});
  registry.add(op_rule{"aten.t.default", "view", {"self"}, false, t_rule});
  registry.add(op_rule{"aten.unsqueeze.default", "view", {"self", "dim"}, false, unsqueeze_rule});
  registry.add(op_rule{"aten.squeeze.dim", "view", {"self", "dim"}, false, squeeze_rule});
  registry.add(
      op_rule{"aten.expand.default", "view", {"self", "size", "implicit"}, false, expand_rule});
}

} // namespace tdiag::dtensor::detail
