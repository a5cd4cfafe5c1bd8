// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/redistribute.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace tdiag::dtensor {

std::string_view to_string(collective c) noexcept {
  switch (c) {
  case collective::none:
    return "local";
  case collective::all_gather:
    return "all_gather";
  case collective::all_reduce:
    return "all_reduce";
  case collective::reduce_scatter:
    return "reduce_scatter";
  case collective::all_to_all:
    return "all_to_all";
  }
  return "local";
}

std::optional<collective> parse_collective(std::string_view text) noexcept {
  if (text == "none" || text == "local")
    return collective::none;
  for (auto c : {collective::all_gather, collective::all_reduce, collective::reduce_scatter,
                 collective::all_to_all}) {
    if (text == to_string(c))
      return c;
  }
  return std::nullopt;
}

std::int64_t comm_counts::total() const noexcept {
  std::int64_t n = 0;
  for (std::size_t i = 1; i < by_kind.size(); ++i)
    n += by_kind[i];
  return n;
}

const redistribute_step* redistribution_plan::first_problem() const noexcept {
  for (const auto& s : steps) {
    if (s.problem != step_problem::none)
      return &s;
  }
  return nullptr;
}

comm_counts redistribution_plan::counts() const noexcept {
  comm_counts c;
  for (const auto& s : steps) {
    if (s.counted != collective::none)
      c.add(s.counted);
  }
  return c;
}

collective transition_collective(const placement& from, const placement& to,
                                 const plan_options& options) noexcept {
  if (from.is_shard() && to.is_replicate())
    return collective::all_gather;
  if (from.is_shard() && to.is_shard())
    return collective::all_to_all;
  if (from.is_partial() && to.is_replicate())
    return collective::all_reduce;
  if (from.is_partial() && to.is_shard())
    return collective::reduce_scatter;
  // A Partial of another kind is reduced, then partitioned locally into the target.
  if (from.is_partial() && to.is_partial() && options.reduce_mismatched_partials)
    return collective::all_reduce;
  return collective::none;
}

namespace {
struct transform {
  std::size_t mesh_dim;
  placement from;
  placement to;
};

// PyTorch 2.11's _gen_transform_infos: greedy, inner→outer first when the source is sharded.
// Calls `emit(transform)` per step; never allocates.
template <typename Emit>
void for_each_transform(const device_mesh& mesh, const placement_list& current,
                        const placement_list& target, Emit&& emit) {
  const auto nd = current.size();
  if (nd == 1) {
    if (current[0] != target[0])
      emit(transform{0, current[0], target[0]});
    return;
  }
  placement_list cur = current;
  if (num_shards(mesh, current) > 1) {
    for (std::size_t m = nd; m-- > 0;) {
      placement t = target[m];
      if (t.is_shard()) {
        for (std::size_t i = 0; i < m; ++i) {
          if (cur[i].is_shard(t.dim) != target[i].is_shard(t.dim))
            t = placement::replicate();
        }
      }
      if (cur[m] != t) {
        emit(transform{m, cur[m], t});
        cur[m] = t;
      }
    }
  }
  for (std::size_t m = 0; m < nd; ++m) {
    if (cur[m] != target[m]) {
      emit(transform{m, cur[m], target[m]});
      cur[m] = target[m];
    }
  }
}

constexpr double gib = 1024.0 * 1024.0 * 1024.0;

// The step's collective, its α–β time and the local bytes after it (PyTorch's
// _compute_placement_transition_cost); `bytes` is updated in place.
redistribute_step make_step(const transform& t, const device_mesh& mesh, const mesh_topology& topo,
                            double& bytes, const plan_options& options) {
  redistribute_step s;
  s.mesh_dim = t.mesh_dim;
  s.from = t.from;
  s.to = t.to;
  const auto n = static_cast<double>(mesh.size(t.mesh_dim));
  s.comm = transition_collective(t.from, t.to, options);
  s.counted = s.comm == collective::all_to_all ? collective::all_gather : s.comm;
  switch (s.comm) {
  case collective::all_gather:
    bytes *= n;
    s.time_us = all_gather_cost(bytes / gib, topo, t.mesh_dim);
    break;
  case collective::all_to_all: // priced as the all-gather the corpus counts
    s.time_us = all_gather_cost(bytes / gib, topo, t.mesh_dim);
    break;
  case collective::all_reduce:
    s.time_us = all_reduce_cost(bytes / gib, topo, t.mesh_dim);
    break;
  case collective::reduce_scatter:
    s.time_us = reduce_scatter_cost(bytes / gib, topo, t.mesh_dim);
    s.bytes_per_rank = static_cast<std::int64_t>(std::llround(bytes));
    bytes /= n;
    return s;
  case collective::none:
    if (t.from.is_replicate() && t.to.is_shard()) {
      bytes /= n;
    } else if (t.from.is_shard() && t.to.is_partial()) {
      s.problem = step_problem::shard_to_partial;
      s.time_us = std::numeric_limits<double>::infinity();
    } else if (t.from.is_partial() && t.to.is_partial()) {
      s.problem = step_problem::partial_to_partial;
      s.time_us = std::numeric_limits<double>::infinity();
    }
    break;
  }
  // llround of a double past INT64_MAX is undefined: saturated as global_bytes() is.
  s.bytes_per_rank = !std::isfinite(bytes) ? 0
                     : bytes >= 0x1p63     ? std::numeric_limits<std::int64_t>::max()
                                           : static_cast<std::int64_t>(std::llround(bytes));
  return s;
}

double initial_bytes(const device_mesh& mesh, const tensor_meta& meta,
                     const placement_list& current) {
  return static_cast<double>(global_bytes(meta)) / static_cast<double>(num_shards(mesh, current));
}
} // namespace

