// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Checks of a real distributed tensor, run collectively by every rank with its local tensor and
// the DTensor spec: (1) Replicate mesh dims hold identical data on every rank (hash, all_gather of
// the hashes, and on a mismatch block hashes and the first differing element with the ranks that
// disagree); (2) the local shape (and offset) matches the spec's torch.chunk layout; (3) NaN/Inf
// per rank; (4) Partial mesh dims reduce to finite values and, on request, to a reference. The
// result is a tdiag::report per rank (metadata.rank set), merged with `tdiag report merge`.
#pragma once

#include <tensordiag/core/report.hpp>
#include <tensordiag/dtensor_checks/comm/communicator.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>

#include <optional>
#include <string>

namespace tdiag::dtensor::runtime {

/// A rank's local tensor: contiguous memory the scan back-end can read, its shape and dtype.
struct local_tensor {
  const void* data = nullptr;
  shape_t shape;
  dtype type = dtype::float32;
  [[nodiscard]] std::int64_t bytes() const noexcept { return numel(shape) * itemsize(type); }
};

struct check_options {
  bool replicas = true;
  bool shapes = true;
  bool nonfinite = true;
  bool partials = true;
  std::string tensor_name = "tensor";    ///< named in every message
  std::optional<shape_t> claimed_offset; ///< the global offset the program believes this rank has
  /// This rank's expected local values after every Partial mesh dim is reduced (float64 host
  /// tensor); compared at `rtol` (atol = rtol * max|reference|).
  std::optional<sim::dense_tensor> partial_reference;
  double rtol = 1e-5;
  std::int64_t hash_blocks = 4096; ///< second pass: block hashes per replica group
};

/// Runs every enabled check. Collective over comms.world(): every rank calls it with the same
/// spec and options (the local data differ). The communicators must take host memory; `backend`
/// reads the local data. Findings are error diagnostics (TDIAG-DT-201..205) with fields `rank`,
/// `mesh_dim`, `index`, ...; a clean tensor gives a report without diagnostics.
[[nodiscard]] report check_local_tensor(const local_tensor& local, const tensor_spec& spec,
                                        const comm::mesh_communicators& comms,
                                        scan_backend& backend, const check_options& options = {});

} // namespace tdiag::dtensor::runtime
