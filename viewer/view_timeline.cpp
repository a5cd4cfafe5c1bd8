// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The timeline: one track per GPU stream and host thread, nested rows, level-of-detail boxes,
// launch -> kernel flows, markers, hover tooltips, click to select, zoom and pan.
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <vector>

#include "views.hpp"

namespace tdiag::view {
namespace {

// Flows drawn at most: each is a 12-segment curve (about 80 vertices), so they stay well
// inside one draw list's 65,536 vertices next to the tracks.
constexpr std::size_t max_flows_drawn = 256;
constexpr int flow_segments = 12;

void event_tooltip(const view_context& ctx, event_ref e) {
  const auto& t = ctx.doc.trace;
  const event_times w = times_of(t, e);
  const std::int64_t zero = ctx.doc.span.begin;
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
  ImGui::TextUnformatted(std::string(name_of(t, e)).c_str());
  ImGui::PopTextWrapPos();
  ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "%s",
                     std::string(kind_label(t, e)).c_str());
  ImGui::Separator();
  ImGui::Text("duration  %s", format_duration(static_cast<double>(w.end - w.begin)).c_str());
  ImGui::Text("start     %s", format_duration(static_cast<double>(w.begin - zero)).c_str());
  if (e.kind == event_kind::kernel) {
    const auto& k = t.kernels[e.index];
    ImGui::Text("grid      [%u, %u, %u]   block [%u, %u, %u]", k.grid[0], k.grid[1], k.grid[2],
                k.block[0], k.block[1], k.block[2]);
    if (k.registers != 0)
      ImGui::Text("registers %u   shared %u B", k.registers, k.shared_static + k.shared_dynamic);
  } else if (e.kind == event_kind::copy) {
    ImGui::Text("bytes     %s", format_bytes(static_cast<double>(t.copies[e.index].bytes)).c_str());
  }
  ImGui::EndTooltip();
}

void density_tooltip(const view_context& ctx, const row_index& row, const lod_item& it) {
  ImGui::BeginTooltip();
  ImGui::Text("%u events folded", it.count);
  ImGui::Text("busy %s of %s (%.0f%%)", format_duration(static_cast<double>(it.busy_ns)).c_str(),
              format_duration((it.x1 - it.x0) * ctx.state.axis.ns_per_px()).c_str(),
              100.0 * it.occupancy(ctx.state.axis.ns_per_px()));
  const event_ref first = row.refs[it.first];
  ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "first: %s",
                     std::string(short_name(name_of(ctx.doc.trace, first))).c_str());
  ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "zoom in (wheel, W) to see them");
  ImGui::EndTooltip();
}

// The row showing the event of `lane` that starts exactly at `time` (deepest first), or -1.
int row_of_start(const track& tr, std::int64_t time) {
  for (std::size_t r = tr.rows.size(); r-- > 0;) {
    const auto& row = tr.rows[r];
    if (std::binary_search(row.start.begin(), row.start.end(), time))
      return static_cast<int>(r);
  }
  return -1;
}

// A memory track: the device's allocated and reserved bytes, min/max per pixel column.
void draw_memory_track(view_context& ctx, const track& tr, ImDrawList* dl, float x0, float y0,
                       float height, bool hovered, double mouse_x) {
  const device_memory* dm = nullptr;
  for (const auto& m : ctx.doc.memory)
    if (m.device == tr.device)
      dm = &m;
  if (dm == nullptr)
    return;
  static std::vector<memory_column> cols;
  dm->curve.envelope(ctx.state.axis, cols);
  const double top =
      std::max<double>(std::max(dm->curve.peak_reserved(), dm->curve.peak_allocated()) * 1.05, 1.0);
  const float bottom = y0 + height - 1.0f;
  auto y_of = [&](std::int64_t v) {
    return bottom - static_cast<float>(v / top) * (height - 3.0f);
  };
  for (std::size_t x = 0; x < cols.size(); ++x) {
    if (!cols[x].valid)
      continue;
    const float px = x0 + static_cast<float>(x);
    dl->AddRectFilled(ImVec2(px, y_of(cols[x].reserved_max)), ImVec2(px + 1.0f, bottom),
                      (palette::reserved & 0x00FFFFFF) | 0x38000000);
    dl->AddRectFilled(ImVec2(px, y_of(cols[x].allocated_max)), ImVec2(px + 1.0f, bottom),
                      (palette::allocated & 0x00FFFFFF) | 0x90000000);
    dl->AddLine(ImVec2(px + 0.5f, y_of(cols[x].allocated_max) - 1.0f),
                ImVec2(px + 0.5f, y_of(cols[x].allocated_min) + 1.0f), palette::allocated);
    dl->AddLine(ImVec2(px + 0.5f, y_of(cols[x].reserved_max) - 1.0f),
                ImVec2(px + 0.5f, y_of(cols[x].reserved_min) + 1.0f), palette::reserved);
  }
  if (hovered && mouse_x >= 0 && static_cast<std::size_t>(mouse_x) < cols.size() &&
      cols[static_cast<std::size_t>(mouse_x)].valid) {
    const auto& c = cols[static_cast<std::size_t>(mouse_x)];
    ImGui::BeginTooltip();
    ImGui::Text("allocated %s", format_bytes(static_cast<double>(c.allocated_max)).c_str());
    ImGui::Text("reserved  %s", format_bytes(static_cast<double>(c.reserved_max)).c_str());
    ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "the Memory tab shows allocations");
    ImGui::EndTooltip();
  }
}

