// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The application: what is open, loading on a background thread with progress, errors shown in
// the window, the menus, the panel layout, recent files and settings kept in ImGui's ini file.
// It builds one ImGui frame per call and never touches the windowing system, so the same code
// runs in a window, in headless screenshots and in the frame-build benchmark.
#pragma once

#include <chrono>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "document.hpp"
#include "views.hpp"

namespace tdiag::view {

/// An error to show in the window instead of crashing.
struct load_error {
  std::string path;
  std::string code;
  std::string title;
  std::string message;
  std::string hint;
};

class app {
public:
  app();
  ~app();
  app(const app&) = delete;
  app& operator=(const app&) = delete;

  /// Starts loading `paths` in the background: one trace (.tdtrace, snapshot pickle, Chrome
  /// JSON), a job (several traces, a folder or a glob: view_job.hpp), a job's Flight Recorder
  /// dumps (view_fr.hpp), and any number of tensordiag JSON reports. A load already running
  /// finishes first (its result is dropped).
  void open(std::vector<std::filesystem::path> paths);
  /// The part of every trace opened from now on (--device, --window: trace/trace_select.hpp).
  void set_selection(trace::trace_selection selection) { selection_ = std::move(selection); }
  /// Opens an already built trace (synthetic traces for demos and benchmarks).
  void open_trace(trace::trace t, std::string name);
  /// Builds one frame: call between ImGui::NewFrame() and ImGui::Render().
  void frame();
  /// Takes a finished load, if any; frame() does this too.
  void poll();
  /// Blocks until the current load ends (screenshots, benchmarks).
  void wait();
  /// Waits at most `timeout` for the current load to end; true when none runs any more (its
  /// result taken, as poll() does). The render loop waits here instead of redrawing a
  /// progress bar as fast as it can, which would take the CPU from the loader.
  bool wait_for(std::chrono::milliseconds timeout);
  /// Blocks until the views' background work for the last frame is done (the allocator
  /// view's state at its cursor): a screenshot then shows what was asked for.
  void settle();
  /// Called on the loader thread when a load ends, and on a seeker's worker when it publishes
  /// a state (a window's event loop wakes on it).
  void set_wake(std::function<void()> wake) { wake_ = std::move(wake); }

  [[nodiscard]] bool loading() const noexcept { return job_ != nullptr; }
  [[nodiscard]] bool has_document() const noexcept { return doc_ != nullptr; }
  [[nodiscard]] document* doc() noexcept { return doc_.get(); }
  [[nodiscard]] const std::optional<load_error>& error() const noexcept { return error_; }
  [[nodiscard]] view_state& state() noexcept { return state_; }
  [[nodiscard]] bool quit_requested() const noexcept { return quit_; }
  [[nodiscard]] std::string window_title() const;

  /// Builds the fonts and sizes for a display scale (call before the first frame and when the
  /// scale changes; the renderer must then recreate its font texture).
  void set_ui_scale(float scale);
  /// Registers the ini handler that keeps recent files and panel sizes, and sets the ini path
  /// (created if missing). Without it nothing is written (headless modes).
  void enable_settings(const std::filesystem::path& ini_path);
  /// The default ini path: $XDG_CONFIG_HOME/tensordiag/tdiag-view.ini (or ~/.config/...).
  [[nodiscard]] static std::filesystem::path default_ini_path();

  // Settings, read and written by the ini handler (app_settings.cpp).
  std::deque<std::string> recent_files;
  float details_width = 420.0f;
  bool show_details = true;

private:
  struct job;

  void finish(std::unique_ptr<document> doc, std::vector<loaded_report> reports,
              std::optional<load_error> err, bool keep_document);
  void rebuild_report_views();
  void draw_menu();
  void draw_status_bar(float height);
  void draw_progress();
  void draw_error();
  void draw_welcome();
  void draw_workspace();
  void draw_open_dialog();
  void remember(const std::string& path);

  std::unique_ptr<document> doc_;
  std::vector<loaded_report> reports_;
  std::vector<timeline_marker> report_markers_;
  table_model assertions_table_;
  table_model diagnostics_table_;
  std::vector<table_model*> tables_;
  std::optional<load_error> error_;
  std::shared_ptr<job> job_;
  std::thread loader_;
  std::function<void()> wake_;
  view_state state_;
  bool quit_ = false;
  bool open_dialog_ = false;
  trace::trace_selection selection_;
  std::string dialog_path_;
  std::string ini_path_;
  std::string title_;
};

} // namespace tdiag::view