double redistribute_cost(const device_mesh& mesh, const tensor_meta& meta,
                         const placement_list& current, const placement_list& target,
                         const mesh_topology& topo) {
  if (all_replicate(current))
    return 0.0;
  if (current == target || current.size() != target.size())
    return 0.0;
  double bytes = initial_bytes(mesh, meta, current);
  double cost = 0.0;
  for_each_transform(mesh, current, target, [&](const transform& t) {
    const auto s = make_step(t, mesh, topo, bytes, plan_options{});
    cost += s.time_us;
    // PyTorch penalises a shard-dim change: all-to-all is not modelled, so it prefers gathers.
    if (t.from.is_shard() && t.to.is_shard())
      cost += 1.0;
  });
  return cost;
}

redistribution_plan plan_redistribution(const device_mesh& mesh, const tensor_meta& meta,
                                        const placement_list& current, const placement_list& target,
                                        const mesh_topology& topo, const plan_options& options) {
  redistribution_plan plan;
  plan.current = current;
  plan.target = target;
  if (current == target || current.size() != target.size())
    return plan;
  double bytes = initial_bytes(mesh, meta, current);
  for_each_transform(mesh, current, target, [&](const transform& t) {
    auto s = make_step(t, mesh, topo, bytes, options);
    // Steps on a size-1 mesh dim move nothing.
    if (mesh.size(t.mesh_dim) == 1 && s.problem == step_problem::none) {
      s.comm = s.counted = collective::none;
      s.time_us = 0.0;
    }
    plan.time_us += s.time_us;
    plan.steps.push_back(s);
  });
  return plan;
}

namespace {
std::string with_thousands(std::int64_t v) {
  auto digits = fmt::format("{}", v < 0 ? -v : v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return v < 0 ? "-" + out : out;
}
} // namespace

std::string to_string(const redistribute_step& step, const device_mesh& mesh) {
  std::string what;
  switch (step.problem) {
  case step_problem::shard_to_partial:
    what = "not possible (a shard cannot become a pending reduction)";
    break;
  case step_problem::partial_to_partial:
    what = "not possible (Partial kinds differ)";
    break;
  case step_problem::none:
    if (step.comm == collective::none) {
      what = step.to.is_partial() ? "local partition" : "local chunk";
    } else if (step.comm == collective::all_to_all) {
      what = "all_to_all (all_gather + chunk on CPU process groups)";
    } else {
      what = std::string(to_string(step.comm));
    }
    break;
  }
  auto out = fmt::format("{}→{} on {}: {}", to_string(step.from), to_string(step.to),
                         mesh.dim_label(step.mesh_dim), what);
  if (step.problem == step_problem::none) {
    out += fmt::format(", {} bytes per rank", with_thousands(step.bytes_per_rank));
    if (step.comm != collective::none)
      out += fmt::format(", {:.1f} µs", step.time_us);
  }
  return out;
}

} // namespace tdiag::dtensor