ImU32 marker_colour(marker_kind k) {
  switch (k) {
  case marker_kind::assertion:
    return palette::marker_assert;
  case marker_kind::oom:
    return palette::marker_oom;
  case marker_kind::diagnostic:
    return palette::marker_diag;
  }
  return palette::marker_diag;
}

// What one frame of the timeline shares between its pieces: geometry, the mouse, and what
// is under it. Tracy splits its timeline the same way, one function per item kind.
struct timeline_frame {
  view_context& ctx;
  ImDrawList* dl = nullptr;
  float scale = 1, font = 13, label_w = 0, ruler_h = 0, scrollbar_w = 0, row_h = 0;
  ImVec2 avail{}, origin{};
  float plot_x0 = 0, plot_w = 0, area_y0 = 0, area_h = 0, max_scroll = 0;
  std::int64_t zero = 0;
  bool plot_hovered = false;
  double mouse_x = 0;
  std::optional<row_hit> hover_row{};
  event_ref hovered{};
  const lod_item* hovered_fold = nullptr;
  const row_index* hovered_fold_row = nullptr;
  const timeline_marker* hovered_marker = nullptr;
  std::vector<int> lane_track{}; ///< lane -> track index, -1 when not laid out
};

timeline_frame begin_frame(view_context& ctx) {
  timeline_frame f{ctx};
  auto& s = ctx.state;
  f.scale = s.ui_scale;
  f.font = ImGui::GetFontSize();
  f.label_w = std::round(230.0f * f.scale);
  f.ruler_h = std::round(f.font + 12.0f * f.scale);
  f.scrollbar_w = std::round(10.0f * f.scale);
  f.avail = ImGui::GetContentRegionAvail();
  f.origin = ImGui::GetCursorScreenPos();
  f.plot_x0 = f.origin.x + f.label_w;
  f.plot_w = std::max(f.avail.x - f.label_w - f.scrollbar_w, 50.0f);
  f.area_y0 = f.origin.y + f.ruler_h;
  f.area_h = std::max(f.avail.y - f.ruler_h, 10.0f);
  f.dl = ImGui::GetWindowDrawList();
  f.zero = ctx.doc.span.begin;
  s.axis.set_width(f.plot_w);
  if (s.pending_fit) {
    s.axis.fit(s.pending_fit->first, s.pending_fit->second);
    s.pending_fit.reset();
  }
  // Layout metrics follow the font, so the DPI scale applies.
  auto& layout = ctx.doc.layout;
  f.row_h = std::round(f.font + 6.0f * f.scale);
  layout.set_metrics(std::round(f.font + 8.0f * f.scale), f.row_h, std::round(6.0f * f.scale));
  f.max_scroll = std::max(layout.total_height() - f.area_h, 0.0f);
  if (s.scroll_to_selection) {
    if (const auto where = layout.find(s.selected, ctx.doc.trace)) {
      const float y = layout.row_y(where->track, where->row);
      if (y < s.timeline_scroll_y || y + f.row_h > s.timeline_scroll_y + f.area_h)
        s.timeline_scroll_y = y - f.area_h * 0.4f;
    }
    s.scroll_to_selection = false;
  }
  f.lane_track.assign(ctx.doc.trace.lanes.size(), -1);
  return f;
}

