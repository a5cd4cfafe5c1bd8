// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "headless.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/synthetic.hpp>
#include <tensordiag/trace/synthetic_history.hpp>
#include <tensordiag/trace/units.hpp>
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <numeric>
#include <stb/stb_image_write.h>
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
  if (v == "fr")
    return main_view::fr;
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
    a.set_selection(o.select);
    auto render = [&] {
      window->begin_frame(0.0);
      ImGui::NewFrame();
      a.frame();
      ImGui::Render();
      window->end_frame();
    };
    a.open(std::vector<std::filesystem::path>(files.begin(), files.end()));
    // The progress bar ten times a second, not as fast as the GPU (llvmpipe: the CPU) can.
    while (!a.wait_for(std::chrono::milliseconds(100)))
      render();
    if (a.error()) {
      fmt::print(stderr, "tdiag-view: {}: {}\n", a.error()->path, a.error()->message);
      status = 1;
    }
    auto& s = a.state();
    s.view = parse_view(o.view);
    s.view_changed = true;
    if (a.has_document() && !o.time.empty()) {
      const auto span = a.doc()->span;
      // main() checked --time and --span when it parsed them (add_time_offset_option).
      const auto offset = trace::parse_time_offset(o.time, span.duration());
      if (offset) {
        s.cursor_time = span.begin + *offset;
        if (s.view == main_view::timeline) {
          std::int64_t half = std::max<std::int64_t>(span.duration() / 100, 1000);
          if (!o.span.empty()) {
            const auto w = trace::parse_time_offset(o.span, span.duration());
            if (w && *w > 0)
              half = std::max<std::int64_t>(*w / 2, 1);
          }
          s.pending_fit = std::pair{s.cursor_time - half, s.cursor_time + half};
        }
      }
    }
    // A few frames: tab switch, layout settling, then the frame we keep, each with what the
    // frame before asked the views' workers for.
    for (int i = 0; i < 4; ++i) {
      render();
      a.settle();
    }
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
  double median_ms = 0.0; // CPU time of this thread
  double p99_ms = 0.0;
  double max_ms = 0.0;
  double wall_median_ms = 0.0;
  int max_vertices = 0; // in one draw list
};

// CPU time of the calling thread: on a shared machine, wall time also counts preemption.
double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double percentile(std::vector<double>& v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

phase_result time_phase(app& a, const std::string& name, std::size_t frames,
                        const std::function<void(std::size_t)>& step) {
  std::vector<double> ms;
  std::vector<double> wall;
  ImGuiIO& io = ImGui::GetIO();
  phase_result r{name};
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
    wall.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const ImDrawData* dd = ImGui::GetDrawData();
    for (int k = 0; dd != nullptr && k < dd->CmdListsCount; ++k)
      r.max_vertices = std::max(r.max_vertices, dd->CmdLists[k]->VtxBuffer.Size);
  }
  if (ms.empty())
    return r;
  r.median_ms = percentile(ms, 0.5);
  r.p99_ms = percentile(ms, 0.99);
  r.max_ms = ms.back();
  r.wall_median_ms = percentile(wall, 0.5);
  return r;
}

// The scripted phases: every view; the timeline and the memory view at full zoom-out and at
// windows of 1 %, 0.01 % and the deepest zoom, each frame somewhere else in the dense part of
// the trace (a jump, so caches are cold as after a real one).
std::vector<phase_result> run_bench_phases(app& a, const document& doc, std::size_t frames) {
  auto& s = a.state();
  const auto span = doc.span;
  auto set_view = [&](main_view v) {
    s.view = v;
    s.view_changed = true;
  };
  std::vector<phase_result> results;
  // Warm-up frames so tab switching and first-use allocations are not timed.
  time_phase(a, "warm-up", 3, [&](std::size_t) { set_view(main_view::timeline); });
  const std::int64_t dense0 = s.axis.start(); // the first view: the dense part
  const std::int64_t dense = std::max<std::int64_t>(s.axis.end() - dense0, 1);
  struct zoom {
    const char* name;
    double fraction; // of the span shown; 0 = the deepest zoom
  };
  const zoom zooms[] = {
      {"full zoom-out", 1.0}, {"1% of span", 0.01}, {"0.01% of span", 1e-4}, {"deepest zoom", 0.0}};
  auto zoom_step = [&](const zoom& z) {
    return [&s, &span, z, dense0, dense](std::size_t i) {
      if (z.fraction >= 1.0) {
        s.axis.fit_all();
        s.axis.pan(i % 2 ? 3.0 : -3.0);
        return;
      }
      const std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
      const std::int64_t mid =
          dense0 + static_cast<std::int64_t>((h >> 11) % static_cast<std::uint64_t>(dense));
      const auto half = std::max<std::int64_t>(
          static_cast<std::int64_t>(static_cast<double>(span.duration()) * z.fraction / 2), 1);
      s.axis.fit(mid - half, mid + half);
    };
  };
  for (const auto& z : zooms)
    results.push_back(time_phase(a, fmt::format("timeline, {}", z.name), frames, zoom_step(z)));
  results.push_back(time_phase(a, "timeline, zooming in at the cursor", frames, [&](std::size_t i) {
    if (i == 0)
      s.axis.fit_all();
    s.axis.zoom_at(s.axis.width() * 0.45, 1.08);
  }));
  time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::memory); });
  for (const auto& z : zooms)
    results.push_back(time_phase(a, fmt::format("memory, {}", z.name), frames, zoom_step(z)));
  time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::allocator); });
  results.push_back(time_phase(a, "allocator, scrubbing forward", frames, [&](std::size_t i) {
    s.cursor_time = span.begin +
                    static_cast<std::int64_t>(static_cast<double>(span.duration()) *
                                              static_cast<double>(i) / static_cast<double>(frames));
  }));
  results.push_back(time_phase(a, "allocator, random jumps", frames, [&](std::size_t i) {
    const std::uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
    s.cursor_time = span.begin +
                    static_cast<std::int64_t>(
                        h % static_cast<std::uint64_t>(std::max<std::int64_t>(span.duration(), 1)));
  }));
  time_phase(a, "warm-up", 2, [&](std::size_t) { set_view(main_view::tables); });
  results.push_back(time_phase(a, "tables", frames, [](std::size_t) {}));
  return results;
}

