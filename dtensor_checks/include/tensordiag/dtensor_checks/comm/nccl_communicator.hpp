// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The NCCL communicator (tensordiag_dtensor_gpu, built when TDIAG_WITH_NCCL): one rank per
// process and GPU, created with ncclCommInitRank from a unique id that rank 0 publishes through
// an id_store. Plain C++ header: no CUDA or NCCL headers needed.
#pragma once

#include <tensordiag/dtensor_checks/comm/communicator.hpp>
#include <tensordiag/dtensor_checks/comm/id_store.hpp>

#include <chrono>
#include <memory>

namespace tdiag::dtensor::comm {

struct nccl_options {
  int device = 0;         ///< CUDA device of this rank (cudaSetDevice before init)
  void* stream = nullptr; ///< cudaStream_t for the collectives; nullptr = a stream of its own
  /// Buffers are host memory, staged through device buffers for each call (for the runtime
  /// checks' small exchanges and the plan executor); otherwise they must be device memory.
  bool host_buffers = false;
  std::chrono::milliseconds id_timeout{60'000};
};

/// Rank `rank` of `size`. Rank 0 creates the unique id and publishes it to the `size - 1` others
/// through `store`. Every call synchronises its stream before returning. Throws tdiag::error
/// (TDIAG-DT-302 for NCCL and CUDA failures, TDIAG-DT-303 for the id exchange).
[[nodiscard]] std::unique_ptr<communicator>
make_nccl_communicator(int rank, int size, id_store& store, const nccl_options& options = {});

/// The NCCL version the library was built against, e.g. 22809.
[[nodiscard]] int nccl_version() noexcept;

} // namespace tdiag::dtensor::comm
