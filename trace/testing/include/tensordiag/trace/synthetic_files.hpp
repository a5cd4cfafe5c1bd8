// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Synthetic input files of any size, written as they are generated (nothing is held in memory:
// a 100M-event snapshot cannot be built as Python objects in 24 GiB), for the scaling
// benchmarks, the viewer's stress runs and tests. Deterministic for a seed; Python's
// pickle.load / json.load read both.
//
// Snapshot: the dict torch.cuda.memory._dump_snapshot() pickles, in protocol 4 as Python writes
// it (every dict, list and str memoized, APPENDS in batches of 1000): `devices` device_traces
// lists with 3 streams each and a caching-allocator cycle (segment_alloc, alloc,
// free_requested, free_completed, segment_free), tracebacks from a pool of 48 frame lists shared
// through the memo, the segments and blocks alive at the end, allocator_settings and an empty
// external_annotations.
// Kineto: PyTorch-profiler Chrome trace JSON: CPU ops on two host threads launching kernels and
// copies (cudaLaunchKernel / cudaMemcpyAsync with ac2g flows) onto `devices` GPUs x 2 streams,
// [memory] instants and one ProfilerStep annotation per step.
#pragma once

#include <cstdint>
#include <filesystem>

namespace tdiag::trace {

struct synthetic_file_options {
  std::uint64_t events = 1'000'000; ///< at least this many trace entries / trace events
  std::uint32_t devices = 4;
  std::uint64_t seed = 1;
};

struct synthetic_file_stats {
  std::uint64_t events = 0; ///< trace entries (snapshot) or traceEvents (Kineto) written
  std::uint64_t bytes = 0;
};

/// Writes a snapshot pickle to `path` through tdiag::output_file (TDIAG-CORE-005 on failure).
synthetic_file_stats write_synthetic_snapshot(const std::filesystem::path& path,
                                              const synthetic_file_options& options = {});
/// Writes a Kineto Chrome-trace JSON file to `path` likewise.
synthetic_file_stats write_synthetic_kineto(const std::filesystem::path& path,
                                            const synthetic_file_options& options = {});

} // namespace tdiag::trace