// One invisible button over ruler and tracks, one over the labels, one for the scrollbar.
void handle_scroll_input(timeline_frame& f) {
  auto& s = f.ctx.state;
  const auto& layout = f.ctx.doc.layout;
  ImGui::SetCursorScreenPos(ImVec2(f.plot_x0, f.origin.y));
  ImGui::InvisibleButton("##timeline_plot", ImVec2(f.plot_w, f.avail.y),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  f.plot_hovered = ImGui::IsItemHovered();
  handle_axis_input(s, ImVec2(f.plot_x0, f.origin.y),
                    ImVec2(f.plot_x0 + f.plot_w, f.origin.y + f.avail.y), true);
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActive())
    for (const ImGuiMouseButton b : {ImGuiMouseButton_Left, ImGuiMouseButton_Right})
      if (ImGui::IsMouseDragging(b, 2.0f))
        s.timeline_scroll_y -= io.MouseDelta.y;
  if (f.plot_hovered && io.KeyShift && io.MouseWheel != 0.0f)
    s.timeline_scroll_y -= io.MouseWheel * f.row_h * 4.0f;
  // Wheel over the label column scrolls vertically.
  ImGui::SetCursorScreenPos(ImVec2(f.origin.x, f.area_y0));
  ImGui::InvisibleButton("##timeline_labels", ImVec2(f.label_w, f.area_h));
  if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f)
    s.timeline_scroll_y -= io.MouseWheel * f.row_h * 4.0f;
  ImGui::SetCursorScreenPos(ImVec2(f.plot_x0 + f.plot_w, f.area_y0));
  ImGui::InvisibleButton("##timeline_scroll", ImVec2(f.scrollbar_w, f.area_h));
  if (ImGui::IsItemActive() && f.max_scroll > 0.0f)
    s.timeline_scroll_y += io.MouseDelta.y * layout.total_height() / f.area_h;
  s.timeline_scroll_y = std::clamp(s.timeline_scroll_y, 0.0f, f.max_scroll);
  if (f.plot_hovered && io.MousePos.y >= f.area_y0)
    f.hover_row = layout.row_at(io.MousePos.y - f.area_y0 + s.timeline_scroll_y);
  f.mouse_x = io.MousePos.x - f.plot_x0;
}

// The ruler with the view's width, the plot background and grid lines at ruler ticks.
void draw_ruler_and_grid(timeline_frame& f) {
  const auto& axis = f.ctx.state.axis;
  draw_ruler(f.dl, axis, ImVec2(f.plot_x0, f.origin.y), f.ruler_h, f.zero);
  f.dl->AddRectFilled(f.origin, ImVec2(f.plot_x0, f.area_y0), IM_COL32(32, 35, 42, 255));
  const std::string span = fmt::format("view {}", format_duration(axis.width() * axis.ns_per_px()));
  f.dl->AddText(ImVec2(f.origin.x + 8 * f.scale, f.origin.y + (f.ruler_h - f.font) * 0.5f),
                palette::text_dim, span.c_str());
  const ImVec2 clip_min(f.origin.x, f.area_y0);
  const ImVec2 clip_max(f.plot_x0 + f.plot_w + f.scrollbar_w, f.area_y0 + f.area_h);
  f.dl->PushClipRect(clip_min, clip_max, true);
  f.dl->AddRectFilled(clip_min, clip_max, IM_COL32(24, 26, 31, 255));
  const double step = tick_step(axis.ns_per_px(), 110.0);
  for (double rel = std::floor(axis.offset_at(0.0) / step) * step;; rel += step) {
    const double x = (rel - axis.offset_at(0.0)) / axis.ns_per_px();
    if (x > f.plot_w)
      break;
    if (x >= 0)
      f.dl->AddLine(ImVec2(f.plot_x0 + static_cast<float>(x), f.area_y0),
                    ImVec2(f.plot_x0 + static_cast<float>(x), f.area_y0 + f.area_h), palette::grid);
  }
}

