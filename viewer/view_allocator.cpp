// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The allocator view: segments and their blocks at the time cursor (memory_viz's "Allocator
// State History"), scrubbed by dragging on the overview strip or stepping with the arrow keys.
// The state comes from trace's allocator_replay (the document's), sought on the state_seeker's
// worker thread: a frame only draws the rows in sight.
#include <tensordiag/trace/allocator_replay.hpp>
#include <tensordiag/viewer/block_runs.hpp>
#include <tensordiag/viewer/format.hpp>
#include <tensordiag/viewer/tables.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "views.hpp"

namespace tdiag::view {
namespace {

const char* state_name(trace::block_state st) {
  switch (st) {
  case trace::block_state::active_allocated:
    return "allocated";
  case trace::block_state::active_pending_free:
    return "freed, waiting on a stream";
  case trace::block_state::inactive:
    return "free (cached)";
  }
  return "?";
}

// The overview strip: the whole history's allocated curve with the cursor; dragging scrubs.
void draw_scrub_strip(view_context& ctx, device_memory& dm, float height) {
  auto& s = ctx.state;
  const float scale = s.ui_scale;
  const float font = ImGui::GetFontSize();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = ImGui::GetContentRegionAvail().x;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + height), IM_COL32(30, 33, 40, 255), 4.0f);

  time_axis strip;
  const auto& replay = *dm.replay;
  // The dense part of the history: a snapshot's set-up seconds would squash the steps.
  const std::int64_t begin = replay.size() ? dm.window.first : ctx.doc.span.begin;
  const std::int64_t end = replay.size() ? dm.window.second : ctx.doc.span.end;
  strip.set_width(w);
  strip.set_limits(begin, std::max(end, begin + 1));
  strip.fit(begin, std::max(end, begin + 1));
  static std::vector<memory_column> cols;
  dm.curve.envelope(strip, cols);
  const double top =
      std::max<double>(std::max(dm.curve.peak_reserved(), dm.curve.peak_allocated()), 1.0);
  for (std::size_t x = 0; x < cols.size(); ++x) {
    if (!cols[x].valid)
      continue;
    const float px = p.x + static_cast<float>(x);
    const float yr =
        p.y + height - static_cast<float>(cols[x].reserved_max / top) * (height - 4.0f);
    const float ya =
        p.y + height - static_cast<float>(cols[x].allocated_max / top) * (height - 4.0f);
    dl->AddRectFilled(ImVec2(px, yr), ImVec2(px + 1, p.y + height),
                      (palette::reserved & 0x00FFFFFF) | 0x50000000);
    dl->AddRectFilled(ImVec2(px, ya), ImVec2(px + 1, p.y + height),
                      (palette::allocated & 0x00FFFFFF) | 0xC0000000);
  }
  ImGui::InvisibleButton("##scrub", ImVec2(w, height));
  if (ImGui::IsItemActive() && ImGui::IsMouseDown(ImGuiMouseButton_Left))
    s.cursor_time = strip.time_at(std::clamp(ImGui::GetIO().MousePos.x - p.x, 0.0f, w));
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("drag to scrub the allocator state through time (or use ← →)");
  const float cx =
      p.x + static_cast<float>(std::clamp(strip.x_of(s.cursor_time), 0.0, static_cast<double>(w)));
  dl->AddLine(ImVec2(cx, p.y), ImVec2(cx, p.y + height), palette::selection, 2.0f);
  dl->AddTriangleFilled(ImVec2(cx - 6 * scale, p.y), ImVec2(cx + 6 * scale, p.y),
                        ImVec2(cx, p.y + 8 * scale), palette::selection);
  static std::vector<std::size_t> shown;
  const auto& markers = ctx.doc.trace_markers;
  one_per_column(
      markers.size(), [&](std::size_t i) { return markers[i].time; }, strip, 0.0, shown);
  for (const std::size_t i : shown) {
    const auto& m = markers[i];
    if (m.kind != marker_kind::oom)
      continue;
    const float mx = p.x + static_cast<float>(strip.x_of(m.time));
    dl->AddLine(ImVec2(mx, p.y), ImVec2(mx, p.y + height), palette::marker_oom, 2.0f);
  }
  (void)font;
}

// Arrow keys step one event; returns how many events the state at the cursor has seen.
std::size_t step_cursor(view_state& s, const trace::allocator_replay& replay) {
  const auto events = replay.events();
  std::size_t n = replay.index_at_time(s.cursor_time);
  if (ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) &&
      !ImGui::GetIO().WantTextInput) {
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow)) && n < replay.size())
      s.cursor_time = events[n].time, n = replay.index_at_time(s.cursor_time);
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow)) && n > 1)
      s.cursor_time = events[n - 2].time, n = replay.index_at_time(s.cursor_time);
  }
  return n;
}

