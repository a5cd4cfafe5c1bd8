// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Settings kept in ImGui's ini file next to its window layout: recent files, the details
// panel's width and visibility, flows on or off. One [TdiagView][Settings] section.
#include <imgui_internal.h>

#include <cstdlib>
#include <cstring>

#include "app.hpp"

namespace tdiag::view {
namespace {

void* read_open(ImGuiContext*, ImGuiSettingsHandler* handler, const char* name) {
  if (std::strcmp(name, "Settings") != 0)
    return nullptr;
  static_cast<app*>(handler->UserData)->recent_files.clear();
  return handler->UserData;
}

void read_line(ImGuiContext*, ImGuiSettingsHandler*, void* entry, const char* line) {
  auto* a = static_cast<app*>(entry);
  const std::string_view text(line);
  auto value_of = [&](std::string_view key) -> const char* {
    return text.starts_with(key) ? line + key.size() : nullptr;
  };
  if (const char* recent = value_of("Recent=")) {
    if (*recent != '\0' && a->recent_files.size() < 10)
      a->recent_files.emplace_back(recent);
  } else if (const char* width = value_of("DetailsWidth=")) {
    a->details_width = std::max(static_cast<float>(std::atof(width)), 200.0f);
  } else if (const char* details = value_of("ShowDetails=")) {
    a->show_details = std::atoi(details) != 0;
  } else if (const char* flows = value_of("ShowFlows=")) {
    a->state().show_flows = std::atoi(flows) != 0;
  }
}

void write_all(ImGuiContext*, ImGuiSettingsHandler* handler, ImGuiTextBuffer* out) {
  auto* a = static_cast<app*>(handler->UserData);
  out->append("[TdiagView][Settings]\n");
  out->appendf("DetailsWidth=%.0f\n", static_cast<double>(a->details_width));
  out->appendf("ShowDetails=%d\n", a->show_details ? 1 : 0);
  out->appendf("ShowFlows=%d\n", a->state().show_flows ? 1 : 0);
  for (const auto& path : a->recent_files)
    out->appendf("Recent=%s\n", path.c_str());
  out->append("\n");
}

} // namespace

std::filesystem::path app::default_ini_path() {
  const char* xdg = std::getenv("XDG_CONFIG_HOME");
  const char* home = std::getenv("HOME");
  std::filesystem::path base = xdg && *xdg     ? std::filesystem::path(xdg)
                               : home && *home ? std::filesystem::path(home) / ".config"
                                               : std::filesystem::current_path();
  return base / "tensordiag" / "tdiag-view.ini";
}

void app::enable_settings(const std::filesystem::path& ini_path) {
  std::error_code ec;
  std::filesystem::create_directories(ini_path.parent_path(), ec);
  ini_path_ = ini_path.string();
  ImGui::GetIO().IniFilename = ini_path_.c_str();
  ImGuiSettingsHandler handler;
  handler.TypeName = "TdiagView";
  handler.TypeHash = ImHashStr("TdiagView");
  handler.ReadOpenFn = read_open;
  handler.ReadLineFn = read_line;
  handler.WriteAllFn = write_all;
  handler.UserData = this;
  ImGui::GetCurrentContext()->SettingsHandlers.push_back(handler);
}

} // namespace tdiag::view
