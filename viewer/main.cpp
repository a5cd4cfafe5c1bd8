// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// tdiag-view: interactive viewer, headless screenshots, frame-build benchmark.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/selection_options.hpp>
#include <tensordiag/trace/units.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "app.hpp"
#include "backend.hpp"
#include "headless.hpp"

namespace {

int run_interactive(const std::vector<std::string>& files,
                    const tdiag::trace::trace_selection& select) {
  using namespace tdiag::view;
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  int status = 0;
  {
    std::unique_ptr<backend> window;
    try {
      window = backend::create({});
    } catch (const tdiag::error& e) {
      fmt::print(stderr, "tdiag-view: {}\n", e.what());
      if (!e.report().diagnostics.empty() && !e.report().diagnostics.front().hint.empty())
        fmt::print(stderr, "hint: {}\n", e.report().diagnostics.front().hint);
      ImGui::DestroyContext();
      return 2;
    }
    app a;
    a.set_wake([w = window.get()] { w->wake(); });
    a.enable_settings(app::default_ini_path());
    a.set_selection(select);
    a.set_ui_scale(window->content_scale());
    std::vector<std::filesystem::path> paths(files.begin(), files.end());
    if (!paths.empty())
      a.open(paths);
    std::string title;
    while (!window->should_close() && !a.quit_requested()) {
      // Idle: wait for input. While a load runs, the progress bar redraws ten times a second
      // (not 60: on software OpenGL drawing takes the cores the loader needs), and the loader
      // wakes the loop when it is done, as the allocator view's seeker does with a state.
      window->begin_frame(a.loading() ? 0.1 : 0.25);
      const auto dropped = window->take_dropped_paths();
      if (!dropped.empty())
        a.open(std::vector<std::filesystem::path>(dropped.begin(), dropped.end()));
      ImGui::NewFrame();
      a.frame();
      ImGui::Render();
      window->end_frame();
      if (a.window_title() != title) {
        title = a.window_title();
        window->set_title(title);
      }
    }
    a.wait();
    ImGui::SaveIniSettingsToDisk(ImGui::GetIO().IniFilename);
  }
  ImGui::DestroyContext();
  return status;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App cli{"tdiag-view: GPU kernel and memory trace viewer"};
  std::vector<std::string> files;
  std::string screenshot;
  std::string view = "timeline";
  std::string time;
  std::string span;
  tdiag::trace::trace_selection select;
  std::string size = "1600x900";
  float scale = 1.0f;
  bool bench = false;
  int frames = 120;
  std::size_t synthetic_snapshot = 0;
  std::size_t synthetic_trace = 0;
  bool fragmented = false;
  cli.add_option("files", files,
                 "traces (.tdtrace, snapshot .pickle, Chrome .json[.gz]; several, a folder or "
                 "a glob: a job, one trace per rank), a job's Flight Recorder dumps (one per "
                 "rank) and tensordiag JSON reports");
  cli.add_option("--screenshot", screenshot, "render without a visible window and write a PNG");
  cli.add_option("--view", view,
                 "view for --screenshot: timeline, memory, allocator, tables, job (a job's "
                 "analyses), fr (Flight Recorder dumps: the rings per rank and the verdict)")
      ->check(CLI::IsMember({"timeline", "memory", "allocator", "tables", "job", "fr"}));
  // --time and --span read as `tdiag trace timeline --at` does (units.hpp: a bare number is
  // seconds), checked at parse time.
  tdiag::trace::add_time_offset_option(
      cli, "--time", time,
      fmt::format("instant for --screenshot from the trace start: {}, or 40%",
                  tdiag::trace::duration_examples));
  tdiag::trace::add_time_offset_option(
      cli, "--span", span,
      fmt::format("with --time: the time range the timeline shows: {}, or 2%",
                  tdiag::trace::duration_examples));
  tdiag::trace::add_selection_options(cli, select); // the part opened, as `tdiag trace` reads it
  cli.add_option("--size", size, "screenshot size WIDTHxHEIGHT");
  cli.add_option("--scale", scale, "UI scale for --screenshot (fonts and sizes)");
  cli.add_flag("--bench", bench, "time loading and frame building over scripted interaction");
  cli.add_option("--frames", frames, "frames per benchmark phase");
  cli.add_option("--synthetic-snapshot", synthetic_snapshot,
                 "benchmark on a generated snapshot with this many memory events");
  cli.add_flag("--fragmented", fragmented,
               "with --synthetic-snapshot: one segment of many small blocks instead");
  cli.add_option("--synthetic-trace", synthetic_trace,
                 "benchmark on a generated trace (kernels, launches, copies, memory) of about "
                 "this many events");
  CLI11_PARSE(cli, argc, argv);

  using namespace tdiag::view;
  if (bench) {
    bench_options o;
    o.files = files;
    o.frames = static_cast<std::size_t>(std::max(frames, 1));
    o.synthetic_events = synthetic_trace > 0 ? synthetic_trace : synthetic_snapshot;
    o.synthetic = synthetic_trace > 0 ? "trace" : fragmented ? "fragmented" : "snapshot";
    o.select = select;
    return run_bench(o);
  }
  if (!screenshot.empty()) {
    screenshot_options o;
    o.output = screenshot;
    o.view = view;
    o.time = time;
    o.span = span;
    o.select = select;
    o.scale = scale;
    if (std::sscanf(size.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 64 ||
        o.height < 64 || o.width > 8192 || o.height > 8192) {
      fmt::print(stderr, "tdiag-view: --size must be WIDTHxHEIGHT between 64 and 8192, not {}\n",
                 size);
      return 2;
    }
    return run_screenshot(files, o);
  }
  return run_interactive(files, select);
}
