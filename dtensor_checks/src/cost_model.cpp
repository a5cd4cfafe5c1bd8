// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/cost_model.hpp>

#include <limits>

namespace tdiag::dtensor {
namespace {
// PyTorch's constants (_collective_utils.py): NVLink-class bandwidth and latency, scaled for
// inter-host links; 6.6 µs base latency per collective.
constexpr double intra_bandwidth_gbs = 87.7;
constexpr double intra_latency_us = 0.6;
constexpr double inter_bandwidth_factor = 0.22;
constexpr double inter_latency_us = 2.7;
constexpr double base_latency_us = 6.6;
} // namespace

mesh_topology mesh_topology::build(const device_mesh& mesh, std::int64_t devices_per_host) {
  mesh_topology t;
  const auto n = mesh.ndim();
  t.devices.assign(n, 1);
  t.bandwidth.assign(n, intra_bandwidth_gbs);
  t.latency.assign(n, intra_latency_us);
  std::int64_t total = 1;
  for (std::size_t i = n; i-- > 0;) {
    t.devices[i] = mesh.size(i);
    total *= mesh.size(i);
    if (total > devices_per_host) {
      t.bandwidth[i] *= inter_bandwidth_factor;
      t.latency[i] = inter_latency_us;
    }
  }
  return t;
}

double all_gather_cost(double bytes_gb, const mesh_topology& topo, std::size_t mesh_dim) {
  const auto n = static_cast<double>(topo.devices[mesh_dim]);
  const double hops = n - 1;
  const double latency = base_latency_us + hops * topo.latency[mesh_dim];
  const double bw = (bytes_gb * hops / n) / topo.bandwidth[mesh_dim];
  return latency + bw * 1e6;
}

double all_reduce_cost(double bytes_gb, const mesh_topology& topo, std::size_t mesh_dim) {
  const auto n = static_cast<double>(topo.devices[mesh_dim]);
  const double hops = 2 * (n - 1);
  const double latency = base_latency_us + hops * topo.latency[mesh_dim];
  const double bw = (bytes_gb * hops / n) / topo.bandwidth[mesh_dim];
  return latency + bw * 1e6;
}

double reduce_scatter_cost(double bytes_gb, const mesh_topology& topo, std::size_t mesh_dim) {
  return all_gather_cost(bytes_gb, topo, mesh_dim);
}

} // namespace tdiag::dtensor
