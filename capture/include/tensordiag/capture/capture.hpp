// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The capture session of libtdiag_capture.so: CUPTI activity records (kernels, copies, memsets,
// allocations, memory pools, runtime and driver API calls) and host events (tracing_pool, the
// assertion runtime's launches and failures) written to one .tdtrace file by a background
// writer. Started by the CUDA driver through CUDA_INJECTION64_PATH (InitializeInjection, options
// from the environment) or by a program that links the library and calls start().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#if defined(_WIN32)
#  define TDIAG_CAPTURE_API
#else
#  define TDIAG_CAPTURE_API __attribute__((visibility("default")))
#endif

namespace tdiag::capture {

struct options {
  /// The .tdtrace file to write. Empty: "tdiag-<pid>.tdtrace" in the working directory.
  std::string output;
  /// Capture the host stack of every kernel launch and stream-ordered allocation through the
  /// CUPTI callback API (symbolized on the writer side, never on the launching thread).
  bool stacks = false;
  /// Subscribe to CUPTI callbacks: tensordiag launch ids on kernels, teardown flushes (and the
  /// stacks above). Off: activity records only, for the least overhead; `stacks` turns it on.
  bool callbacks = true;
  /// Copies, memsets, allocations and memory-pool records (MEMCPY, MEMSET, MEMORY2, MEMORY_POOL).
  bool memory = true;
  /// Runtime API activity records (cudaXxx), and driver API records (cuXxx): what ties a kernel
  /// to its host thread and call. Off by default (they cost launch-bound programs 15-26 points
  /// more than kernel records, docs/capture.md); `stacks` turns both on (the stack's home).
  bool runtime_api = false;
  bool driver_api = false;
  /// Bytes of each CUPTI activity buffer (8-byte aligned; recycled).
  std::uint64_t buffer_bytes = std::uint64_t{4} << 20;
  /// Device memory CUPTI keeps per context for kernel timestamps before it must flush them to a
  /// host buffer (0 = CUPTI's default, 3 MiB: about 64k kernels). A larger one takes flushes out
  /// of the launch path of long bursts of small kernels.
  std::uint64_t device_buffer_bytes = std::uint64_t{32} << 20;
  /// zstd level of the file's chunks.
  int compression_level = 3;
  /// CUPTI's periodic flush of full buffers, in milliseconds (0 = CUPTI's heuristics).
  std::uint32_t flush_period_ms = 500;
  /// Capture ranges, ';' between them (range_spec.hpp): "cuda-profiler-api", "nvtx:NAME",
  /// "launches:A:B", "time:DELAY:DURATION". Empty: everything from start() to stop(). Outside
  /// every range no CUPTI activity kind is enabled.
  std::string ranges;
  /// Extra trace properties (from_environment(): the process's rank, process_output.hpp).
  std::vector<std::pair<std::string, std::string>> properties;