// The cursor's event and the state's figures.
void draw_state_summary(const view_context& ctx, const trace::allocator_replay& replay,
                        const seeked_state& shown) {
  const auto& s = ctx.state;
  const std::int64_t zero = ctx.doc.span.begin;
  const trace::state_figures& f = shown.figures;
  const std::size_t n = shown.index;
  if (n > 0) {
    const auto& e = replay.events()[n - 1];
    ImGui::Text("t = %s   ·   event %zu of %zu: %s %s at 0x%llx",
                format_duration(static_cast<double>(s.cursor_time - zero)).c_str(), n,
                replay.size(), std::string(to_string(e.action)).c_str(),
                format_bytes(static_cast<double>(e.size)).c_str(),
                static_cast<unsigned long long>(e.address));
  } else {
    ImGui::Text("t = %s   ·   before the first of %zu events",
                format_duration(static_cast<double>(s.cursor_time - zero)).c_str(), replay.size());
  }
  ImGui::Text("%zu segments   reserved %s   allocated %s   pending free %s   cached free %s   "
              "largest free block %s   fragmentation %.0f%%",
              f.segments, format_bytes(static_cast<double>(f.reserved)).c_str(),
              format_bytes(static_cast<double>(f.allocated)).c_str(),
              format_bytes(static_cast<double>(f.pending_free)).c_str(),
              format_bytes(static_cast<double>(f.free)).c_str(),
              format_bytes(static_cast<double>(f.largest_free_block)).c_str(),
              100.0 * f.fragmentation());
  ImGui::TextDisabled("colour: allocation site   ·   red: freed, waiting on a stream   ·   "
                      "dark: free (cached)   ·   red strip: rounding waste");
  ImGui::Separator();
}

struct segment_hover {
  const trace::segment* segment = nullptr;
  const trace::block* block = nullptr;
};

// The blocks of one segment's bar, coloured by site, with rounding waste: runs of blocks
// narrower than a pixel fold into one rectangle (block_runs), so the draw list stays bounded.
void draw_blocks(const trace::trace& t, ImDrawList* dl, const trace::segment& seg, float x0,
                 float y0, float y1, float w, float scale) {
  static std::unordered_map<trace::stack_id, ImU32> stack_colours;
  static std::vector<block_run> runs;
  if (stack_colours.size() > 100'000)
    stack_colours.clear();
  const double px_per_byte = w / static_cast<double>(std::max<std::uint64_t>(seg.total_size, 1));
  block_runs(seg, w, 1.0, runs);
  for (const auto& r : runs) {
    const auto& b = seg.blocks[r.shown];
    if (b.state == trace::block_state::inactive)
      continue; // the bar's background is the free colour
    const float bx0 = x0 + static_cast<float>(r.x0);
    const float bx1 = std::max(x0 + static_cast<float>(r.x1), bx0 + 1.0f);
    ImU32 col = palette::pending;
    if (b.state == trace::block_state::active_allocated) {
      auto it = stack_colours.find(b.stack);
      if (it == stack_colours.end())
        it = stack_colours.emplace(b.stack, colour_for(site_name(t, b.stack))).first;
      col = it->second;
    }
    dl->AddRectFilled(ImVec2(bx0, y0), ImVec2(bx1, y1), col);
    if (bx1 - bx0 > 3.0f)
      dl->AddLine(ImVec2(bx1 - 0.5f, y0), ImVec2(bx1 - 0.5f, y1), IM_COL32(20, 22, 26, 255));
    // Rounding waste: the part of the block nobody asked for.
    if (!r.folded() && b.requested_size != 0 && b.requested_size < b.size && bx1 - bx0 > 4.0f)
      dl->AddRectFilled(ImVec2(x0 + static_cast<float>(static_cast<double>(b.address - seg.address +
                                                                           b.requested_size) *
                                                       px_per_byte),
                               y1 - 3.0f * scale),
                        ImVec2(bx1, y1), palette::pending);
  }
}

// One row: the segment's size and address, then its bar scaled to the largest segment.
void draw_segment_row(const view_context& ctx, ImDrawList* dl, const trace::segment& seg,
                      float label_w, float bar_w, float row_h, std::uint64_t max_segment,
                      segment_hover& hover) {
  const float scale = ctx.state.ui_scale;
  const float font = ImGui::GetFontSize();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const std::string label =
      fmt::format("{}{}  0x{:x}", format_bytes(static_cast<double>(seg.total_size)),
                  seg.pool == trace::implicit_pool ? " (block)" : "", seg.address);
  dl->AddText(ImVec2(p.x + 4 * scale, p.y + (row_h - font) * 0.5f), palette::text_dim,
              label.c_str());
  const float x0 = p.x + label_w;
  const float w = std::max(bar_w * static_cast<float>(static_cast<double>(seg.total_size) /
                                                      static_cast<double>(max_segment)),
                           6.0f * scale);
  const float y0 = p.y + 2.0f * scale;
  const float y1 = p.y + row_h - 2.0f * scale;
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + w, y1), palette::free_block);
  const double px_per_byte = w / static_cast<double>(std::max<std::uint64_t>(seg.total_size, 1));
  draw_blocks(ctx.doc.trace, dl, seg, x0, y0, y1, w, scale);
  dl->AddRect(ImVec2(x0, y0), ImVec2(x0 + w, y1), IM_COL32(90, 95, 105, 255));
  const ImGuiIO& io = ImGui::GetIO();
  if (io.MousePos.y >= y0 && io.MousePos.y < y1 && io.MousePos.x >= x0 && io.MousePos.x < x0 + w &&
      ImGui::IsWindowHovered()) {
    hover.segment = &seg;
    const auto addr = seg.address + static_cast<std::uint64_t>((io.MousePos.x - x0) / px_per_byte);
    if (const auto b = block_at(seg, addr))
      hover.block = &seg.blocks[*b];
  }
  ImGui::Dummy(ImVec2(label_w + w, row_h));
}