// Loads what `o` names into `a`; returns what it was, empty when nothing loaded.
std::string load_bench_input(app& a, const bench_options& o) {
  if (o.synthetic_events == 0) {
    a.set_selection(o.select);
    a.open(std::vector<std::filesystem::path>(o.files.begin(), o.files.end()));
    a.wait();
    if (o.files.empty())
      return "(nothing)";
    return o.select.empty() ? o.files.front()
                            : fmt::format("{}, only {}", o.files.front(), o.select.describe());
  }
  // A generated input is cut as a file would be (--device, --window), so parts are drawn too.
  const auto open = [&](trace::trace t, const char* name, std::string what) {
    if (!o.select.empty()) {
      (void)trace::select_part(t, o.select, name);
      what += fmt::format(", only {}", o.select.describe());
    }
    a.open_trace(std::move(t), name);
    return what;
  };
  if (o.synthetic == "trace") {
    // About 2.5 events per kernel: its launch, copies and allocator traffic.
    trace::synthetic_options so;
    so.kernels = std::max<std::size_t>(o.synthetic_events * 2 / 5, 1);
    return open(trace::make_synthetic_trace(so), "synthetic-trace",
                fmt::format("synthetic trace, {} kernels", so.kernels));
  }
  if (o.synthetic == "fragmented")
    return open(trace::make_fragmented_snapshot_trace(o.synthetic_events), "fragmented-snapshot",
                fmt::format("fragmented synthetic snapshot, {} memory events", o.synthetic_events));
  return open(trace::make_snapshot_trace(o.synthetic_events), "synthetic-snapshot",
              fmt::format("synthetic snapshot, {} memory events", o.synthetic_events));
}

// What a frame no longer pays: the allocator view's state at a new cursor, from the request to
// its publication by the seeker's worker (wall time; the UI thread draws meanwhile).
void print_seek_latency(document& doc, std::size_t memory_device, std::size_t frames) {
  if (doc.memory.empty())
    return;
  auto& dm = doc.memory[std::min(memory_device, doc.memory.size() - 1)];
  const std::size_t n = dm.replay->size();
  auto measure = [&](const char* name, auto&& index_of) {
    std::vector<double> ms;
    for (std::size_t i = 0; i < frames; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      dm.seeker->request(index_of(i));
      dm.seeker->wait();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    const double median = percentile(ms, 0.5);
    fmt::print("    {:<44} median {:7.3f} ms   max {:7.3f} ms   (wall, off the UI thread)\n", name,
               median, ms.back());
  };
  fmt::print("  allocator state at a new cursor (state_seeker: keyframe, replay, figures), {} "
             "events:\n",
             n);
  measure("scrubbing forward",
          [&](std::size_t i) { return n * i / std::max<std::size_t>(frames, 1); });
  measure("random jumps", [&](std::size_t i) {
    return static_cast<std::size_t>(((i + 1) * 0x9E3779B97F4A7C15ull) % (n + 1));
  });
}

} // namespace

int run_bench(const bench_options& o) {
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.DisplaySize = ImVec2(1600, 900);
  // As the OpenGL 3 renderer does: a draw list may pass 65,536 vertices. The figure printed
  // per phase says whether one did (the views keep theirs bounded by pixels).
  io.BackendFlags |= ImGuiBackendFlags_RendererHasVtxOffset;
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
    const std::string what = load_bench_input(a, o);
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (a.error() || !a.has_document()) {
      fmt::print(stderr, "tdiag-view --bench: {}\n",
                 a.error() ? a.error()->message : "nothing to load");
      ImGui::DestroyContext();
      return 1;
    }
    auto* doc = a.doc();
    fmt::print("tdiag-view --bench: {}\n", what);
    fmt::print("  events {}  kernels {}  memory events {}  lanes {}\n", doc->trace.event_count(),
               doc->trace.kernels.size(), doc->trace.memory.size(), doc->layout.tracks().size());
    fmt::print("  load {:.3f} s (import {:.3f} s, view-models {:.3f} s)\n", load_s,
               doc->load_seconds, doc->model_seconds);
    const auto results = run_bench_phases(a, *doc, o.frames);
    fmt::print("  frame build (ImGui::NewFrame .. Render), thread CPU time, {} frames per phase, "
               "1600x900:\n",
               o.frames);
    for (const auto& r : results) {
      fmt::print("    {:<44} median {:7.3f} ms   p99 {:7.3f} ms   max {:7.3f} ms   (wall median "
                 "{:.3f} ms)   vertices {}\n",
                 r.name, r.median_ms, r.p99_ms, r.max_ms, r.wall_median_ms, r.max_vertices);
      if (r.max_vertices >= (1 << 16)) {
        fmt::print(stderr,
                   "tdiag-view --bench: {}: a draw list of {} vertices, past 16-bit "
                   "indices: that view does not bound its drawing by pixels\n",
                   r.name, r.max_vertices);
        status = 3;
      }
    }
    print_seek_latency(*doc, a.state().memory_device, o.frames);
  }
  ImGui::DestroyContext();
  return status;
}

} // namespace tdiag::view
