// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "headless.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/synthetic_snapshot.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <stb/stb_image_write.h>
#include <thread>
#include <time.h>

#include "app.hpp"
#include "backend.hpp"

namespace tdiag::view {
namespace {

main_view parse_view(const std::string& v) {
  if (v == "memory")
    return main_view::memory;
  if (v == "allocator")
    return main_view::allocator;
  if (v == "tables")
    return main_view::tables;
  if (v == "job")
    return main_view::job;
  return main_view::timeline;
}

} // namespace

int run_screenshot(const std::vector<std::string>& files, const screenshot_options& o) {
  ImGui::CreateContext();
  ImGui::GetIO().IniFilename = nullptr;
  int status = 0;
  {
    std::unique_ptr<backend> window;
    try {
      window = backend::create({o.width, o.height, "tdiag-view", true});
    } catch (const tdiag::error& e) {
      fmt::print(stderr, "tdiag-view: {}\n", e.what());
      ImGui::DestroyContext();
      return 2;
    }
    app a;
    a.set_ui_scale(o.scale);
    auto render = [&] {
      window->begin_frame(0.0);
      ImGui::NewFrame();
      a.frame();
      ImGui::Render();
      window->end_frame();
    };
    a.open(std::vector<std::filesystem::path>(files.begin(), files.end()));
    while (a.loading()) {
      render();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      a.poll();
    }
    if (a.error()) {
      fmt::print(stderr, "tdiag-view: {}: {}\n", a.error()->path, a.error()->message);
      status = 1;
    }
    auto& s = a.state();
    s.view = parse_view(o.view);
    s.view_changed = true;
    if (a.has_document() && !o.time.empty()) {
      const auto span = a.doc()->span;
      const auto offset = parse_time_offset(o.time, span.duration());
      if (!offset) {
        fmt::print(stderr, "tdiag-view: --time {} is not a time (12.5ms, 3s, 1500us, 40%)\n",
                   o.time);
        status = 2;
      } else {
        s.cursor_time = span.begin + *offset;
        if (s.view == main_view::timeline) {
          std::int64_t half = std::max<std::int64_t>(span.duration() / 100, 1000);
          if (!o.window.empty()) {
            const auto w = parse_time_offset(o.window, span.duration());
            if (w && *w > 0)
              half = std::max<std::int64_t>(*w / 2, 1);
          }
          s.pending_fit = std::pair{s.cursor_time - half, s.cursor_time + half};
        }
      }
    }
    // A few frames: tab switch, layout settling, then the frame we keep.
    for (int i = 0; i < 4; ++i)
      render();
    int w = 0;
    int h = 0;
    std::vector<std::uint8_t> pixels;
    if (!window->read_pixels(w, h, pixels)) {
      fmt::print(stderr, "tdiag-view: could not read the rendered pixels\n");
      status = 2;
    } else {
      for (std::size_t i = 3; i < pixels.size(); i += 4)
        pixels[i] = 255; // opaque PNG whatever the framebuffer's alpha
      if (stbi_write_png(o.output.c_str(), w, h, 4, pixels.data(), w * 4) == 0) {
        fmt::print(stderr, "tdiag-view: cannot write {}\n", o.output);
        status = 2;
      } else {
        fmt::print("{}\n", o.output);
      }
    }
  }
  ImGui::DestroyContext();
  return status;
}

namespace {

struct phase_result {
  std::string name;
  double mean_ms = 0.0; // CPU time of this thread
  double p99_ms = 0.0;
  double max_ms = 0.0;
  double wall_mean_ms = 0.0;
};

// CPU time of the calling thread: on a shared machine, wall time also counts preemption.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

phase_result time_phase(app& a, const std::string& name, std::size_t frames,
                        const std::function<void(std::size_t)>& step) {
  std::vector<double> ms;
  ms.reserve(frames);
  double wall_total = 0.0;
  ImGuiIO& io = ImGui::GetIO();
  for (std::size_t i = 0; i < frames; ++i) {
    step(i);
    io.DeltaTime = 1.0f / 60.0f;
    io.MousePos = ImVec2(io.DisplaySize.x * 0.45f, io.DisplaySize.y * 0.4f);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    ImGui::NewFrame();
    a.frame();
    ImGui::Render();
    ms.push_back(thread_cpu_ms() - c0);
    wall_total +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  phase_result r{name};
  r.wall_mean_ms = frames ? wall_total / static_cast<double>(frames) : 0.0;
  if (ms.empty())
    return r;
  r.mean_ms = std::accumulate(ms.begin(), ms.end(), 0.0) / static_cast<double>(ms.size());
  std::sort(ms.begin(), ms.end());
  r.p99_ms =
      ms[std::min(ms.size() - 1, static_cast<std::size_t>(0.99 * static_cast<double>(ms.size())))];
  r.max_ms = ms.back();
  return r;
}

} // namespace

int run_bench(const std::vector<std::string>& files, std::size_t synthetic_events,
              std::size_t frames) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1600, 900);
  int status = 0;
  {
    app a;
    a.set_ui_scale(1.0f);
    unsigned char* tex = nullptr;
    int tw = 0;
    int th = 0;
    io.Fonts->GetTexDataAsRGBA32(&tex, &tw, &th); // no renderer: the atlas is only built
    io.Fonts->SetTexID(reinterpret_cast<ImTextureID>(static_cast<std::intptr_t>(1)));

    const auto t0 = std::chrono::steady_clock::now();
    std::string what;
    if (synthetic_events > 0) {
      what = fmt::format("synthetic snapshot, {} memory events", synthetic_events);
      a.open_trace(make_snapshot_trace(synthetic_events), "synthetic-snapshot");
    } else {
      what = files.empty() ? std::string("(nothing)") : files.front();
      a.open(std::vector<std::filesystem::path>(files.begin(), files.end()));
      a.wait();
    }
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.error() || !a.has_document()) {
      fmt::print(stderr, "tdiag-view --bench: {}\n",
                 a.error() ? a.error()->message : "nothing to load");
      ImGui::DestroyContext();
      return 1;
    }
    auto& s = a.state();
    auto* doc = a.doc();
    fmt::print("tdiag-view --bench: {}\n", what);
    fmt::print("  events {}  kernels {}  memory events {}  lanes {}\n", doc->trace.event_count(),
               doc->trace.kernels.size(), doc->trace.memory.size(), doc->layout.tracks().size());
    fmt::print("  load {:.3f} s (import {:.3f} s, view-models {:.3f} s)\n", load_s,
               doc->load_seconds, doc->model_seconds);

