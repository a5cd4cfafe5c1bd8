// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The app's frame: menu bar, the view tabs with the details panel beside them, the status bar,
// and the progress, error, welcome and File ▸ Open screens.
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>
#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <system_error>

#include "app.hpp"
#include "view_fr.hpp"

namespace tdiag::view {
namespace {

constexpr ImGuiWindowFlags fixed_window = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                          ImGuiWindowFlags_NoSavedSettings |
                                          ImGuiWindowFlags_NoBringToFrontOnFocus;

// The tabs a document has: Flight Recorder dumps have only theirs (no trace); a job adds its
// analyses to the trace's views.
bool shows(const document& doc, main_view v) {
  if (doc.fr)
    return v == main_view::fr;
  return v != main_view::fr && (v != main_view::job || doc.job);
}

} // namespace

void app::frame() {
  poll();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const float scale = state_.ui_scale;
  state_.status.clear();
  draw_menu();
  const float menu_h = ImGui::GetFrameHeight();
  const float status_h = std::round(ImGui::GetFontSize() + 10.0f * scale);
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, vp->Pos.y + menu_h));
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x, vp->Size.y - menu_h - status_h));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(6.0f * scale, 6.0f * scale));
  ImGui::Begin("##main", nullptr, fixed_window | ImGuiWindowFlags_NoScrollWithMouse);
  ImGui::PopStyleVar();
  if (error_)
    draw_error();
  if (doc_)
    draw_workspace();
  else if (!job_ && !error_)
    draw_welcome();
  if (job_)
    draw_progress();
  ImGui::End();
  draw_status_bar(status_h);
  if (open_dialog_)
    draw_open_dialog();
}

void app::draw_menu() {
  if (!ImGui::BeginMainMenuBar())
    return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) {
      open_dialog_ = true;
      if (dialog_path_.empty())
        dialog_path_ = std::filesystem::current_path().string() + "/";
    }
    if (ImGui::BeginMenu("Open recent", !recent_files.empty())) {
      for (const auto& path : std::vector<std::string>(recent_files.begin(), recent_files.end()))
        if (ImGui::MenuItem(path.c_str()))
          open({path});
      ImGui::EndMenu();
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q"))
      quit_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    static constexpr std::pair<main_view, const char*> views[] = {
        {main_view::timeline, "Timeline"},
        {main_view::memory, "Memory"},
        {main_view::allocator, "Allocator state"},
        {main_view::tables, "Tables"},
        {main_view::job, "Job"},
        {main_view::fr, "Flight Recorder"}};
    for (const auto& [v, name] : views)
      if (doc_ && shows(*doc_, v) && ImGui::MenuItem(name, nullptr, state_.view == v)) {
        state_.view = v;
        state_.view_changed = true;
      }
    ImGui::Separator();
    ImGui::MenuItem("Details panel", nullptr, &show_details);
    ImGui::MenuItem("Launch flows", nullptr, &state_.show_flows);
    if (ImGui::MenuItem("Zoom to fit", "F"))
      state_.pending_fit = std::pair{state_.axis.limit_begin(), state_.axis.limit_end()};
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("Help")) {
    ImGui::TextDisabled("Timeline and memory view");
    ImGui::BulletText("mouse wheel: zoom at the cursor;  W / S: zoom in / out");
    ImGui::BulletText("drag: pan (vertical drag scrolls lanes);  A / D: pan");
    ImGui::BulletText("click: select;  double-click: zoom to the event;  F: fit all");
    ImGui::BulletText("click a density box to zoom into it");
    ImGui::TextDisabled("Allocator view");
    ImGui::BulletText("drag on the strip to scrub;  left / right arrows step one event");
    ImGui::EndMenu();
  }
  ImGuiIO& io = ImGui::GetIO();
  if (io.KeyCtrl && ImGui::IsKeyPressed('O', false)) {
    open_dialog_ = true;
    if (dialog_path_.empty())
      dialog_path_ = std::filesystem::current_path().string() + "/";
  }
  if (io.KeyCtrl && ImGui::IsKeyPressed('Q', false))
    quit_ = true;
  if (!io.WantTextInput && !io.KeyCtrl && ImGui::IsKeyPressed('F', false))
    state_.pending_fit = std::pair{state_.axis.limit_begin(), state_.axis.limit_end()};
  ImGui::EndMainMenuBar();
}

