// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Chrome trace-event JSON ("JSON Array/Object Format") from any trace, for Perfetto and
// chrome://tracing: kernels and copies on (pid = device, tid = stream) lanes, host calls on
// (pid = process, tid = thread) lanes, launch flows as `s`/`f` pairs (category "ac2g", id = the
// correlation id, as Kineto writes them), allocated/reserved memory as `C` counters, and
// process/thread names as `M` metadata events.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdio>
#include <filesystem>

namespace tdiag::trace {

struct chrome_export_options {
  bool api_calls = true;       ///< host runtime/driver calls and CPU ops
  bool flows = true;           ///< launch -> kernel arrows
  bool memory_counters = true; ///< allocated / reserved bytes per device
};

/// What was written, by kind (a flow counts once for its s/f pair).
struct chrome_export_stats {
  std::size_t kernels = 0;
  std::size_t copies = 0;
  std::size_t api_calls = 0;
  std::size_t ranges = 0;
  std::size_t instants = 0; ///< markers, assertion failures, OOM and snapshot markers
  std::size_t flows = 0;
  std::size_t counters = 0; ///< `C` events
  std::size_t metadata = 0; ///< `M` events
  /// Entries of the traceEvents array.
  [[nodiscard]] std::size_t trace_events() const noexcept {
    return kernels + copies + api_calls + ranges + instants + 2 * flows + counters + metadata;
  }
};

/// Writes `t` (finalized or not) as one JSON object to `out`. Throws tdiag::error
/// TDIAG-TR-330 when writing fails.
chrome_export_stats write_chrome_trace(const trace& t, std::FILE* out,
                                       const chrome_export_options& options = {});
/// The same into a file created (truncated) at `path`; TDIAG-TR-330 when it cannot be.
chrome_export_stats write_chrome_trace(const trace& t, const std::filesystem::path& path,
                                       const chrome_export_options& options = {});

} // namespace tdiag::trace
