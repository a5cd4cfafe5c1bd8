// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The timeline: one track per GPU stream and host thread, nested rows, level-of-detail boxes,
// launch -> kernel flows, markers, hover tooltips, click to select, zoom and pan.
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "views.hpp"

namespace tdiag::view {
namespace {

constexpr std::size_t max_flows_drawn = 600;

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

} // namespace

void draw_timeline(view_context& ctx) {
  auto& s = ctx.state;
  auto& doc = ctx.doc;
  const auto& t = doc.trace;
  const float scale = s.ui_scale;
  const float font = ImGui::GetFontSize();
  const float label_w = std::round(230.0f * scale);
  const float ruler_h = std::round(font + 12.0f * scale);
  const float scrollbar_w = std::round(10.0f * scale);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const float plot_x0 = origin.x + label_w;
  const float plot_w = std::max(avail.x - label_w - scrollbar_w, 50.0f);
  const float area_y0 = origin.y + ruler_h;
  const float area_h = std::max(avail.y - ruler_h, 10.0f);
  s.axis.set_width(plot_w);
  if (s.pending_fit) {
    s.axis.fit(s.pending_fit->first, s.pending_fit->second);
    s.pending_fit.reset();
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const std::int64_t zero = doc.span.begin;

  // Layout metrics follow the font, so the DPI scale applies.
  auto& layout = doc.layout;
  const float row_h = std::round(font + 6.0f * scale);
  layout.set_metrics(std::round(font + 8.0f * scale), row_h, std::round(6.0f * scale));
  const float max_scroll = std::max(layout.total_height() - area_h, 0.0f);

  if (s.scroll_to_selection) {
    if (const auto where = layout.find(s.selected, t)) {
      const float y = layout.row_y(where->track, where->row);
      if (y < s.timeline_scroll_y || y + row_h > s.timeline_scroll_y + area_h)
        s.timeline_scroll_y = y - area_h * 0.4f;
    }
    s.scroll_to_selection = false;
  }

  // Input: one invisible button over ruler and tracks.
  ImGui::SetCursorScreenPos(ImVec2(plot_x0, origin.y));
  ImGui::InvisibleButton("##timeline_plot", ImVec2(plot_w, avail.y),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  const bool plot_hovered = ImGui::IsItemHovered();
  handle_axis_input(s, ImVec2(plot_x0, origin.y), ImVec2(plot_x0 + plot_w, origin.y + avail.y),
                    true);
  ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsItemActive())
    for (const ImGuiMouseButton b : {ImGuiMouseButton_Left, ImGuiMouseButton_Right})
      if (ImGui::IsMouseDragging(b, 2.0f))
        s.timeline_scroll_y -= io.MouseDelta.y;
  if (plot_hovered && io.KeyShift && io.MouseWheel != 0.0f)
    s.timeline_scroll_y -= io.MouseWheel * row_h * 4.0f;
  // Wheel over the label column scrolls vertically.
  ImGui::SetCursorScreenPos(ImVec2(origin.x, area_y0));
  ImGui::InvisibleButton("##timeline_labels", ImVec2(label_w, area_h));
  if (ImGui::IsItemHovered() && io.MouseWheel != 0.0f)
    s.timeline_scroll_y -= io.MouseWheel * row_h * 4.0f;
  // Scrollbar.
  ImGui::SetCursorScreenPos(ImVec2(plot_x0 + plot_w, area_y0));
  ImGui::InvisibleButton("##timeline_scroll", ImVec2(scrollbar_w, area_h));
  if (ImGui::IsItemActive() && max_scroll > 0.0f)
    s.timeline_scroll_y += io.MouseDelta.y * layout.total_height() / area_h;
  s.timeline_scroll_y = std::clamp(s.timeline_scroll_y, 0.0f, max_scroll);

  // Ruler and markers on it.
  draw_ruler(dl, s.axis, ImVec2(plot_x0, origin.y), ruler_h, zero);
  dl->AddRectFilled(origin, ImVec2(plot_x0, area_y0), IM_COL32(32, 35, 42, 255));
  {
    const std::string span =
        fmt::format("view {}", format_duration(s.axis.width() * s.axis.ns_per_px()));
    dl->AddText(ImVec2(origin.x + 8 * scale, origin.y + (ruler_h - font) * 0.5f), palette::text_dim,
                span.c_str());
  }

  const ImVec2 clip_min(origin.x, area_y0);
  const ImVec2 clip_max(plot_x0 + plot_w + scrollbar_w, area_y0 + area_h);
  dl->PushClipRect(clip_min, clip_max, true);
  dl->AddRectFilled(clip_min, clip_max, IM_COL32(24, 26, 31, 255));

  // Vertical grid lines at ruler ticks.
  {
    const double step = tick_step(s.axis.ns_per_px(), 110.0);
    for (double rel = std::floor(s.axis.offset_at(0.0) / step) * step;; rel += step) {
      const double x = (rel - s.axis.offset_at(0.0)) / s.axis.ns_per_px();
      if (x > plot_w)
        break;
      if (x >= 0)
        dl->AddLine(ImVec2(plot_x0 + static_cast<float>(x), area_y0),
                    ImVec2(plot_x0 + static_cast<float>(x), area_y0 + area_h), palette::grid);
    }
  }

  std::optional<row_hit> hover_row;
  if (plot_hovered && io.MousePos.y >= area_y0)
    hover_row = layout.row_at(io.MousePos.y - area_y0 + s.timeline_scroll_y);
  const double mouse_x = io.MousePos.x - plot_x0;
  event_ref hovered;
  const lod_item* hovered_fold = nullptr;
  const row_index* hovered_fold_row = nullptr;
  static std::vector<lod_item> items; // reused: no allocation per row per frame
  static lod_item fold_copy;
  lod_options lod;
  lod.min_px = 3.0;
  lod.max_group_px = 24.0 * scale;

  std::vector<int> lane_track(t.lanes.size(), -1);
  const auto& tracks = layout.tracks();
  for (std::size_t k = 0; k < tracks.size(); ++k) {
    lane_track[tracks[k].lane] = static_cast<int>(k);
    const track& tr = tracks[k];
    const float ty = area_y0 + tr.y - s.timeline_scroll_y;
    if (ty > area_y0 + area_h)
      break;
    if (ty + tr.height < area_y0)
      continue;
    // Header: title in the label column, a separator across the plot.
    const bool gpu = tr.kind != track_kind::host_thread;
    dl->AddRectFilled(ImVec2(origin.x, ty), ImVec2(plot_x0 + plot_w, ty + layout.header_height()),
                      gpu ? IM_COL32(38, 44, 58, 255) : IM_COL32(40, 42, 48, 255));
    dl->AddText(ImVec2(origin.x + 8 * scale, ty + (layout.header_height() - font) * 0.5f),
                tr.kind == track_kind::memory ? IM_COL32(240, 200, 120, 255)
                : gpu                         ? IM_COL32(140, 200, 255, 255)
                                              : IM_COL32(200, 205, 215, 255),
                tr.title.c_str());
    dl->AddText(ImVec2(plot_x0 + 6 * scale, ty + (layout.header_height() - font) * 0.5f),
                palette::text_dim, tr.subtitle.c_str());
    if (tr.kind == track_kind::memory) {
      const float py = ty + layout.header_height();
      const float ph = row_h * static_cast<float>(tr.plot_rows);
      const bool over =
          plot_hovered && io.MousePos.y >= std::max(py, area_y0) && io.MousePos.y < py + ph;
      draw_memory_track(ctx, tr, dl, plot_x0, py, ph, over, mouse_x);
    }
    for (std::size_t r = 0; r < tr.rows.size(); ++r) {
      const float y0 = ty + layout.header_height() + row_h * static_cast<float>(r);
      if (y0 > area_y0 + area_h || y0 + row_h < area_y0)
        continue;
      const row_index& row = tr.rows[r];
      build_lod(row, s.axis, lod, items);
      const bool this_row_hovered = hover_row && hover_row->track == k && hover_row->row == r;
      for (const auto& it : items) {
        const float x0 = plot_x0 + static_cast<float>(std::max(it.x0, -2.0));
        const float x1 =
            plot_x0 + static_cast<float>(std::min(std::max(it.x1, it.x0 + 1.0), plot_w + 2.0));
        const ImVec2 a(x0, y0 + 1.0f);
        const ImVec2 b(x1, y0 + row_h - 1.0f);
        if (!it.folded()) {
          const event_ref e = row.refs[it.first];
          const std::string_view name = name_of(t, e);
          dl->AddRectFilled(a, b, colour_for(name));
          if (x1 - x0 > 3.0f * font) {
            const std::string_view label = short_name(name);
            const ImVec4 clip(std::max(x0, plot_x0) + 3.0f, a.y,
                              std::min(x1, plot_x0 + plot_w) - 2.0f, b.y);
            dl->AddText(nullptr, 0.0f, ImVec2(clip.x, y0 + (row_h - font) * 0.5f),
                        IM_COL32(18, 18, 22, 255), label.data(), label.data() + label.size(), 0.0f,
                        &clip);
          }
          if (this_row_hovered && mouse_x >= it.x0 - 1 && mouse_x <= std::max(it.x1, it.x0 + 1) + 1)
            hovered = e;
        } else {
          // Density: brightness follows how busy the events keep the row.
          const double occ = it.occupancy(s.axis.ns_per_px());
          const int alpha = 90 + static_cast<int>(165.0 * occ);
          // The first event's colour, muted: runs of one op keep their hue when folded.
          ImVec4 c = ImGui::ColorConvertU32ToFloat4(colour_for(name_of(t, row.refs[it.first])));
          const float mute = 0.55f;
          const ImU32 base = ImGui::GetColorU32(ImVec4(
              c.x * mute + 0.45f * (gpu ? 0.38f : 0.6f), c.y * mute + 0.45f * (gpu ? 0.58f : 0.62f),
              c.z * mute + 0.45f * (gpu ? 0.86f : 0.68f), static_cast<float>(alpha) / 255.0f));
          dl->AddRectFilled(a, b, base);
          if (x1 - x0 > 4.0f * font) {
            const std::string label = fmt::format("{}", it.count);
            const ImVec4 clip(x0 + 2.0f, a.y, x1 - 2.0f, b.y);
            dl->AddText(nullptr, 0.0f, ImVec2(x0 + 3.0f, y0 + (row_h - font) * 0.5f),
                        IM_COL32(15, 20, 30, 255), label.c_str(), nullptr, 0.0f, &clip);
          }
          if (this_row_hovered && mouse_x >= it.x0 - 1 && mouse_x <= it.x1 + 1) {
            fold_copy = it;
            hovered_fold = &fold_copy;
            hovered_fold_row = &row;
          }
        }
      }
    }
    // Separator under the track.
    dl->AddLine(ImVec2(origin.x, ty + tr.height + 2.0f),
                ImVec2(plot_x0 + plot_w, ty + tr.height + 2.0f), IM_COL32(60, 64, 72, 255));
  }
  // A precise hit test when the cursor is between items.
  if (hover_row && !hovered.valid() && hovered_fold == nullptr) {
    const auto& row = tracks[hover_row->track].rows[hover_row->row];
    if (const auto i = hit_test(row, s.axis, mouse_x, 3.0))
      hovered = row.refs[*i];
  }

  // Selected event outline.
  if (s.selected.valid()) {
    if (const auto where = layout.find(s.selected, t)) {
      const event_times w = times_of(t, s.selected);
      const float y0 = area_y0 + layout.row_y(where->track, where->row) - s.timeline_scroll_y;
      const float x0 = plot_x0 + static_cast<float>(std::max(s.axis.x_of(w.begin), -4.0));
      const float x1 =
          plot_x0 + static_cast<float>(std::min(
                        std::max(s.axis.x_of(w.end), s.axis.x_of(w.begin) + 2.0), plot_w + 4.0));
      dl->AddRect(ImVec2(x0 - 1, y0), ImVec2(x1 + 1, y0 + row_h), palette::selection, 0.0f, 0,
                  2.0f);
    }
  }

  // Flows: launch -> kernel, for what is in view (and always the selection's).
  if (s.show_flows && !t.flows.empty()) {
    std::size_t drawn = 0;
    const std::int64_t t0 = s.axis.start();
    const std::int64_t t1 = s.axis.end();
    std::uint32_t selected_corr = 0;
    if (s.selected.kind == event_kind::kernel)
      selected_corr = t.kernels[s.selected.index].correlation;
    else if (s.selected.kind == event_kind::api)
      selected_corr = t.api_calls[s.selected.index].correlation;
    for (std::size_t k = 0; k < tracks.size() && drawn < max_flows_drawn; ++k) {
      for (const auto& f : t.flows.overlapping(tracks[k].lane, t0, t1)) {
        if (drawn >= max_flows_drawn)
          break;
        const int tk = f.target_lane < lane_track.size() ? lane_track[f.target_lane] : -1;
        if (tk < 0 || f.time < t0)
          continue;
        const bool highlighted = selected_corr != 0 && f.correlation == selected_corr;
        // Too dense to read: show only the selection's flow.
        if (s.axis.ns_per_px() > 20'000.0 && !highlighted)
          continue;
        const int sr = row_of_start(tracks[k], f.time);
        const int tr = row_of_start(tracks[static_cast<std::size_t>(tk)], f.target_time);
        const float sy = area_y0 - s.timeline_scroll_y +
                         layout.row_y(k, static_cast<std::size_t>(std::max(sr, 0))) + row_h;
        const float ty =
            area_y0 - s.timeline_scroll_y +
            layout.row_y(static_cast<std::size_t>(tk), static_cast<std::size_t>(std::max(tr, 0)));
        const ImVec2 p0(plot_x0 + static_cast<float>(s.axis.x_of(f.time)), sy);
        const ImVec2 p1(plot_x0 + static_cast<float>(s.axis.x_of(f.target_time)), ty);
        const ImU32 col = highlighted ? palette::selection : IM_COL32(230, 230, 240, 110);
        const float dy = (p1.y - p0.y) * 0.5f;
        dl->AddBezierCubic(p0, ImVec2(p0.x, p0.y + dy), ImVec2(p1.x, p1.y - dy), p1, col,
                           highlighted ? 2.0f : 1.0f);
        dl->AddTriangleFilled(ImVec2(p1.x, p1.y), ImVec2(p1.x - 3 * scale, p1.y - 6 * scale),
                              ImVec2(p1.x + 3 * scale, p1.y - 6 * scale), col);
        ++drawn;
      }
    }
  }
  dl->PopClipRect();

  // Markers: a line through the plot, a flag on the ruler.
  std::vector<const timeline_marker*> markers;
  for (const auto& m : doc.trace_markers)
    markers.push_back(&m);
  for (const auto& m : ctx.report_markers)
    markers.push_back(&m);
  const timeline_marker* hovered_marker = nullptr;
  for (const auto* m : markers) {
    const double x = s.axis.x_of(m->time);
    if (x < -6 || x > plot_w + 6)
      continue;
    const float px = plot_x0 + static_cast<float>(x);
    const ImU32 col = marker_colour(m->kind);
    dl->AddLine(ImVec2(px, area_y0), ImVec2(px, area_y0 + area_h), (col & 0x00FFFFFF) | 0x90000000,
                1.5f);
    const float fy = origin.y + 2.0f;
    dl->AddTriangleFilled(ImVec2(px - 6 * scale, fy), ImVec2(px + 6 * scale, fy),
                          ImVec2(px, fy + 10 * scale), col);
    if (std::fabs(io.MousePos.x - px) < 7 * scale && io.MousePos.y >= origin.y &&
        io.MousePos.y < area_y0)
      hovered_marker = m;
  }
  // Scrollbar thumb.
  if (max_scroll > 0.0f) {
    const float thumb_h = std::max(area_h * area_h / layout.total_height(), 20.0f * scale);
    const float thumb_y = area_y0 + (area_h - thumb_h) * (s.timeline_scroll_y / max_scroll);
    dl->AddRectFilled(ImVec2(plot_x0 + plot_w + 2, thumb_y),
                      ImVec2(plot_x0 + plot_w + scrollbar_w - 2, thumb_y + thumb_h),
                      IM_COL32(110, 115, 125, 200), 3.0f);
  }

  // Tooltips and clicks.
  s.hovered = hovered;
  if (hovered_marker != nullptr) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(hovered_marker->label.c_str());
    ImGui::Text("at %s", format_duration(static_cast<double>(hovered_marker->time - zero)).c_str());
    ImGui::EndTooltip();
  } else if (hovered.valid()) {
    event_tooltip(ctx, hovered);
  } else if (hovered_fold != nullptr) {
    density_tooltip(ctx, *hovered_fold_row, *hovered_fold);
  }
  const bool clicked = ImGui::IsMouseReleased(ImGuiMouseButton_Left) && plot_hovered &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).x == 0.0f &&
                       ImGui::GetMouseDragDelta(ImGuiMouseButton_Left, 2.0f).y == 0.0f;
  if (clicked) {
    if (hovered_marker != nullptr) {
      if (hovered_marker->event.valid())
        jump_to(ctx, hovered_marker->event, false);
      else if (hovered_marker->report != static_cast<std::size_t>(-1))
        s.selected_diagnostic = std::pair{hovered_marker->report, hovered_marker->diagnostic};
    } else if (hovered.valid()) {
      s.selected = hovered;
      s.selected_allocation.reset();
      s.selected_block.reset();
      s.selected_diagnostic.reset();
    } else if (hovered_fold != nullptr) {
      // Clicking a density box zooms to it.
      s.axis.fit(s.axis.time_at(hovered_fold->x0), s.axis.time_at(hovered_fold->x1) + 1);
    } else if (io.MousePos.y >= area_y0) {
      s.selected = {};
    }
  }
  if (plot_hovered && ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left) && hovered.valid()) {
    const event_times w = times_of(t, hovered);
    show_time(ctx, w.begin, w.end);
  }
  if (plot_hovered)
    s.status =
        fmt::format("t = {}", format_duration(static_cast<double>(s.axis.time_at(mouse_x) - zero)));
  ImGui::SetCursorScreenPos(ImVec2(origin.x, origin.y + avail.y));
}

} // namespace tdiag::view