void app::draw_workspace() {
  const float scale = state_.ui_scale;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float splitter = 6.0f * scale;
  const bool with_details = show_details && !doc_->fr; // dumps: no event to detail
  const float details = with_details ? std::clamp(details_width * scale, 200.0f * scale,
                                                  std::max(avail.x * 0.6f, 200.0f * scale))
                                     : 0.0f;
  const float left_w = with_details ? avail.x - details - splitter : avail.x;
  view_context ctx{*doc_, reports_, report_markers_, tables_, state_};

  ImGui::BeginChild("##views", ImVec2(left_w, avail.y), false,
                    ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  if (ImGui::BeginTabBar("##view_tabs")) {
    static constexpr std::pair<main_view, const char*> tabs[] = {
        {main_view::timeline, "Timeline"},
        {main_view::memory, "Memory"},
        {main_view::allocator, "Allocator state"},
        {main_view::tables, "Tables"},
        {main_view::job, "Job"},
        {main_view::fr, "Flight Recorder"}};
    const bool forced = state_.view_changed;
    for (const auto& [v, name] : tabs) {
      if (!shows(*doc_, v))
        continue;
      const ImGuiTabItemFlags flags =
          forced && state_.view == v ? ImGuiTabItemFlags_SetSelected : ImGuiTabItemFlags_None;
      if (!ImGui::BeginTabItem(name, nullptr, flags))
        continue;
      if (!forced)
        state_.view = v;
      ImGui::BeginChild("##view", ImVec2(0, 0), false,
                        ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
      switch (v) {
      case main_view::timeline:
        draw_timeline(ctx);
        break;
      case main_view::memory:
        draw_memory(ctx);
        break;
      case main_view::allocator:
        draw_allocator(ctx);
        break;
      case main_view::tables:
        draw_tables(ctx);
        break;
      case main_view::job:
        draw_job(ctx);
        break;
      case main_view::fr:
        draw_fr(ctx);
        break;
      }
      ImGui::EndChild();
      ImGui::EndTabItem();
    }
    state_.view_changed = false;
    ImGui::EndTabBar();
  }
  ImGui::EndChild();

  if (!with_details)
    return;
  ImGui::SameLine(0.0f, 0.0f);
  ImGui::InvisibleButton("##splitter", ImVec2(splitter, avail.y));
  if (ImGui::IsItemActive()) {
    details_width = std::max(details_width - ImGui::GetIO().MouseDelta.x / scale, 200.0f);
    ImGui::MarkIniSettingsDirty();
  }
  if (ImGui::IsItemHovered() || ImGui::IsItemActive())
    ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
  const ImVec2 smin = ImGui::GetItemRectMin();
  ImGui::GetWindowDrawList()->AddLine(ImVec2(smin.x + splitter * 0.5f, smin.y),
                                      ImVec2(smin.x + splitter * 0.5f, smin.y + avail.y),
                                      IM_COL32(60, 64, 72, 255));
  ImGui::SameLine(0.0f, 0.0f);
  ImGui::BeginChild("##details", ImVec2(details, avail.y), false);
  ImGui::TextColored(ImVec4(0.6f, 0.75f, 1.0f, 1.0f), "Details");
  ImGui::Separator();
  draw_details(ctx);
  ImGui::EndChild();
}

void app::draw_status_bar(float height) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x, vp->Pos.y + vp->Size.y - height));
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x, height));
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.14f, 0.15f, 0.18f, 1.0f));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding,
                      ImVec2(8.0f * state_.ui_scale, 4.0f * state_.ui_scale));
  ImGui::Begin("##status", nullptr, fixed_window);
  if (doc_ && doc_->fr) {
    const auto& r = doc_->fr->report;
    ImGui::Text(
        "%s  ·  Flight Recorder dumps of %zu rank(s)  ·  %zu culprit(s)  ·  loaded in %.2f s",
        doc_->path.filename().string().c_str(), r.ranks.size(), r.culprits.size(),
        doc_->load_seconds + doc_->model_seconds);
  } else if (doc_) {
    const auto& t = doc_->trace;
    ImGui::Text("%s  ·  %s  ·  %zu events  ·  %s  ·  loaded in %.2f s",
                doc_->path.filename().string().c_str(), t.metadata.format.c_str(), t.event_count(),
                format_duration(static_cast<double>(doc_->span.duration())).c_str(),
                doc_->load_seconds + doc_->model_seconds);
    if (!reports_.empty()) {
      ImGui::SameLine();
      ImGui::Text("·  %zu report(s)", reports_.size());
    }
    if (!doc_->warnings.empty()) {
      ImGui::SameLine();
      ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "·  %zu warning(s)",
                         doc_->warnings.size());
    }
  } else {
    ImGui::TextDisabled("no file open");
  }
  if (!state_.status.empty()) {
    const float w = ImGui::CalcTextSize(state_.status.c_str()).x;
    ImGui::SameLine(std::max(ImGui::GetWindowWidth() - w - 16.0f * state_.ui_scale, 0.0f));
    ImGui::TextUnformatted(state_.status.c_str());
  }
  ImGui::End();
  ImGui::PopStyleVar();
  ImGui::PopStyleColor();
}

