// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The two modes without user interaction: a screenshot of one view written as a PNG (an
// offscreen framebuffer in a hidden window; under xvfb-run in CI), and the frame-build
// benchmark (no window at all: it times ImGui::NewFrame .. ImGui::Render, the CPU work of a
// frame, not the GPU's).
#pragma once

#include <tensordiag/trace/trace_select.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace tdiag::view {

struct screenshot_options {
  std::string output;
  std::string view = "timeline";
  std::string time;              ///< empty: the default instant (peak allocated bytes)
  std::string span;              ///< timeline width shown around `time`; empty: 2% of the span
  trace::trace_selection select; ///< the part of the trace opened (--device, --window)
  int width = 1600;
  int height = 900;
  float scale = 1.0f;
};

/// Returns the process exit status: 0 written, 1 the file could not be loaded (the PNG then
/// shows the error), 2 no window or no PNG.
int run_screenshot(const std::vector<std::string>& files, const screenshot_options& options);

/// What the benchmark opens: `files`, else a generated input of `synthetic_events` events.
struct bench_options {
  std::vector<std::string> files;
  std::size_t synthetic_events = 0;
  /// "snapshot" (trace::make_snapshot_trace), "fragmented" (one segment of many blocks) or
  /// "trace" (trace::make_synthetic_trace: kernels, launches, copies, memory).
  std::string synthetic = "snapshot";
  std::size_t frames = 120;
  trace::trace_selection select; ///< the part of `files` opened (--device, --window)
};

/// Loads the input, then builds `frames` frames per scripted phase (every view; the timeline
/// and the memory view at full zoom-out, 1 %, 0.01 % and the deepest zoom) and prints load
/// time, median, p99 and max frame-build time and the largest draw list's vertex count.
/// Returns 1 when nothing loaded, 3 when a draw list passed ImGui's 16-bit index limit.
int run_bench(const bench_options& options);

} // namespace tdiag::view
