// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The windowing system behind one small interface (Tracy's Backend*.cpp): a window with an
// OpenGL 3 context, Dear ImGui's platform and renderer back-ends, file drops, and an offscreen
// mode that renders into a framebuffer of a fixed size for screenshots. backend_glfw.cpp is the
// one implementation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tdiag::view {

struct window_options {
  int width = 1600;
  int height = 900;
  std::string title = "tdiag-view";
  /// Hidden window rendering into an offscreen framebuffer of width x height (screenshots).
  bool offscreen = false;
};

class backend {
public:
  /// Opens the window and initialises ImGui's back-ends (the ImGui context must exist).
  /// Throws tdiag::error (TDIAG-VIEW-001) when there is no display or no OpenGL 3 context.
  [[nodiscard]] static std::unique_ptr<backend> create(const window_options& options);

  backend() = default;
  backend(const backend&) = delete;
  backend& operator=(const backend&) = delete;
  virtual ~backend() = default;

  /// True once the user asked to close the window.
  [[nodiscard]] virtual bool should_close() const = 0;
  /// Processes window events (waiting up to `timeout_s` when idle > 0) and starts an ImGui
  /// frame on the platform and renderer side; call ImGui::NewFrame() next.
  virtual void begin_frame(double timeout_s) = 0;
  /// Renders ImGui's draw data and presents it.
  virtual void end_frame() = 0;
  /// Display scale of the monitor (1 on a 96-dpi screen, 2 on most HiDPI ones).
  [[nodiscard]] virtual float content_scale() const = 0;
  /// Paths dropped on the window since the last call.
  [[nodiscard]] virtual std::vector<std::string> take_dropped_paths() = 0;
  /// RGBA pixels of the last rendered frame, top row first (offscreen mode; also works on a
  /// visible window's back buffer). Returns false when they cannot be read.
  virtual bool read_pixels(int& width, int& height, std::vector<std::uint8_t>& rgba) = 0;
  virtual void set_title(const std::string& title) = 0;
  /// Ends a wait in begin_frame() now; callable from any thread.
  virtual void wake() = 0;
};

} // namespace tdiag::view