void app::draw_error() {
  const auto& e = *error_;
  ImGui::PushStyleColor(ImGuiCol_ChildBg, ImVec4(0.30f, 0.10f, 0.10f, 1.0f));
  const float h = ImGui::GetTextLineHeightWithSpacing() * (e.hint.empty() ? 4.6f : 5.8f);
  ImGui::BeginChild("##error", ImVec2(0, h), true);
  ImGui::TextColored(ImVec4(1.0f, 0.55f, 0.5f, 1.0f), "%s%s%s", e.code.c_str(),
                     e.code.empty() ? "" : ": ", e.title.c_str());
  ImGui::TextWrapped("%s", e.message.c_str());
  if (!e.hint.empty())
    ImGui::TextColored(ImVec4(0.8f, 0.8f, 0.8f, 1.0f), "hint: %s", e.hint.c_str());
  ImGui::TextDisabled("%s", e.path.c_str());
  ImGui::SameLine(ImGui::GetWindowWidth() - 90.0f * state_.ui_scale);
  if (ImGui::SmallButton("Dismiss"))
    error_.reset();
  ImGui::EndChild();
  ImGui::PopStyleColor();
}

void app::draw_welcome() {
  const float scale = state_.ui_scale;
  ImGui::SetCursorPos(ImVec2(40.0f * scale, 40.0f * scale));
  ImGui::BeginGroup();
  ImGui::TextColored(ImVec4(0.6f, 0.75f, 1.0f, 1.0f), "tdiag-view");
  ImGui::TextWrapped("Open a trace: File > Open (Ctrl+O), drop a file on the window, or pass it on "
                     "the command line. Understood: .tdtrace captures, PyTorch memory snapshots "
                     "(.pickle), PyTorch profiler / Kineto Chrome traces (.json, .json.gz) and "
                     "tensordiag JSON reports.");
  ImGui::Spacing();
  if (!recent_files.empty()) {
    ImGui::Text("Recent files");
    for (const auto& path : std::vector<std::string>(recent_files.begin(), recent_files.end()))
      if (ImGui::Selectable(path.c_str()))
        open({path});
  }
  ImGui::EndGroup();
}

void app::draw_open_dialog() {
  ImGui::OpenPopup("Open file");
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowSize(ImVec2(vp->Size.x * 0.6f, vp->Size.y * 0.6f), ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(ImVec2(vp->Pos.x + vp->Size.x * 0.5f, vp->Pos.y + vp->Size.y * 0.5f),
                          ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (!ImGui::BeginPopupModal("Open file", &open_dialog_))
    return;
  char buffer[1024];
  const std::size_t len = std::min(dialog_path_.size(), sizeof(buffer) - 1);
  std::copy_n(dialog_path_.data(), len, buffer);
  buffer[len] = '\0';
  ImGui::SetNextItemWidth(-90.0f * state_.ui_scale);
  bool go =
      ImGui::InputText("##path", buffer, sizeof(buffer), ImGuiInputTextFlags_EnterReturnsTrue);
  dialog_path_ = buffer;
  ImGui::SameLine();
  go |= ImGui::Button("Open");
  // The folder of the typed path, listed: click a folder to enter it, a file to pick it.
  std::filesystem::path dir = dialog_path_;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    dir = dir.parent_path();
  ImGui::BeginChild("##listing", ImVec2(0, 0), true);
  if (ImGui::Selectable("../"))
    dialog_path_ = dir.parent_path().string() + "/";
  std::vector<std::filesystem::directory_entry> entries;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    entries.push_back(*it);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
    if (a.is_directory() != b.is_directory())
      return a.is_directory();
    return a.path().filename() < b.path().filename();
  });
  for (const auto& e : entries) {
    const std::string name = e.path().filename().string() + (e.is_directory() ? "/" : "");
    if (!name.empty() && name.front() == '.')
      continue;
    if (ImGui::Selectable(name.c_str(), e.path().string() == dialog_path_,
                          ImGuiSelectableFlags_AllowDoubleClick)) {
      dialog_path_ = e.path().string() + (e.is_directory() ? "/" : "");
      if (!e.is_directory() && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left))
        go = true;
    }
  }
  ImGui::EndChild();
  if (go && !std::filesystem::is_directory(dialog_path_, ec)) {
    open({dialog_path_});
    open_dialog_ = false;
    ImGui::CloseCurrentPopup();
  }
  ImGui::EndPopup();
}

} // namespace tdiag::view