// A track's header: title in the label column, subtitle across the plot.
void draw_track_header(timeline_frame& f, const track& tr, float ty) {
  const auto& layout = f.ctx.doc.layout;
  const bool gpu = tr.kind != track_kind::host_thread;
  f.dl->AddRectFilled(ImVec2(f.origin.x, ty),
                      ImVec2(f.plot_x0 + f.plot_w, ty + layout.header_height()),
                      gpu ? IM_COL32(38, 44, 58, 255) : IM_COL32(40, 42, 48, 255));
  f.dl->AddText(ImVec2(f.origin.x + 8 * f.scale, ty + (layout.header_height() - f.font) * 0.5f),
                tr.kind == track_kind::memory ? IM_COL32(240, 200, 120, 255)
                : gpu                         ? IM_COL32(140, 200, 255, 255)
                                              : IM_COL32(200, 205, 215, 255),
                tr.title.c_str());
  f.dl->AddText(ImVec2(f.plot_x0 + 6 * f.scale, ty + (layout.header_height() - f.font) * 0.5f),
                palette::text_dim, tr.subtitle.c_str());
}

// One event as a box in its name's colour, labelled when wide enough.
void draw_event_item(timeline_frame& f, const row_index& row, const lod_item& it, float y0,
                     bool row_hovered) {
  const auto& t = f.ctx.doc.trace;
  const float x0 = f.plot_x0 + static_cast<float>(std::max(it.x0, -2.0));
  const float x1 =
      f.plot_x0 + static_cast<float>(std::min(std::max(it.x1, it.x0 + 1.0), f.plot_w + 2.0));
  const ImVec2 a(x0, y0 + 1.0f);
  const ImVec2 b(x1, y0 + f.row_h - 1.0f);
  const event_ref e = row.refs[it.first];
  const std::string_view name = name_of(t, e);
  f.dl->AddRectFilled(a, b, colour_for(name));
  if (x1 - x0 > 3.0f * f.font) {
    const std::string_view label = short_name(name);
    const ImVec4 clip(std::max(x0, f.plot_x0) + 3.0f, a.y,
                      std::min(x1, f.plot_x0 + f.plot_w) - 2.0f, b.y);
    f.dl->AddText(nullptr, 0.0f, ImVec2(clip.x, y0 + (f.row_h - f.font) * 0.5f),
                  IM_COL32(18, 18, 22, 255), label.data(), label.data() + label.size(), 0.0f,
                  &clip);
  }
  if (row_hovered && f.mouse_x >= it.x0 - 1 && f.mouse_x <= std::max(it.x1, it.x0 + 1) + 1)
    f.hovered = e;
}

// Events folded into one density box: brightness follows how busy they keep the row, the hue
// is the first event's (runs of one op keep their colour), the label is the count.
void draw_density_item(timeline_frame& f, const row_index& row, const lod_item& it, float y0,
                       bool row_hovered, bool gpu) {
  static lod_item fold_copy;
  const float x0 = f.plot_x0 + static_cast<float>(std::max(it.x0, -2.0));
  const float x1 =
      f.plot_x0 + static_cast<float>(std::min(std::max(it.x1, it.x0 + 1.0), f.plot_w + 2.0));
  const ImVec2 a(x0, y0 + 1.0f);
  const ImVec2 b(x1, y0 + f.row_h - 1.0f);
  const double occ = it.occupancy(f.ctx.state.axis.ns_per_px());
  const int alpha = 90 + static_cast<int>(165.0 * occ);
  const ImVec4 c =
      ImGui::ColorConvertU32ToFloat4(colour_for(name_of(f.ctx.doc.trace, row.refs[it.first])));
  const float mute = 0.55f;
  const ImU32 base = ImGui::GetColorU32(
      ImVec4(c.x * mute + 0.45f * (gpu ? 0.38f : 0.6f), c.y * mute + 0.45f * (gpu ? 0.58f : 0.62f),
             c.z * mute + 0.45f * (gpu ? 0.86f : 0.68f), static_cast<float>(alpha) / 255.0f));
  f.dl->AddRectFilled(a, b, base);
  if (x1 - x0 > 4.0f * f.font) {
    const std::string label = fmt::format("{}", it.count);
    const ImVec4 clip(x0 + 2.0f, a.y, x1 - 2.0f, b.y);
    f.dl->AddText(nullptr, 0.0f, ImVec2(x0 + 3.0f, y0 + (f.row_h - f.font) * 0.5f),
                  IM_COL32(15, 20, 30, 255), label.c_str(), nullptr, 0.0f, &clip);
  }
  if (row_hovered && f.mouse_x >= it.x0 - 1 && f.mouse_x <= it.x1 + 1) {
    fold_copy = it;
    f.hovered_fold = &fold_copy;
    f.hovered_fold_row = &row;
  }
}

