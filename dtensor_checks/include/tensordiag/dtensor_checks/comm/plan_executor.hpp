// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Executes a redistribution plan (redistribute.hpp) on one rank's local tensor through the mesh's
// communicators: S→R all-gather, P→R all-reduce, P→S reduce-scatter, S(i)→S(j) all-to-all, R→S a
// local chunk and R→P a local partition. Uneven shards are padded to the largest chunk for the
// collective and trimmed afterwards, as PyTorch does.
#pragma once

#include <tensordiag/dtensor_checks/comm/communicator.hpp>
#include <tensordiag/dtensor_checks/redistribute.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>

namespace tdiag::dtensor::comm {

/// This rank's local tensor after `plan`, given its local tensor `local` for `plan.current` and the
/// global `meta`. Collective: every rank of comms.world() calls it with the same plan. Throws
/// tdiag::error (TDIAG-DT-304) for a step PyTorch refuses (S→P, P(a)→P(b)) or a local shape that
/// does not fit the spec. The communicators must take host memory.
[[nodiscard]] sim::dense_tensor execute_plan(const redistribution_plan& plan,
                                             const tensor_meta& meta,
                                             const sim::dense_tensor& local,
                                             const mesh_communicators& comms);

} // namespace tdiag::dtensor::comm
