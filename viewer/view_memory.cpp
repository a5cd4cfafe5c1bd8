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
#include <optional>
#include <vector>

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

// What one frame of the memory view shares between its pieces (one function per item kind:
// toolbar, grid, curve fill, bands, outlines, markers, tooltips).
struct memory_frame {
  view_context& ctx;
  device_memory& dm;
  ImDrawList* dl = nullptr;
  float scale = 1, font = 13;
  ImVec2 avail{}, origin{};
  float plot_x0 = 0, plot_w = 0, area_y0 = 0, area_h = 0, ruler_h = 0, pad_top = 0, bottom = 0;
  double top = 1;
  std::int64_t zero = 0;
  bool hovered = false;
  std::int64_t mouse_t = 0;
  std::optional<std::size_t> hovered_band{};
  std::vector<memory_column>* columns = nullptr;

  [[nodiscard]] float y_of(double bytes) const {
    return bottom - static_cast<float>(bytes / top) * (area_h - pad_top);
  }
};

// Device picker, peak figures and the legend.
void draw_memory_toolbar(view_context& ctx, device_memory& dm) {
  auto& s = ctx.state;
  auto& doc = ctx.doc;
  const float scale = s.ui_scale;
  const float font = ImGui::GetFontSize();
  const auto device_label = [](std::int32_t d) {
    return d < 0 ? std::string("host") : fmt::format("GPU {}", d);
  };
  if (doc.memory.size() > 1) {
    ImGui::SetNextItemWidth(150.0f * scale);
    if (ImGui::BeginCombo("##device", device_label(dm.device).c_str())) {
      for (std::size_t i = 0; i < doc.memory.size(); ++i)
        if (ImGui::Selectable(device_label(doc.memory[i].device).c_str(), i == s.memory_device))
          s.memory_device = i;
      ImGui::EndCombo();
    }
    ImGui::SameLine();
  }
  const auto& curve = dm.curve;
  const std::int64_t zero = doc.span.begin;
  ImGui::Text("peak allocated %s at %s   ·   peak reserved %s   ·   %zu allocations",
              format_bytes(static_cast<double>(curve.peak_allocated())).c_str(),
              format_duration(static_cast<double>(curve.peak_allocated_time() - zero)).c_str(),
              format_bytes(static_cast<double>(curve.peak_reserved())).c_str(),
              dm.allocations.size());
  ImGui::SameLine(0.0f, 24.0f * scale);
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

memory_frame begin_memory_frame(view_context& ctx, device_memory& dm) {
  memory_frame f{ctx, dm};
  auto& s = ctx.state;
  f.scale = s.ui_scale;
  f.font = ImGui::GetFontSize();
  f.zero = ctx.doc.span.begin;
  const float label_w = std::round(230.0f * f.scale);
  const float scrollbar_w = std::round(10.0f * f.scale);
  f.ruler_h = std::round(f.font + 12.0f * f.scale);
  f.avail = ImGui::GetContentRegionAvail();
  f.origin = ImGui::GetCursorScreenPos();
  f.plot_x0 = f.origin.x + label_w;
  f.plot_w = std::max(f.avail.x - label_w - scrollbar_w, 50.0f);
  f.area_y0 = f.origin.y + f.ruler_h;
  f.area_h = std::max(f.avail.y - f.ruler_h - 4.0f * f.scale, 20.0f);
  f.pad_top = 10.0f * f.scale;
  f.bottom = f.area_y0 + f.area_h;
  f.top = std::max<double>(std::max(dm.curve.peak_reserved(), dm.curve.peak_allocated()) * 1.08,
                           1024.0);
  s.axis.set_width(f.plot_w);
  if (s.pending_fit) {
    s.axis.fit(s.pending_fit->first, s.pending_fit->second);
    s.pending_fit.reset();
  }
  ImGui::SetCursorScreenPos(ImVec2(f.plot_x0, f.origin.y));
  ImGui::InvisibleButton("##memory_plot", ImVec2(f.plot_w, f.ruler_h + f.area_h),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  f.hovered = ImGui::IsItemHovered();
  handle_axis_input(s, ImVec2(f.plot_x0, f.origin.y),
                    ImVec2(f.plot_x0 + f.plot_w, f.area_y0 + f.area_h), true);
  const ImGuiIO& io = ImGui::GetIO();
  f.mouse_t = s.axis.time_at(io.MousePos.x - f.plot_x0);
  const double mouse_bytes = (f.bottom - io.MousePos.y) / (f.area_h - f.pad_top) * f.top;
  if (f.hovered && io.MousePos.y >= f.area_y0)
    f.hovered_band = dm.bands.hit_test(f.mouse_t, static_cast<std::int64_t>(mouse_bytes));
  f.dl = ImGui::GetWindowDrawList();
  static std::vector<memory_column> columns;
  dm.curve.envelope(s.axis, columns);
  f.columns = &columns;
  return f;
}

// Ruler, background and a horizontal grid with byte labels.
void draw_bytes_grid(memory_frame& f) {
  draw_ruler(f.dl, f.ctx.state.axis, ImVec2(f.plot_x0, f.origin.y), f.ruler_h, f.zero);
  f.dl->AddRectFilled(ImVec2(f.origin.x, f.area_y0), ImVec2(f.plot_x0 + f.plot_w, f.bottom),
                      IM_COL32(24, 26, 31, 255));
  const double step =
      nice_bytes_step(f.top, std::max(static_cast<int>(f.area_h / (f.font * 3.0f)), 2));
  for (double b = 0; b <= f.top; b += step) {
    const float y = f.y_of(b);
    f.dl->AddLine(ImVec2(f.plot_x0, y), ImVec2(f.plot_x0 + f.plot_w, y), palette::grid);
    const std::string label = format_bytes(b);
    const float tw = ImGui::CalcTextSize(label.c_str()).x;
    f.dl->AddText(ImVec2(f.plot_x0 - tw - 8.0f * f.scale, y - f.font * 0.5f), palette::text_dim,
                  label.c_str());
  }
}

// The curves: filled (under the bands) or as min..max outlines per column (over them).
void draw_curve_columns(memory_frame& f, bool outline) {
  const ImU32 reserved_fill = (palette::reserved & 0x00FFFFFF) | 0x30000000;
  const ImU32 allocated_fill = (palette::allocated & 0x00FFFFFF) | 0x70000000;
  const auto& columns = *f.columns;
  for (std::size_t x = 0; x < columns.size(); ++x) {
    const auto& c = columns[x];
    if (!c.valid)
      continue;
    const float px = f.plot_x0 + static_cast<float>(x);
    const auto y = [&](std::int64_t v) { return f.y_of(static_cast<double>(v)); };
    if (!outline) {
      f.dl->AddRectFilled(ImVec2(px, y(c.reserved_max)), ImVec2(px + 1.0f, f.bottom),
                          reserved_fill);
      f.dl->AddRectFilled(ImVec2(px, y(c.allocated_max)), ImVec2(px + 1.0f, f.bottom),
                          allocated_fill);
      continue;
    }
    f.dl->AddLine(ImVec2(px + 0.5f, y(c.reserved_max) - 1.0f),
                  ImVec2(px + 0.5f, y(c.reserved_min) + 1.0f), palette::reserved, 1.5f);
    f.dl->AddLine(ImVec2(px + 0.5f, y(c.allocated_max) - 1.0f),
                  ImVec2(px + 0.5f, y(c.allocated_min) + 1.0f), palette::allocated, 1.5f);
  }
}

// One allocation band: a box per step of its base, in its site's colour.
void draw_band(memory_frame& f, std::size_t b) {
  const auto& s = f.ctx.state;
  const auto& band = f.dm.bands.bands()[b];
  if (s.axis.x_of(band.end) < 0 || s.axis.x_of(band.begin) > f.plot_w)
    return;
  const auto& alloc = f.dm.allocations[band.allocation];
  const bool is_selected = s.selected_allocation == band.allocation;
  const ImU32 col =
      colour_for(site_name(f.ctx.doc.trace, alloc.stack), f.hovered_band == b ? 1.0f : 0.85f);
  for (std::size_t k = 0; k < band.steps.size(); ++k) {
    const std::int64_t a = band.steps[k].time;
    const std::int64_t e = k + 1 < band.steps.size() ? band.steps[k + 1].time : band.end;
    const float x0 = f.plot_x0 + static_cast<float>(std::max(s.axis.x_of(a), -2.0));
    const float x1 = f.plot_x0 + static_cast<float>(std::min(s.axis.x_of(e), f.plot_w + 2.0));
    if (x1 < f.plot_x0 || x0 > f.plot_x0 + f.plot_w)
      continue;
    const float y1 = f.y_of(static_cast<double>(band.steps[k].base));
    const float y0 = f.y_of(static_cast<double>(band.steps[k].base + band.size));
    f.dl->AddRectFilled(ImVec2(x0, y0), ImVec2(std::max(x1, x0 + 1.0f), y1), col);
    if (x1 - x0 > 3.0f || is_selected)
      f.dl->AddRect(ImVec2(x0, y0), ImVec2(std::max(x1, x0 + 1.0f), y1),
                    is_selected ? palette::selection : IM_COL32(20, 20, 24, 160), 0.0f, 0,
                    is_selected ? 2.0f : 1.0f);
  }
}

// OOM and assertion markers, and the allocator view's time cursor (dashed).
void draw_memory_markers(memory_frame& f) {
  const auto& s = f.ctx.state;
  static std::vector<std::size_t> shown;
  const auto& markers = f.ctx.doc.trace_markers;
  one_per_column(
      markers.size(), [&](std::size_t i) { return markers[i].time; }, s.axis, 0.0, shown);
  float label_end = -1e9f; // labels that would overlap the previous one are left out
  for (const std::size_t i : shown) {
    const auto& m = markers[i];
    const double x = s.axis.x_of(m.time);
    if (x < 0 || x > f.plot_w)
      continue;
    const float px = f.plot_x0 + static_cast<float>(x);
    const ImU32 col = m.kind == marker_kind::oom ? palette::marker_oom : palette::marker_assert;
    f.dl->AddLine(ImVec2(px, f.area_y0), ImVec2(px, f.bottom), col, 2.0f);
    if (px > label_end) {
      f.dl->AddText(ImVec2(px + 4, f.area_y0 + 2), col, m.label.c_str());
      label_end = px + 4 + ImGui::CalcTextSize(m.label.c_str()).x;
    }
  }
  const double x = s.axis.x_of(s.cursor_time);
  if (x < 0 || x > f.plot_w)
    return;
  const float px = f.plot_x0 + static_cast<float>(x);
  for (float y = f.area_y0; y < f.bottom; y += 8.0f * f.scale)
    f.dl->AddLine(ImVec2(px, y), ImVec2(px, std::min(y + 4.0f * f.scale, f.bottom)),
                  palette::cursor, 1.0f);
}

// The tooltip of a band or of the curves under the mouse; a click selects a band's allocation
// or moves the allocator cursor.
void handle_memory_hover(memory_frame& f) {
  auto& s = f.ctx.state;
  const ImGuiIO& io = ImGui::GetIO();
  const auto& bands = f.dm.bands.bands();
  if (f.hovered && io.MousePos.y >= f.area_y0) {
    ImGui::BeginTooltip();
    if (f.hovered_band) {
      const auto& a = f.dm.allocations[bands[*f.hovered_band].allocation];
      ImGui::Text("%s at 0x%llx", format_bytes(static_cast<double>(a.size)).c_str(),
                  static_cast<unsigned long long>(a.address));
      ImGui::TextUnformatted(site_name(f.ctx.doc.trace, a.stack).c_str());
      ImGui::TextColored(
          ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "allocated at %s, %s",
          format_duration(static_cast<double>(a.begin - f.zero)).c_str(),
          a.alive_at_end
              ? "alive at the end"
              : fmt::format("freed after {}", format_duration(static_cast<double>(a.end - a.begin)))
                    .c_str());
    } else {
      const memory_column c = f.dm.curve.at(f.mouse_t);
      ImGui::Text("t = %s", format_duration(static_cast<double>(f.mouse_t - f.zero)).c_str());
      ImGui::Text("allocated %s", format_bytes(static_cast<double>(c.allocated_max)).c_str());
      ImGui::Text("reserved  %s", format_bytes(static_cast<double>(c.reserved_max)).c_str());
      ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "click: allocator state at this time");
    }
    ImGui::EndTooltip();
  }
  const bool clicked = f.hovered && ImGui::IsMouseReleased(ImGuiMouseButton_Left) &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).x == 0.0f;
  if (clicked) {
    if (f.hovered_band) {
      const auto& a = f.dm.allocations[bands[*f.hovered_band].allocation];
      s.selected = {event_kind::memory, a.alloc_event};
      s.selected_allocation = bands[*f.hovered_band].allocation;
      s.selected_block.reset();
      s.selected_diagnostic.reset();
    } else {
      s.cursor_time = f.mouse_t;
    }
  }
  if (f.hovered)
    s.status = fmt::format("t = {}", format_duration(static_cast<double>(f.mouse_t - f.zero)));
}

} // namespace

void draw_memory(view_context& ctx) {
  auto& s = ctx.state;
  auto& doc = ctx.doc;
  if (doc.memory.empty()) {
    ImGui::TextDisabled("This trace has no memory events.");
    return;
  }
  s.memory_device = std::min(s.memory_device, doc.memory.size() - 1);
  auto& dm = doc.memory[s.memory_device];
  draw_memory_toolbar(ctx, dm);
  memory_frame f = begin_memory_frame(ctx, dm);
  draw_bytes_grid(f);
  f.dl->PushClipRect(ImVec2(f.plot_x0, f.area_y0), ImVec2(f.plot_x0 + f.plot_w, f.bottom), true);
  draw_curve_columns(f, false);
  for (std::size_t b = 0; b < dm.bands.bands().size(); ++b)
    draw_band(f, b);
  draw_curve_columns(f, true); // outlines on top of the bands
  draw_memory_markers(f);
  f.dl->PopClipRect();
  handle_memory_hover(f);
  ImGui::SetCursorScreenPos(ImVec2(f.origin.x, f.origin.y + f.avail.y));
}

} // namespace tdiag::view
