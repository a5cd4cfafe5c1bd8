// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "app.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/viewer/codes.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>
#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "view_fr.hpp"
#include "view_job.hpp"

namespace tdiag::view {

// A background load and what it produced; shared with the loader thread.
struct app::job {
  load_progress progress;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string name;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  bool keep_document = false; // only reports: add them to the open trace
  std::unique_ptr<document> doc;
  std::vector<loaded_report> reports;
  std::optional<load_error> error;
};

namespace {

load_error to_load_error(const std::string& path, const tdiag::error& e) {
  load_error out{path, "", "cannot open the file", e.what(), ""};
  if (!e.report().diagnostics.empty()) {
    const auto& d = e.report().diagnostics.front();
    out.code = d.code;
    out.title = d.title.empty() ? out.title : d.title;
    out.message = d.message.empty() ? out.message : d.message;
    out.hint = d.hint;
  }
  return out;
}

} // namespace

app::app() = default;

app::~app() {
  if (loader_.joinable())
    loader_.join();
}

void app::open(std::vector<std::filesystem::path> paths) {
  wait();
  auto j = std::make_shared<job>();
  j->name = paths.empty() ? std::string() : paths.front().filename().string();
  bool any_trace = false;
  for (const auto& p : paths)
    any_trace |= !looks_like_report(p);
  j->keep_document = !any_trace && doc_ != nullptr;
  job_ = j;
  loader_ = std::thread([j, paths = std::move(paths), wake = wake_, select = selection_] {
    std::unique_ptr<document> doc;
    std::vector<loaded_report> reports;
    std::optional<load_error> err;
    std::vector<std::filesystem::path> traces;
    for (const auto& p : paths) {
      try {
        if (looks_like_report(p)) {
          j->progress.set(fmt::format("reading report {}", p.filename().string()), -1.0f);
          reports.push_back({p, read_report_file(p)});
        } else {
          traces.push_back(p);
        }
      } catch (const tdiag::error& e) {
        err = to_load_error(p.string(), e);
      } catch (const std::exception& e) {
        err = load_error{p.string(), std::string(codes::cannot_open), "cannot open the file",
                         e.what(), ""};
      }
    }
    // Several traces, a folder or a glob: a job, one trace per rank (view_job.hpp).
    if (!traces.empty()) {
      const std::string shown = traces.front().string();
      try {
        if (is_fr_input(traces))
          doc = load_fr_document(traces, j->progress);
        else if (is_job_input(traces))
          doc = load_job_document(traces, j->progress, select);
        else
          doc = load_document(traces.front(), j->progress, select);
      } catch (const tdiag::error& e) {
        err = to_load_error(shown, e);
      } catch (const std::exception& e) {
        err = load_error{shown, std::string(codes::cannot_open), "cannot open the file", e.what(),
                         ""};
      }
    }
    std::lock_guard lock(j->mutex);
    j->doc = std::move(doc);
    j->reports = std::move(reports);
    j->error = std::move(err);
    j->done = true;
    j->finished.notify_all();
    if (wake)
      wake();
  });
}

void app::open_trace(trace::trace t, std::string name) {
  wait();
  load_progress progress;
  auto doc = make_document(std::move(t), progress);
  doc->path = std::move(name);
  finish(std::move(doc), {}, std::nullopt, false);
}

void app::wait() {
  if (loader_.joinable())
    loader_.join();
  poll();
}

void app::settle() {
  if (doc_)
    for (const auto& dm : doc_->memory)
      dm.seeker->wait();
}

bool app::wait_for(std::chrono::milliseconds timeout) {
  if (!job_)
    return true;
  {
    std::unique_lock lock(job_->mutex);
    if (!job_->finished.wait_for(lock, timeout, [&] { return job_->done; }))
      return false;
  }
  poll();
  return !job_;
}

void app::poll() {
  if (!job_)
    return;
  std::unique_lock lock(job_->mutex);
  if (!job_->done)
    return;
  auto doc = std::move(job_->doc);
  auto reports = std::move(job_->reports);
  auto err = std::move(job_->error);
  const bool keep = job_->keep_document;
  lock.unlock();
  if (loader_.joinable())
    loader_.join();
  job_.reset();
  finish(std::move(doc), std::move(reports), std::move(err), keep);
}

void app::finish(std::unique_ptr<document> doc, std::vector<loaded_report> reports,
                 std::optional<load_error> err, bool keep_document) {
  error_ = std::move(err);
  if (doc || !reports.empty()) {
    if (!keep_document) {
      if (!doc) {
        load_progress unused;
        doc = make_document(trace::trace{}, unused);
        doc->path = reports.front().path;
      }
      doc_ = std::move(doc);
      for (auto& dm : doc_->memory)
        dm.seeker->set_wake(wake_);
      reports_.clear();
      const float scale = state_.ui_scale;
      const bool flows = state_.show_flows;
      state_ = view_state{};
      state_.ui_scale = scale;
      state_.show_flows = flows;
      if (doc_->fr)
        state_.view = main_view::fr; // the dumps' verdict is all there is
      const auto span = doc_->span;
      state_.axis.set_limits(span.begin, span.end);
      state_.pending_fit = doc_->view_window;
      state_.cursor_time =
          doc_->memory.empty() ? span.begin : doc_->memory.front().curve.peak_allocated_time();
      if (!doc_->path.empty())
        remember(std::filesystem::absolute(doc_->path).string());
    }
    for (auto& r : reports) {
      remember(std::filesystem::absolute(r.path).string());
      reports_.push_back(std::move(r));
    }
    rebuild_report_views();
    // Open on the first table with something in it.
    if (state_.table_index < tables_.size() && tables_[state_.table_index]->rows().empty())
      for (std::size_t i = 0; i < tables_.size(); ++i)
        if (!tables_[i]->rows().empty()) {
          state_.table_index = i;
          break;
        }
  }
  title_ = doc_ ? fmt::format("{} — tdiag-view", doc_->path.filename().string()) : "tdiag-view";
}

void app::rebuild_report_views() {
  std::vector<report> contents;
  for (const auto& r : reports_)
    contents.push_back(r.content);
  report_markers_.clear();
  tables_.clear();
  if (!doc_)
    return;
  for (std::size_t ri = 0; ri < reports_.size(); ++ri) {
    const auto& diags = reports_[ri].content.diagnostics;
    for (std::size_t di = 0; di < diags.size(); ++di) {
      std::int64_t when = 0;
      if (diagnostic_time(doc_->trace, diags[di], when))
        report_markers_.push_back({when,
                                   diags[di].code.starts_with("TDIAG-DSA")
                                       ? marker_kind::assertion
                                       : marker_kind::diagnostic,
                                   fmt::format("{}: {}", diags[di].code, diags[di].title),
                                   {},
                                   ri,
                                   di});
    }
  }
  std::stable_sort(report_markers_.begin(), report_markers_.end(),
                   [](const auto& a, const auto& b) { return a.time < b.time; });
  assertions_table_ = assertions_table(doc_->trace, contents);
  diagnostics_table_ = diagnostics_table(contents);
  tables_ = {&doc_->kernels, &doc_->sites,       &doc_->leaks,
             &doc_->ooms,    &assertions_table_, &diagnostics_table_};
}

void app::remember(const std::string& path) {
  std::erase(recent_files, path);
  recent_files.push_front(path);
  while (recent_files.size() > 10)
    recent_files.pop_back();
  ImGui::MarkIniSettingsDirty();
}

std::string app::window_title() const {
  return title_.empty() ? "tdiag-view" : title_;
}

void app::set_ui_scale(float scale) {
  scale = std::clamp(scale, 0.5f, 4.0f);
  state_.ui_scale = scale;
  ImGuiIO& io = ImGui::GetIO();
  io.Fonts->Clear();
  ImFontConfig config;
  config.OversampleH = 2;
  config.OversampleV = 2;
  const float size = std::round(15.0f * scale);
  static constexpr const char* candidates[] = {
      "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/TTF/DejaVuSans.ttf",
      "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf"};
  // Latin plus the few symbols the views print (·, µ, arrows, em dash).
  static const ImWchar ranges[] = {0x0020, 0x00FF, 0x2010, 0x2027, 0x2190, 0x2193, 0};
  ImFont* font = nullptr;
  for (const char* path : candidates)
    if (std::filesystem::exists(path) &&
        (font = io.Fonts->AddFontFromFileTTF(path, size, &config, ranges)) != nullptr)
      break;
  if (font == nullptr) {
    ImFontConfig fallback;
    fallback.SizePixels = std::round(13.0f * scale);
    io.Fonts->AddFontDefault(&fallback);
  }
  ImGuiStyle style;
  ImGui::StyleColorsDark(&style);
  style.WindowRounding = 0.0f;
  style.FrameRounding = 4.0f;
  style.GrabRounding = 4.0f;
  style.TabRounding = 4.0f;
  style.ScrollbarRounding = 6.0f;
  style.FramePadding = ImVec2(8.0f, 4.0f);
  style.ItemSpacing = ImVec2(8.0f, 6.0f);
  style.WindowPadding = ImVec2(10.0f, 8.0f);
  style.Colors[ImGuiCol_WindowBg] = ImVec4(0.105f, 0.113f, 0.133f, 1.0f);
  style.Colors[ImGuiCol_ChildBg] = ImVec4(0.105f, 0.113f, 0.133f, 1.0f);
  style.Colors[ImGuiCol_MenuBarBg] = ImVec4(0.14f, 0.15f, 0.18f, 1.0f);
  style.Colors[ImGuiCol_Tab] = ImVec4(0.16f, 0.18f, 0.22f, 1.0f);
  style.Colors[ImGuiCol_TabActive] = ImVec4(0.23f, 0.36f, 0.55f, 1.0f);
  style.Colors[ImGuiCol_TabHovered] = ImVec4(0.30f, 0.45f, 0.68f, 1.0f);
  style.Colors[ImGuiCol_Header] = ImVec4(0.22f, 0.32f, 0.47f, 1.0f);
  style.Colors[ImGuiCol_TableRowBgAlt] = ImVec4(1.0f, 1.0f, 1.0f, 0.03f);
  style.ScaleAllSizes(scale);
  ImGui::GetStyle() = style;
}

void app::draw_progress() {
  const auto [phase, fraction] = job_->progress.get();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - job_->started).count();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float w = std::min(560.0f * state_.ui_scale, avail.x - 20.0f);
  const ImVec2 win = ImGui::GetWindowPos();
  const ImVec2 size = ImGui::GetWindowSize();
  ImGui::SetCursorScreenPos(ImVec2(win.x + (size.x - w) * 0.5f, win.y + size.y * 0.4f));
  ImGui::BeginGroup();
  ImGui::Text("Opening %s", job_->name.c_str());
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float h = ImGui::GetFrameHeight();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(40, 44, 52, 255), 4.0f);
  if (fraction >= 0.0f) {
    dl->AddRectFilled(p, ImVec2(p.x + w * fraction, p.y + h), palette::allocated, 4.0f);
  } else {
    // Unknown length: a block sweeping back and forth.
    const float phase_x = static_cast<float>(0.5 + 0.5 * std::sin(elapsed * 3.0));
    const float bw = w * 0.25f;
    dl->AddRectFilled(ImVec2(p.x + (w - bw) * phase_x, p.y),
                      ImVec2(p.x + (w - bw) * phase_x + bw, p.y + h), palette::allocated, 4.0f);
  }
  ImGui::Dummy(ImVec2(w, h));
  ImGui::TextDisabled("%s  ·  %.1f s", phase.c_str(), elapsed);
  ImGui::EndGroup();
}

} // namespace tdiag::view