// Every visible track: header, memory plot, rows of level-of-detail items, separator.
void draw_tracks(timeline_frame& f) {
  auto& s = f.ctx.state;
  const auto& layout = f.ctx.doc.layout;
  const ImGuiIO& io = ImGui::GetIO();
  static std::vector<lod_item> items; // reused: no allocation per row per frame
  lod_options lod;
  lod.min_px = 3.0;
  lod.max_group_px = 24.0 * f.scale;
  const auto& tracks = layout.tracks();
  for (std::size_t k = 0; k < tracks.size(); ++k) {
    f.lane_track[tracks[k].lane] = static_cast<int>(k);
    const track& tr = tracks[k];
    const float ty = f.area_y0 + tr.y - s.timeline_scroll_y;
    if (ty > f.area_y0 + f.area_h)
      break;
    if (ty + tr.height < f.area_y0)
      continue;
    draw_track_header(f, tr, ty);
    if (tr.kind == track_kind::memory) {
      const float py = ty + layout.header_height();
      const float ph = f.row_h * static_cast<float>(tr.plot_rows);
      const bool over =
          f.plot_hovered && io.MousePos.y >= std::max(py, f.area_y0) && io.MousePos.y < py + ph;
      draw_memory_track(f.ctx, tr, f.dl, f.plot_x0, py, ph, over, f.mouse_x);
    }
    for (std::size_t r = 0; r < tr.rows.size(); ++r) {
      const float y0 = ty + layout.header_height() + f.row_h * static_cast<float>(r);
      if (y0 > f.area_y0 + f.area_h || y0 + f.row_h < f.area_y0)
        continue;
      const row_index& row = tr.rows[r];
      build_lod(row, s.axis, lod, items);
      const bool row_hovered = f.hover_row && f.hover_row->track == k && f.hover_row->row == r;
      for (const auto& it : items) {
        if (it.folded())
          draw_density_item(f, row, it, y0, row_hovered, tr.kind != track_kind::host_thread);
        else
          draw_event_item(f, row, it, y0, row_hovered);
      }
    }
    f.dl->AddLine(ImVec2(f.origin.x, ty + tr.height + 2.0f),
                  ImVec2(f.plot_x0 + f.plot_w, ty + tr.height + 2.0f), IM_COL32(60, 64, 72, 255));
  }
  // A precise hit test when the cursor is between items.
  if (f.hover_row && !f.hovered.valid() && f.hovered_fold == nullptr) {
    const auto& row = tracks[f.hover_row->track].rows[f.hover_row->row];
    if (const auto i = hit_test(row, s.axis, f.mouse_x, 3.0))
      f.hovered = row.refs[*i];
  }
}

void draw_selection_outline(timeline_frame& f) {
  const auto& s = f.ctx.state;
  const auto& t = f.ctx.doc.trace;
  if (!s.selected.valid())
    return;
  const auto where = f.ctx.doc.layout.find(s.selected, t);
  if (!where)
    return;
  const event_times w = times_of(t, s.selected);
  const float y0 =
      f.area_y0 + f.ctx.doc.layout.row_y(where->track, where->row) - s.timeline_scroll_y;
  const float x0 = f.plot_x0 + static_cast<float>(std::max(s.axis.x_of(w.begin), -4.0));
  const float x1 =
      f.plot_x0 + static_cast<float>(std::min(
                      std::max(s.axis.x_of(w.end), s.axis.x_of(w.begin) + 2.0), f.plot_w + 4.0));
  f.dl->AddRect(ImVec2(x0 - 1, y0), ImVec2(x1 + 1, y0 + f.row_h), palette::selection, 0.0f, 0,
                2.0f);
}

