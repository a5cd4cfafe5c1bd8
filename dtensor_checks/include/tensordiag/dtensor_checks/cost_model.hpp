// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The α–β communication cost model of PyTorch's _collective_utils.py: per mesh dim bandwidth
// and latency from the mesh topology, per collective cost in µs, and redistribute_cost()
// walking the same transform plan as the redistribution itself.
#pragma once

#include <tensordiag/dtensor_checks/mesh.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <vector>

namespace tdiag::dtensor {

/// Bandwidth (GB/s) and latency (µs) per mesh dim.
struct mesh_topology {
  std::vector<std::int64_t> devices;
  std::vector<double> bandwidth;
  std::vector<double> latency;

  /// Walks the mesh dims last→first with a running product of sizes; a dim whose running
  /// product exceeds `devices_per_host` is inter-host (BW × 0.22, 2.7 µs), else intra-host
  /// (87.7 GB/s, 0.6 µs). A CPU mesh (PyTorch's fake process group) has 1 device per host.
  [[nodiscard]] static mesh_topology build(const device_mesh& mesh,
                                           std::int64_t devices_per_host = 1);
};

/// Costs in µs of one collective over `bytes_gb` GiB on `mesh_dim`.
[[nodiscard]] double all_gather_cost(double bytes_gb, const mesh_topology& topo,
                                     std::size_t mesh_dim);
[[nodiscard]] double all_reduce_cost(double bytes_gb, const mesh_topology& topo,
                                     std::size_t mesh_dim);
[[nodiscard]] double reduce_scatter_cost(double bytes_gb, const mesh_topology& topo,
                                         std::size_t mesh_dim);

/// PyTorch 2.11's redistribute_cost(current, target): 0 when `current` is all-Replicate or equal
/// to `target`; otherwise the sum of the plan's steps (S→R all-gather of the grown buffer, S→S'
/// all-gather + 1.0 penalty, P→R all-reduce, P→S reduce-scatter then bytes/n, R→S free and
/// bytes/n, R→P free) and +inf for S→P and P(a)→P(b).
[[nodiscard]] double redistribute_cost(const device_mesh& mesh, const tensor_meta& meta,
                                       const placement_list& current, const placement_list& target,
                                       const mesh_topology& topo);

} // namespace tdiag::dtensor