// The hovered segment and block; a click selects the block.
void segment_tooltip(view_context& ctx, const device_memory& dm, const segment_hover& hover) {
  auto& s = ctx.state;
  ImGui::BeginTooltip();
  ImGui::Text("segment 0x%llx: %s, %zu blocks",
              static_cast<unsigned long long>(hover.segment->address),
              format_bytes(static_cast<double>(hover.segment->total_size)).c_str(),
              hover.segment->blocks.size());
  if (hover.block != nullptr) {
    ImGui::Separator();
    ImGui::Text("block 0x%llx: %s", static_cast<unsigned long long>(hover.block->address),
                format_bytes(static_cast<double>(hover.block->size)).c_str());
    ImGui::TextUnformatted(state_name(hover.block->state));
    if (hover.block->state != trace::block_state::inactive)
      ImGui::TextUnformatted(site_name(ctx.doc.trace, hover.block->stack).c_str());
  }
  ImGui::EndTooltip();
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && hover.block != nullptr) {
    s.selected_block = block_selection{dm.device, hover.segment->address, *hover.block};
    s.selected = {};
    s.selected_allocation.reset();
    s.selected_diagnostic.reset();
  }
}

} // namespace

void draw_allocator(view_context& ctx) {
  auto& s = ctx.state;
  auto& doc = ctx.doc;
  if (doc.memory.empty()) {
    ImGui::TextDisabled("This trace has no allocator events.");
    return;
  }
  s.memory_device = std::min(s.memory_device, doc.memory.size() - 1);
  auto& dm = doc.memory[s.memory_device];
  const float scale = s.ui_scale;
  draw_scrub_strip(ctx, dm, std::round(64.0f * scale));
  // The state comes from the seeker's worker: this frame draws the newest one published (held
  // for the frame), and the worker wakes the window when the one asked for is ready.
  const std::size_t target = step_cursor(s, *dm.replay);
  dm.seeker->request(target);
  const auto shown = dm.seeker->latest();
  const trace::allocator_state& st = shown->state;
  draw_state_summary(ctx, *dm.replay, *shown);
  if (shown->index != target)
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.35f, 1.0f), "replaying to event %zu ...", target);

  const std::uint64_t max_segment = std::max<std::uint64_t>(shown->figures.largest_segment, 1);
  const float label_w = std::round(230.0f * scale);
  const float row_h = std::round(ImGui::GetFontSize() + 10.0f * scale);
  ImGui::BeginChild("##segments", ImVec2(0, 0), false);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float bar_w = std::max(ImGui::GetContentRegionAvail().x - label_w - 8.0f * scale, 50.0f);
  segment_hover hover;
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(st.segments.size()), row_h);
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i)
      draw_segment_row(ctx, dl, st.segments[static_cast<std::size_t>(i)], label_w, bar_w, row_h,
                       max_segment, hover);
  clipper.End();
  if (hover.segment != nullptr)
    segment_tooltip(ctx, dm, hover);
  if (st.segments.empty())
    ImGui::TextDisabled("No segments at this time.");
  ImGui::EndChild();
}

} // namespace tdiag::view