// One launch -> kernel arrow.
void draw_flow(timeline_frame& f, const trace::flow_event& flow, std::size_t k, std::size_t tk,
               bool highlighted) {
  const auto& s = f.ctx.state;
  const auto& layout = f.ctx.doc.layout;
  const auto& tracks = layout.tracks();
  const int sr = row_of_start(tracks[k], flow.time);
  const int tr = row_of_start(tracks[tk], flow.target_time);
  const float sy = f.area_y0 - s.timeline_scroll_y +
                   layout.row_y(k, static_cast<std::size_t>(std::max(sr, 0))) + f.row_h;
  const float ty =
      f.area_y0 - s.timeline_scroll_y + layout.row_y(tk, static_cast<std::size_t>(std::max(tr, 0)));
  const ImVec2 p0(f.plot_x0 + static_cast<float>(s.axis.x_of(flow.time)), sy);
  const ImVec2 p1(f.plot_x0 + static_cast<float>(s.axis.x_of(flow.target_time)), ty);
  const ImU32 col = highlighted ? palette::selection : IM_COL32(230, 230, 240, 110);
  const float dy = (p1.y - p0.y) * 0.5f;
  f.dl->AddBezierCubic(p0, ImVec2(p0.x, p0.y + dy), ImVec2(p1.x, p1.y - dy), p1, col,
                       highlighted ? 2.0f : 1.0f, flow_segments);
  f.dl->AddTriangleFilled(ImVec2(p1.x, p1.y), ImVec2(p1.x - 3 * f.scale, p1.y - 6 * f.scale),
                          ImVec2(p1.x + 3 * f.scale, p1.y - 6 * f.scale), col);
}

// Flows: launch -> kernel, for what is in view (and always the selection's).
void draw_flows(timeline_frame& f) {
  const auto& s = f.ctx.state;
  const auto& t = f.ctx.doc.trace;
  if (!s.show_flows || t.flows.empty())
    return;
  std::size_t drawn = 0;
  const std::int64_t t0 = s.axis.start();
  const std::int64_t t1 = s.axis.end();
  std::uint32_t selected_corr = 0;
  if (s.selected.kind == event_kind::kernel)
    selected_corr = t.kernels[s.selected.index].correlation;
  else if (s.selected.kind == event_kind::api)
    selected_corr = t.api_calls[s.selected.index].correlation;
  const auto& tracks = f.ctx.doc.layout.tracks();
  // Too dense to read: only the selection's flows, found once per selection rather than by
  // visiting every flow in view each frame (400k of them at full zoom-out on a large trace).
  if (s.axis.ns_per_px() > 20'000.0) {
    static std::vector<trace::flow_event> selected_flows;
    static std::tuple<const trace::trace*, std::size_t, std::uint32_t> found_for{nullptr, 0, 0};
    if (found_for != std::tuple{&t, t.flows.size(), selected_corr}) {
      selected_flows.clear();
      for (const auto& flow : t.flows.all())
        if (selected_corr != 0 && flow.correlation == selected_corr)
          selected_flows.push_back(flow);
      found_for = {&t, t.flows.size(), selected_corr};
    }
    for (const auto& flow : selected_flows) {
      const int sk = flow.lane < f.lane_track.size() ? f.lane_track[flow.lane] : -1;
      const int tk = flow.target_lane < f.lane_track.size() ? f.lane_track[flow.target_lane] : -1;
      if (sk >= 0 && tk >= 0)
        draw_flow(f, flow, static_cast<std::size_t>(sk), static_cast<std::size_t>(tk), true);
    }
    return;
  }
  for (std::size_t k = 0; k < tracks.size() && drawn < max_flows_drawn; ++k) {
    for (const auto& flow : t.flows.overlapping(tracks[k].lane, t0, t1)) {
      if (drawn >= max_flows_drawn)
        break;
      const int tk = flow.target_lane < f.lane_track.size() ? f.lane_track[flow.target_lane] : -1;
      if (tk < 0 || flow.time < t0)
        continue;
      const bool highlighted = selected_corr != 0 && flow.correlation == selected_corr;
      draw_flow(f, flow, k, static_cast<std::size_t>(tk), highlighted);
      ++drawn;
    }
  }
}

