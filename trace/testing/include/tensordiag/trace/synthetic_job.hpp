// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A synthetic distributed training job, one finalized trace per rank, shaped like PyTorch
// profiler traces of tensor- and data-parallel training: per ProfilerStep, layers of compute
// kernels (each launched by cudaLaunchKernel inside an aten operator on the main thread) and a
// tensor-parallel all-reduce per layer (NCCL on its own stream, launched inside c10d::allreduce_),
// a data-parallel all-reduce of the gradients and a world all-reduce of the loss at the end of
// the step. The ranks are simulated on one clock, so every collective ends together (within a
// jitter) when its last member arrives; then each rank's clock is shifted. Delays can be
// planted: a long kernel or a host gap (the host stuck in the data loader) on one rank before
// one collective. For the clock and straggler tests and the 64-rank scale benchmark.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tdiag::trace {

struct planted_delay {
  enum class kind : std::uint8_t { kernel, host_gap };
  int rank = 0;
  int step = 0;          ///< the ProfilerStep (numbered from 1)
  std::size_t layer = 0; ///< before this layer's tensor-parallel all-reduce
  kind what = kind::kernel;
  std::int64_t ns = 2'000'000;
};

struct synthetic_job_options {
  std::uint32_t ranks = 8;
  std::uint32_t tensor_parallel = 4; ///< ranks per tensor-parallel group (1: none)
  std::uint32_t steps = 4;
  std::size_t layers = 16;           ///< per step
  std::size_t kernels_per_layer = 6; ///< compute kernels between two all-reduces
  /// Every rank's clock is off by a uniform draw in [-max, max] (rank 0's too).
  std::int64_t max_clock_shift_ns = 5'000'000;
  /// A collective's end on each member: the last arrival plus its duration plus a draw in
  /// [-jitter, jitter] (the network's skew).
  std::int64_t end_jitter_ns = 300;
  bool with_seq = false; ///< write "Seq" on the collectives (recent PyTorch does)
  std::vector<planted_delay> delays;
  std::uint64_t seed = 1;
};

struct synthetic_job {
  std::vector<trace> traces;                ///< per rank, finalized
  std::vector<std::int64_t> clock_error_ns; ///< per rank: its clock minus the job's
  /// What analyze_job should find: the offset of rank r against rank 0,
  /// clock_error_ns[0] - clock_error_ns[r].
  [[nodiscard]] std::int64_t expected_offset_ns(std::size_t rank) const {
    return clock_error_ns[0] - clock_error_ns[rank];
  }
};

/// About 3 events per kernel plus 4 per collective; `events_per_rank` sizes `layers`.
[[nodiscard]] synthetic_job make_synthetic_job(const synthetic_job_options& options = {});

/// The layers per step that give about `events_per_rank` events per rank.
[[nodiscard]] std::size_t layers_for_events(const synthetic_job_options& options,
                                            std::size_t events_per_rank);

} // namespace tdiag::trace