    const auto span = doc->span;
    auto set_view = [&](main_view v) {
      s.view = v;
      s.view_changed = true;
    };
    std::vector<phase_result> results;
    // Warm-up frame so tab switching and first-use allocations are not timed.
    time_phase(a, "warm-up", 3, [&](std::size_t) { set_view(main_view::timeline); });
    results.push_back(time_phase(a, "timeline, full zoom-out", frames, [&](std::size_t i) {
      if (i == 0)
        s.axis.fit_all();
    }));
    results.push_back(
        time_phase(a, "timeline, zooming in at the cursor", frames, [&](std::size_t i) {
          if (i == 0)
            s.axis.fit_all();
          s.axis.zoom_at(s.axis.width() * 0.45, 1.08);
        }));
    results.push_back(
        time_phase(a, "timeline, zoomed in (1/1000 of span), panning", frames, [&](std::size_t i) {
          if (i == 0) {
            const std::int64_t mid = span.begin + span.duration() / 2;
            s.axis.fit(mid, mid + std::max<std::int64_t>(span.duration() / 1000, 1000));
          }
          s.axis.pan(i % 40 < 20 ? 25.0 : -25.0);
        }));
    time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::memory); });
    results.push_back(time_phase(a, "memory, full zoom-out", frames, [&](std::size_t i) {
      if (i == 0)
        s.axis.fit_all();
    }));
    results.push_back(time_phase(a, "memory, zooming in", frames, [&](std::size_t) {
      s.axis.zoom_at(s.axis.width() * 0.45, 1.08);
    }));
    time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::allocator); });
    results.push_back(time_phase(a, "allocator, scrubbing forward", frames, [&](std::size_t i) {
      s.cursor_time = span.begin + static_cast<std::int64_t>(static_cast<double>(span.duration()) *
                                                             static_cast<double>(i) /
                                                             static_cast<double>(frames));
    }));
    results.push_back(time_phase(a, "allocator, random jumps", frames, [&](std::size_t i) {
      const std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
      s.cursor_time =
          span.begin +
          static_cast<std::int64_t>(
              h % static_cast<std::uint64_t>(std::max<std::int64_t>(span.duration(), 1)));
    }));
    time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::tables); });
    results.push_back(time_phase(a, "tables", frames, [](std::size_t) {}));

    fmt::print("  frame build (ImGui::NewFrame .. Render), thread CPU time, {} frames per phase, "
               "1600x900:\n",
               frames);
    for (const auto& r : results)
      fmt::print(
          "    {:<48} mean {:7.3f} ms   p99 {:7.3f} ms   max {:7.3f} ms   (wall mean {:.3f} ms)\n",
          r.name, r.mean_ms, r.p99_ms, r.max_ms, r.wall_mean_ms);
  }
  ImGui::DestroyContext();
  return status;
}

} // namespace tdiag::view