  /// Options from TDIAG_CAPTURE_OUTPUT, TDIAG_CAPTURE_STACKS (1/0), TDIAG_CAPTURE_CALLBACKS (1/0),
  /// TDIAG_CAPTURE_MEMORY, TDIAG_CAPTURE_RUNTIME_API, TDIAG_CAPTURE_DRIVER_API,
  /// TDIAG_CAPTURE_RANGES, TDIAG_CAPTURE_BUFFER_MB, TDIAG_CAPTURE_DEVICE_BUFFER_MB,
  /// TDIAG_CAPTURE_ZSTD_LEVEL, TDIAG_CAPTURE_FLUSH_MS. With TDIAG_CAPTURE_EXCLUSIVE=1 (what `tdiag
  /// capture` sets) the first process to claim TDIAG_CAPTURE_OUTPUT writes it and later ones
  /// (workers, subprocesses) write
  /// "<stem>.<pid>.tdtrace" beside it. TDIAG_CAPTURE_OUTPUT_DIR (what `tdiag capture -o dir/`
  /// sets) overrides TDIAG_CAPTURE_OUTPUT: each process claims "<dir>/rank<R>.tdtrace" by its
  /// launcher's rank, else "<dir>/pid<P>.tdtrace" (process_output.hpp). The rank is in the
  /// properties either way. Unset variables keep the defaults.
  [[nodiscard]] TDIAG_CAPTURE_API static options from_environment();
};

/// What a session saw so far (or in total, after stop()).
struct stats {
  std::uint64_t buffers_completed = 0;
  std::uint64_t records = 0; ///< CUPTI records converted
  std::uint64_t kernels = 0;
  std::uint64_t copies = 0; ///< memcpy + memset
  std::uint64_t api_calls = 0;
  std::uint64_t memory_events = 0;   ///< CUPTI MEMORY2/MEMORY_POOL + tracing_pool + hooks
  std::uint64_t dropped_records = 0; ///< cuptiActivityGetNumDroppedRecords, summed
  std::uint64_t stacks_captured = 0;
  std::uint64_t events_written = 0; ///< by the .tdtrace writer
  std::uint64_t file_bytes = 0;
};

/// Starts capturing into `opts.output`. Idempotent while a session runs (a second call returns
/// false and changes nothing). Registers an atexit handler that stops the session. Throws
/// tdiag::error (TDIAG-CAPTURE-001 CUPTI failure, TDIAG-TR-320 file not creatable).
TDIAG_CAPTURE_API bool start(const options& opts = options::from_environment());
/// Flushes every CUPTI buffer (forced: incomplete ones too), writes the footer and closes the
/// file. Idempotent; a no-op without a session. Never call from a CUPTI callback.
TDIAG_CAPTURE_API void stop();
/// Hands every completed CUPTI buffer and host event to the writer and waits until they are in
/// the file (not forced: records of work still running stay in CUPTI). Thread-safe.
TDIAG_CAPTURE_API void flush();
/// True between a successful start() and stop().
[[nodiscard]] TDIAG_CAPTURE_API bool active() noexcept;
/// A consistent copy of the counters.
[[nodiscard]] TDIAG_CAPTURE_API stats current_stats();
/// Nanoseconds on the trace's time axis now (CLOCK_REALTIME minus the session's time origin).
[[nodiscard]] TDIAG_CAPTURE_API std::int64_t now_ns() noexcept;

/// The assertion runtime's launch registry, seen by the trace: a "tdiag.launch" marker on the
/// calling thread, and the launch id on the kernel record of the next kernel launched by this
/// thread (matched through the CUPTI correlation id). Call right before launching. Cheap no-op
/// when no session is active.
TDIAG_CAPTURE_API void record_launch(std::uint64_t launch_id, const char* kernel_name) noexcept;
/// A failed device assertion: an assertion_event with its site ("file.cu:42: i < n"),
/// formatted message, device, block and thread, at the current time. `stream` is the CUPTI
/// stream id when known, else 0. No-op when no session is active.
TDIAG_CAPTURE_API void record_assertion(std::uint64_t launch_id, std::int32_t device,
                                        std::uint64_t stream, const char* site, const char* message,
                                        const std::uint32_t block[3],
                                        const std::uint32_t thread[3]) noexcept;

/// Memory events of allocators CUPTI cannot see (caching allocators' sub-allocations): an
/// allocation or free of `size` bytes at `address`, with the caller's host stack when the
/// session captures stacks, tagged `tag` (the trace's user_metadata). No-op without a session.
TDIAG_CAPTURE_API void record_allocation(const void* address, std::uint64_t size,
                                         std::uint64_t stream, std::int32_t device,
                                         std::uint64_t pool, const char* tag) noexcept;
TDIAG_CAPTURE_API void record_free(const void* address, std::uint64_t size, std::uint64_t stream,
                                   std::int32_t device, std::uint64_t pool,
                                   const char* tag) noexcept;

} // namespace tdiag::capture

/// Entry point the CUDA driver calls when CUDA_INJECTION64_PATH names this library. Starts a
/// session with options::from_environment(); returns 1 on success (also on repeated calls), 0
/// when capture could not start (the application then runs untraced).
extern "C" TDIAG_CAPTURE_API int InitializeInjection(void);