// Markers: a line through the plot, a flag on the ruler; then the scrollbar thumb.
void draw_markers_and_thumb(timeline_frame& f) {
  const auto& s = f.ctx.state;
  const ImGuiIO& io = ImGui::GetIO();
  static std::vector<const timeline_marker*> markers;
  static std::vector<std::size_t> shown;
  markers.clear();
  for (const auto* list : {&f.ctx.doc.trace_markers, &f.ctx.report_markers}) {
    one_per_column(
        list->size(), [&](std::size_t i) { return (*list)[i].time; }, s.axis, 6.0, shown);
    for (const std::size_t i : shown)
      markers.push_back(&(*list)[i]);
  }
  for (const auto* m : markers) {
    const double x = s.axis.x_of(m->time);
    if (x < -6 || x > f.plot_w + 6)
      continue;
    const float px = f.plot_x0 + static_cast<float>(x);
    const ImU32 col = marker_colour(m->kind);
    f.dl->AddLine(ImVec2(px, f.area_y0), ImVec2(px, f.area_y0 + f.area_h),
                  (col & 0x00FFFFFF) | 0x90000000, 1.5f);
    const float fy = f.origin.y + 2.0f;
    f.dl->AddTriangleFilled(ImVec2(px - 6 * f.scale, fy), ImVec2(px + 6 * f.scale, fy),
                            ImVec2(px, fy + 10 * f.scale), col);
    if (std::fabs(io.MousePos.x - px) < 7 * f.scale && io.MousePos.y >= f.origin.y &&
        io.MousePos.y < f.area_y0)
      f.hovered_marker = m;
  }
  if (f.max_scroll > 0.0f) {
    const float total = f.ctx.doc.layout.total_height();
    const float thumb_h = std::max(f.area_h * f.area_h / total, 20.0f * f.scale);
    const float thumb_y = f.area_y0 + (f.area_h - thumb_h) * (s.timeline_scroll_y / f.max_scroll);
    f.dl->AddRectFilled(ImVec2(f.plot_x0 + f.plot_w + 2, thumb_y),
                        ImVec2(f.plot_x0 + f.plot_w + f.scrollbar_w - 2, thumb_y + thumb_h),
                        IM_COL32(110, 115, 125, 200), 3.0f);
  }
}

// Tooltips, clicks (select, jump to a marker, zoom into a density box) and the status line.
void handle_hover_and_clicks(timeline_frame& f) {
  auto& s = f.ctx.state;
  const ImGuiIO& io = ImGui::GetIO();
  s.hovered = f.hovered;
  if (f.hovered_marker != nullptr) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(f.hovered_marker->label.c_str());
    ImGui::Text("at %s",
                format_duration(static_cast<double>(f.hovered_marker->time - f.zero)).c_str());
    ImGui::EndTooltip();
  } else if (f.hovered.valid()) {
    event_tooltip(f.ctx, f.hovered);
  } else if (f.hovered_fold != nullptr) {
    density_tooltip(f.ctx, *f.hovered_fold_row, *f.hovered_fold);
  }
  const bool clicked = ImGui::IsMouseReleased(ImGuiMouseButton_Left) && f.plot_hovered &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).x == 0.0f &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).y == 0.0f;
  if (clicked) {
    if (f.hovered_marker != nullptr) {
      if (f.hovered_marker->event.valid())
        jump_to(f.ctx, f.hovered_marker->event, false);
      else if (f.hovered_marker->report != static_cast<std::size_t>(-1))
        s.selected_diagnostic = std::pair{f.hovered_marker->report, f.hovered_marker->diagnostic};
    } else if (f.hovered.valid()) {
      s.selected = f.hovered;
      s.selected_allocation.reset();
      s.selected_block.reset();
      s.selected_diagnostic.reset();
    } else if (f.hovered_fold != nullptr) {
      s.axis.fit(s.axis.time_at(f.hovered_fold->x0), s.axis.time_at(f.hovered_fold->x1) + 1);
    } else if (io.MousePos.y >= f.area_y0) {
      s.selected = {};
    }
  }
  if (f.plot_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && f.hovered.valid()) {
    const event_times w = times_of(f.ctx.doc.trace, f.hovered);
    show_time(f.ctx, w.begin, w.end);
  }
  if (f.plot_hovered)
    s.status = fmt::format(
        "t = {}", format_duration(static_cast<double>(s.axis.time_at(f.mouse_x) - f.zero)));
}

} // namespace

void draw_timeline(view_context& ctx) {
  timeline_frame f = begin_frame(ctx);
  handle_scroll_input(f);
  draw_ruler_and_grid(f); // pushes the plot's clip rectangle
  draw_tracks(f);
  draw_selection_outline(f);
  draw_flows(f);
  f.dl->PopClipRect();
  draw_markers_and_thumb(f);
  handle_hover_and_clicks(f);
  ImGui::SetCursorScreenPos(ImVec2(f.origin.x, f.origin.y + f.avail.y));
}

} // namespace tdiag::view
