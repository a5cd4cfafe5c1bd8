// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Helpers every panel uses: colours, short names, the time ruler, zoom/pan input, jumps.
#include <tensordiag/viewer/format.hpp>

#include <algorithm>
#include <cmath>

#include "views.hpp"

namespace tdiag::view {

ImU32 colour_for(std::string_view name, float alpha) {
  std::uint32_t h = 2166136261u;
  for (const char c : name)
    h = (h ^ static_cast<std::uint8_t>(c)) * 16777619u;
  // Mix, so names differing in one character land far apart in hue.
  h ^= h >> 16;
  h *= 0x7feb352du;
  h ^= h >> 15;
  h *= 0x846ca68bu;
  h ^= h >> 16;
  const float hue = static_cast<float>(h & 0xffffu) / 65536.0f;
  const float sat = 0.45f + static_cast<float>((h >> 10) % 4) * 0.05f;
  const float val = 0.72f + static_cast<float>((h >> 12) % 4) * 0.04f;
  float r = 0, g = 0, b = 0;
  ImGui::ColorConvertHSVtoRGB(hue, sat, val, r, g, b);
  return ImGui::GetColorU32(ImVec4(r, g, b, alpha));
}

std::string_view short_name(std::string_view name) noexcept {
  if (name.starts_with("void "))
    name.remove_prefix(5);
  const auto cut = name.find_first_of("<(");
  if (cut == std::string_view::npos || cut == 0)
    return name;
  name = name.substr(0, cut);
  const auto colon = name.rfind("::");
  return colon == std::string_view::npos ? name : name.substr(colon + 2);
}

void draw_ruler(ImDrawList* dl, const time_axis& axis, ImVec2 origin, float height,
                std::int64_t time_zero) {
  const float w = static_cast<float>(axis.width());
  dl->AddRectFilled(origin, ImVec2(origin.x + w, origin.y + height), IM_COL32(32, 35, 42, 255));
  const double step = tick_step(axis.ns_per_px(), 110.0);
  const double first_rel = std::floor(axis.offset_at(0.0) / step) * step;
  const double base = static_cast<double>(axis.limit_begin() - time_zero);
  const float font = ImGui::GetFontSize();
  for (double rel = first_rel;; rel += step) {
    const double x = (rel - axis.offset_at(0.0)) / axis.ns_per_px();
    if (x > w)
      break;
    if (x < 0)
      continue;
    const float px = origin.x + static_cast<float>(x);
    dl->AddLine(ImVec2(px, origin.y + height * 0.55f), ImVec2(px, origin.y + height),
                IM_COL32(150, 155, 165, 255));
    // Minor ticks.
    for (int m = 1; m < 5; ++m) {
      const float mx = px + static_cast<float>(step / axis.ns_per_px() * m / 5.0);
      if (mx < origin.x + w)
        dl->AddLine(ImVec2(mx, origin.y + height * 0.8f), ImVec2(mx, origin.y + height),
                    IM_COL32(100, 105, 115, 255));
    }
    const std::string label = format_time_tick(rel + base, step);
    dl->AddText(ImVec2(px + 3.0f, origin.y + (height * 0.55f - font) * 0.5f + 1.0f),
                palette::text_dim, label.c_str());
  }
  dl->AddLine(ImVec2(origin.x, origin.y + height - 1), ImVec2(origin.x + w, origin.y + height - 1),
              IM_COL32(70, 75, 85, 255));
}

void show_time(view_context& ctx, std::int64_t t0, std::int64_t t1) {
  const std::int64_t d = std::max<std::int64_t>(t1 - t0, 1000);
  ctx.state.pending_fit = std::pair{t0 - d / 2, t1 + d / 2};
}

void jump_to(view_context& ctx, event_ref e, bool switch_view) {
  auto& s = ctx.state;
  if (!e.valid())
    return;
  s.selected = e;
  s.selected_allocation.reset();
  s.selected_block.reset();
  s.selected_diagnostic.reset();
  const event_times when = times_of(ctx.doc.trace, e);
  show_time(ctx, when.begin, when.end);
  if (e.kind == event_kind::memory) {
    s.cursor_time = when.begin;
    const auto device = ctx.doc.trace.memory[e.index].device;
    for (std::size_t i = 0; i < ctx.doc.memory.size(); ++i)
      if (ctx.doc.memory[i].device == device)
        s.memory_device = i;
    if (switch_view) {
      s.view = main_view::memory;
      s.view_changed = true;
    }
    return;
  }
  s.scroll_to_selection = true;
  if (switch_view) {
    s.view = main_view::timeline;
    s.view_changed = true;
  }
}

bool handle_axis_input(view_state& s, ImVec2 plot_min, ImVec2 plot_max, bool allow_drag_pan) {
  ImGuiIO& io = ImGui::GetIO();
  bool moved = false;
  const bool hovered = ImGui::IsItemHovered();
  const float mx = io.MousePos.x - plot_min.x;
  if (hovered && io.MouseWheel != 0.0f && !io.KeyShift) {
    s.axis.zoom_at(std::clamp(mx, 0.0f, plot_max.x - plot_min.x), std::pow(1.25, io.MouseWheel));
    moved = true;
  }
  if (hovered && io.MouseWheelH != 0.0f) {
    s.axis.pan(-io.MouseWheelH * 40.0 * s.ui_scale);
    moved = true;
  }
  if (allow_drag_pan && ImGui::IsItemActive()) {
    for (const ImGuiMouseButton b :
         {ImGuiMouseButton_Left, ImGuiMouseButton_Right, ImGuiMouseButton_Middle})
      if (ImGui::IsMouseDragging(b, 2.0f) && io.MouseDelta.x != 0.0f) {
        s.axis.pan(-io.MouseDelta.x);
        moved = true;
        break;
      }
  }
  // W/S zoom, A/D pan, as in Perfetto and Tracy (GLFW key codes are ASCII for letters).
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) && !io.WantTextInput) {
    const double dt = std::clamp(static_cast<double>(io.DeltaTime), 0.0, 0.1);
    const double anchor = hovered ? mx : s.axis.width() * 0.5;
    if (ImGui::IsKeyDown('W')) {
      s.axis.zoom_at(anchor, std::pow(4.0, dt));
      moved = true;
    }
    if (ImGui::IsKeyDown('S')) {
      s.axis.zoom_at(anchor, std::pow(0.25, dt));
      moved = true;
    }
    if (ImGui::IsKeyDown('A')) {
      s.axis.pan(-s.axis.width() * dt);
      moved = true;
    }
    if (ImGui::IsKeyDown('D')) {
      s.axis.pan(s.axis.width() * dt);
      moved = true;
    }
  }
  (void)plot_max;
  return moved;
}

} // namespace tdiag::view
