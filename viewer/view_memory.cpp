// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The memory view: allocated and reserved bytes over time (min/max per pixel column, so a
// peak is never lost at any zoom), the largest allocations as stacked bands, OOM markers and
// the allocator view's time cursor. It shares the timeline's time axis.
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "views.hpp"

namespace tdiag::view {
namespace {

double nice_bytes_step(double max_bytes, int lines) {
  const double raw = max_bytes / std::max(lines, 1);
  double p = std::pow(2.0, std::floor(std::log2(std::max(raw, 1.0))));
  while (p * 1.5 < raw)
    p *= 2.0;
  return p;
}

} // namespace

void draw_memory(view_context& ctx) {
  auto& s = ctx.state;
  auto& doc = ctx.doc;
  const auto& t = doc.trace;
  if (doc.memory.empty()) {
    ImGui::TextDisabled("This trace has no memory events.");
    return;
  }
  s.memory_device = std::min(s.memory_device, doc.memory.size() - 1);
  auto& dm = doc.memory[s.memory_device];
  const float scale = s.ui_scale;
  const float font = ImGui::GetFontSize();
  const std::int64_t zero = doc.span.begin;

  // Toolbar: device, figures, legend.
  if (doc.memory.size() > 1) {
    ImGui::SetNextItemWidth(150.0f * scale);
    const std::string current =
        dm.device < 0 ? std::string("host") : fmt::format("GPU {}", dm.device);
    if (ImGui::BeginCombo("##device", current.c_str())) {
      for (std::size_t i = 0; i < doc.memory.size(); ++i) {
        const std::string label = doc.memory[i].device < 0
                                      ? std::string("host")
                                      : fmt::format("GPU {}", doc.memory[i].device);
        if (ImGui::Selectable(label.c_str(), i == s.memory_device))
          s.memory_device = i;
      }
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  }
  const auto& curve = dm.curve;
  ImGui::Text("peak allocated %s at %s   ·   peak reserved %s   ·   %zu allocations",
              format_bytes(static_cast<double>(curve.peak_allocated())).c_str(),
              format_duration(static_cast<double>(curve.peak_allocated_time() - zero)).c_str(),
              format_bytes(static_cast<double>(curve.peak_reserved())).c_str(),
              dm.allocations.size());
  ImGui::SameLine(0.0f, 24.0f * scale);
  {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    auto legend = [&](ImU32 col, const char* text) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      dl->AddRectFilled(ImVec2(p.x, p.y + font * 0.25f),
                        ImVec2(p.x + font * 0.9f, p.y + font * 0.85f), col, 2.0f);
      ImGui::Dummy(ImVec2(font * 1.1f, font));
      ImGui::SameLine();
      ImGui::TextUnformatted(text);
      ImGui::SameLine(0.0f, 16.0f * scale);
    };
    legend(palette::allocated, "allocated");
    legend(palette::reserved, "reserved");
    legend(IM_COL32(180, 130, 220, 255),
           fmt::format("{} largest allocations", dm.bands.bands().size()).c_str());
    ImGui::NewLine();
  }

  const float label_w = std::round(230.0f * scale);
  const float ruler_h = std::round(font + 12.0f * scale);
  const float scrollbar_w = std::round(10.0f * scale);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float plot_x0 = origin.x + label_w;
  const float plot_w = std::max(avail.x - label_w - scrollbar_w, 50.0f);
  const float area_y0 = origin.y + ruler_h;
  const float area_h = std::max(avail.y - ruler_h - 4.0f * scale, 20.0f);
  const float pad_top = 10.0f * scale;
  s.axis.set_width(plot_w);
  if (s.pending_fit) {
    s.axis.fit(s.pending_fit->first, s.pending_fit->second);
    s.pending_fit.reset();
  }

  ImGui::SetCursorScreenPos(ImVec2(plot_x0, origin.y));
  ImGui::InvisibleButton("##memory_plot", ImVec2(plot_w, ruler_h + area_h),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  const bool hovered = ImGui::IsItemHovered();
  handle_axis_input(s, ImVec2(plot_x0, origin.y), ImVec2(plot_x0 + plot_w, area_y0 + area_h), true);
  ImGuiIO& io = ImGui::GetIO();

  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_ruler(dl, s.axis, ImVec2(plot_x0, origin.y), ruler_h, zero);
  dl->AddRectFilled(ImVec2(origin.x, area_y0), ImVec2(plot_x0 + plot_w, area_y0 + area_h),
                    IM_COL32(24, 26, 31, 255));

  const double top =
      std::max<double>(std::max(curve.peak_reserved(), curve.peak_allocated()) * 1.08, 1024.0);
  const float bottom = area_y0 + area_h;
  auto y_of = [&](double bytes) {
    return bottom - static_cast<float>(bytes / top) * (area_h - pad_top);
  };
  // Horizontal grid with byte labels.
  const double step = nice_bytes_step(top, std::max(static_cast<int>(area_h / (font * 3.0f)), 2));
  for (double b = 0; b <= top; b += step) {
    const float y = y_of(b);
    dl->AddLine(ImVec2(plot_x0, y), ImVec2(plot_x0 + plot_w, y), palette::grid);
    const std::string label = format_bytes(b);
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    dl->AddText(ImVec2(plot_x0 - tw - 8.0f * scale, y - font * 0.5f), palette::text_dim,
                label.c_str());
  }

  dl->PushClipRect(ImVec2(plot_x0, area_y0), ImVec2(plot_x0 + plot_w, bottom), true);
  static std::vector<memory_column> columns;
  curve.envelope(s.axis, columns);
  const ImU32 reserved_fill = (palette::reserved & 0x00FFFFFF) | 0x30000000;
  const ImU32 allocated_fill = (palette::allocated & 0x00FFFFFF) | 0x70000000;
  for (std::size_t x = 0; x < columns.size(); ++x) {
    const auto& c = columns[x];
    if (!c.valid)
      continue;
    const float px = plot_x0 + static_cast<float>(x);
    dl->AddRectFilled(ImVec2(px, y_of(static_cast<double>(c.reserved_max))),
                      ImVec2(px + 1.0f, bottom), reserved_fill);
    dl->AddRectFilled(ImVec2(px, y_of(static_cast<double>(c.allocated_max))),
                      ImVec2(px + 1.0f, bottom), allocated_fill);
  }
  // Stacked bands of the largest allocations.
  std::optional<std::size_t> hovered_band;
  const double mouse_x = io.MousePos.x - plot_x0;
  const std::int64_t mouse_t = s.axis.time_at(mouse_x);
  const double mouse_bytes = (bottom - io.MousePos.y) / (area_h - pad_top) * top;
  if (hovered && io.MousePos.y >= area_y0)
    hovered_band = dm.bands.hit_test(mouse_t, static_cast<std::int64_t>(mouse_bytes));
  const auto& bands = dm.bands.bands();
  for (std::size_t b = 0; b < bands.size(); ++b) {
    const auto& band = bands[b];
    if (s.axis.x_of(band.end) < 0 || s.axis.x_of(band.begin) > plot_w)
      continue;
    const auto& alloc = dm.allocations[band.allocation];
    const std::string site = site_name(t, alloc.stack);
    const bool is_selected = s.selected_allocation == band.allocation;
    const bool is_hovered = hovered_band == b;
    const ImU32 col = colour_for(site, is_hovered ? 1.0f : 0.85f);
    for (std::size_t k = 0; k < band.steps.size(); ++k) {
      const std::int64_t a = band.steps[k].time;
      const std::int64_t e = k + 1 < band.steps.size() ? band.steps[k + 1].time : band.end;
      const float x0 = plot_x0 + static_cast<float>(std::max(s.axis.x_of(a), -2.0));
      const float x1 = plot_x0 + static_cast<float>(std::min(s.axis.x_of(e), plot_w + 2.0));
      if (x1 < plot_x0 || x0 > plot_x0 + plot_w)
        continue;
      const float y1 = y_of(static_cast<double>(band.steps[k].base));
      const float y0 = y_of(static_cast<double>(band.steps[k].base + band.size));
      dl->AddRectFilled(ImVec2(x0, y0), ImVec2(std::max(x1, x0 + 1.0f), y1), col);
      if (x1 - x0 > 3.0f || is_selected)
        dl->AddRect(ImVec2(x0, y0), ImVec2(std::max(x1, x0 + 1.0f), y1),
                    is_selected ? palette::selection : IM_COL32(20, 20, 24, 160), 0.0f, 0,
                    is_selected ? 2.0f : 1.0f);
    }
  }
  // Curve outlines on top: the min..max span of each column, then a step line.
  for (std::size_t x = 0; x < columns.size(); ++x) {
    const auto& c = columns[x];
    if (!c.valid)
      continue;
    const float px = plot_x0 + static_cast<float>(x) + 0.5f;
    dl->AddLine(ImVec2(px, y_of(static_cast<double>(c.reserved_max)) - 1.0f),
                ImVec2(px, y_of(static_cast<double>(c.reserved_min)) + 1.0f), palette::reserved,
                1.5f);
    dl->AddLine(ImVec2(px, y_of(static_cast<double>(c.allocated_max)) - 1.0f),
                ImVec2(px, y_of(static_cast<double>(c.allocated_min)) + 1.0f), palette::allocated,
                1.5f);
  }
  // OOM and assertion markers; the allocator cursor.
  for (const auto& m : doc.trace_markers) {
    const double x = s.axis.x_of(m.time);
    if (x < 0 || x > plot_w)
      continue;
    const float px = plot_x0 + static_cast<float>(x);
    dl->AddLine(ImVec2(px, area_y0), ImVec2(px, bottom),
                m.kind == marker_kind::oom ? palette::marker_oom : palette::marker_assert, 2.0f);
    dl->AddText(ImVec2(px + 4, area_y0 + 2),
                m.kind == marker_kind::oom ? palette::marker_oom : palette::marker_assert,
                m.label.c_str());
  }
  {
    const double x = s.axis.x_of(s.cursor_time);
    if (x >= 0 && x <= plot_w) {
      const float px = plot_x0 + static_cast<float>(x);
      for (float y = area_y0; y < bottom; y += 8.0f * scale)
        dl->AddLine(ImVec2(px, y), ImVec2(px, std::min(y + 4.0f * scale, bottom)), palette::cursor,
                    1.0f);
    }
  }
  dl->PopClipRect();

  // Tooltips and clicks.
  if (hovered && io.MousePos.y >= area_y0) {
    ImGui::BeginTooltip();
    if (hovered_band) {
      const auto& band = bands[*hovered_band];
      const auto& a = dm.allocations[band.allocation];
      ImGui::Text("%s at 0x%llx", format_bytes(static_cast<double>(a.size)).c_str(),
                  static_cast<unsigned long long>(a.address));
      ImGui::TextUnformatted(site_name(t, a.stack).c_str());
      ImGui::TextColored(
          ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "allocated at %s, %s",
          format_duration(static_cast<double>(a.begin - zero)).c_str(),
          a.alive_at_end
              ? "alive at the end"
              : fmt::format("freed after {}", format_duration(static_cast<double>(a.end - a.begin)))
                    .c_str());
    } else {
      const memory_column c = curve.at(mouse_t);
      ImGui::Text("t = %s", format_duration(static_cast<double>(mouse_t - zero)).c_str());
      ImGui::Text("allocated %s", format_bytes(static_cast<double>(c.allocated_max)).c_str());
      ImGui::Text("reserved  %s", format_bytes(static_cast<double>(c.reserved_max)).c_str());
      ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "click: allocator state at this time");
    }
    ImGui::EndTooltip();
  }
  const bool clicked = hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).x == 0.0f;
  if (clicked) {
    if (hovered_band) {
      const auto& a = dm.allocations[bands[*hovered_band].allocation];
      s.selected = {event_kind::memory, a.alloc_event};
      s.selected_allocation = bands[*hovered_band].allocation;
      s.selected_block.reset();
      s.selected_diagnostic.reset();
    } else {
      s.cursor_time = mouse_t;
    }
  }
  if (hovered)
    s.status = fmt::format("t = {}", format_duration(static_cast<double>(mouse_t - zero)));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y));
}

} // namespace tdiag::view
