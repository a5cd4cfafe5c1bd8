// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The two modes without user interaction: a screenshot of one view written as a PNG (an
// offscreen framebuffer in a hidden window; under xvfb-run in CI), and the frame-build
// benchmark (no window at all: it times ImGui::NewFrame .. ImGui::Render, the CPU work of a
// frame, not the GPU's).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tdiag::view {

struct screenshot_options {
  std::string output;
  std::string view = "timeline";
  std::string time;   ///< empty: the default instant (peak allocated bytes)
  std::string window; ///< timeline width shown around `time`; empty: 2% of the span
  int width = 1600;
  int height = 900;
  float scale = 1.0f;
};

/// Returns the process exit status: 0 written, 1 the file could not be loaded (the PNG then
/// shows the error), 2 no window or no PNG.
int run_screenshot(const std::vector<std::string>& files, const screenshot_options& options);

/// Loads `files` (or a synthetic snapshot of `synthetic_events` memory events), then builds
/// `frames` frames per scripted phase and prints load time, mean and p99 frame-build time.
int run_bench(const std::vector<std::string>& files, std::size_t synthetic_events,
              std::size_t frames);

} // namespace tdiag::view
