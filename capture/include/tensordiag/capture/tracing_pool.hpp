// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A stream-ordered allocator over a CUDA memory pool (cudaMallocAsync / cudaMallocFromPoolAsync
// through the driver API) that records every allocation and free, with the caller's host stack
// when the session captures stacks, into the running capture session. Put it under a caching
// allocator to see the sub-allocations CUPTI never does, or call record_allocation() /
// record_free() (capture.hpp) from the caching allocator itself.
#pragma once

#include <tensordiag/capture/capture.hpp>

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tdiag::capture {

/// Counters of one tracing_pool (kept whether or not a capture session runs).
struct pool_stats {
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_bytes = 0;
};

class TDIAG_CAPTURE_API tracing_pool {
public:
  /// Allocates from `pool`, or from the current device's current pool (what cudaMallocAsync
  /// uses) when `pool` is nullptr. `name` tags its events in the trace (user_metadata).
  /// A cudaMemPool_t converts to CUmemoryPool and a cudaStream_t to CUstream (same types).
  explicit tracing_pool(CUmemoryPool pool = nullptr, std::string name = "tracing_pool");
  tracing_pool(const tracing_pool&) = delete;
  tracing_pool& operator=(const tracing_pool&) = delete;

  /// `bytes` of device memory, usable in stream order on `stream`. Throws tdiag::error
  /// TDIAG-CAPTURE-010 when the driver refuses (the trace then holds an oom event).
  [[nodiscard]] void* allocate(std::size_t bytes, CUstream stream);
  /// Frees `p` (from allocate(), `bytes` as allocated) in stream order on `stream`. Throws
  /// tdiag::error TDIAG-CAPTURE-011 when the driver refuses.
  void deallocate(void* p, std::size_t bytes, CUstream stream);

  [[nodiscard]] CUmemoryPool pool() const noexcept { return pool_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  /// Thread-safe snapshot.
  [[nodiscard]] pool_stats stats() const noexcept;

private:
  CUmemoryPool pool_;
  std::string name_;
  std::atomic<std::uint64_t> allocations_{0};
  std::atomic<std::uint64_t> frees_{0};
  std::atomic<std::uint64_t> live_bytes_{0};
  std::atomic<std::uint64_t> peak_bytes_{0};
};

} // namespace tdiag::capture
