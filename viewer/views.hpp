// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The panels of tdiag-view, one file each (view_<panel>.cpp), and the state they share: the
// time axis (the timeline and the memory view scroll together), the selection, the allocator
// time cursor. Panels read the document and the reports; only the app changes them.
#pragma once

#include <tensordiag/viewer/lod.hpp>
#include <tensordiag/viewer/time_axis.hpp>

#include <imgui.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "document.hpp"

namespace tdiag::view {

enum class main_view : std::uint8_t { timeline, memory, allocator, tables, job, fr };

/// A block of the allocator view, selected.
struct block_selection {
  std::int32_t device = 0;
  std::uint64_t segment_address = 0;
  trace::block block;
};

struct view_state {
  main_view view = main_view::timeline;
  bool view_changed = true; ///< select the tab of `view` on the next frame
  time_axis axis;
  /// A range to show once the view has set the axis width (fits need the width).
  std::optional<std::pair<std::int64_t, std::int64_t>> pending_fit;

  event_ref selected;
  event_ref hovered;
  std::optional<std::size_t> selected_allocation; ///< index in the memory device's list
  std::optional<block_selection> selected_block;
  std::optional<std::pair<std::size_t, std::size_t>> selected_diagnostic; ///< report, index

  std::int64_t cursor_time = 0;  ///< the allocator view's instant
  std::size_t memory_device = 0; ///< index in document::memory
  float timeline_scroll_y = 0.0f;
  bool scroll_to_selection = false;
  std::size_t table_index = 0;
  std::string table_filter;
  std::string table_filter_error;
  bool show_flows = true;
  /// The Flight Recorder rings scroll to their newest entries and the first culprit's row on
  /// the next frame (set when dumps open).
  bool fr_focus = true;

  float ui_scale = 1.0f;
  std::string status; ///< one line for the status bar (hovered time, ...)
};

/// Everything a panel may look at.
struct view_context {
  document& doc;
  std::span<const loaded_report> reports;
  std::vector<timeline_marker>& report_markers;
  std::vector<table_model*>& tables; ///< the tables panel's list, in tab order
  view_state& state;
};

void draw_timeline(view_context& ctx);
void draw_memory(view_context& ctx);
void draw_allocator(view_context& ctx);
void draw_details(view_context& ctx);
void draw_tables(view_context& ctx);
void draw_job(view_context& ctx); ///< view_job.cpp: a job's analyses (document::job)
void draw_fr(view_context& ctx);  ///< view_fr.cpp: Flight Recorder rings and verdict (document::fr)

// Shared drawing helpers (view_common.cpp).
/// A pleasant colour for a name: same name, same colour.
[[nodiscard]] ImU32 colour_for(std::string_view name, float alpha = 1.0f);
/// Kernel and op names shortened for a box: "void at::native::foo<...>(...)" -> "foo".
[[nodiscard]] std::string_view short_name(std::string_view name) noexcept;
/// Draws the time ruler over [x0, x0 + axis.width()] at y, `height` tall; returns nothing.
void draw_ruler(ImDrawList* dl, const time_axis& axis, ImVec2 origin, float height,
                std::int64_t time_zero);
/// Selects an event and brings it into view on the timeline.
void jump_to(view_context& ctx, event_ref e, bool switch_view);
/// Shows [t0, t1] on the shared axis (with a margin) and, if asked, switches to the timeline.
void show_time(view_context& ctx, std::int64_t t0, std::int64_t t1);
/// Mouse-wheel zoom at the cursor, drag to pan, W/A/S/D keys: shared by timeline and memory.
/// `plot_min`/`plot_max` bound the area that reacts. Returns true when the view moved.
bool handle_axis_input(view_state& s, ImVec2 plot_min, ImVec2 plot_max, bool allow_drag_pan);
/// Colours used across panels.
namespace palette {
inline constexpr ImU32 allocated = IM_COL32(86, 156, 214, 255);
inline constexpr ImU32 reserved = IM_COL32(220, 170, 80, 255);
inline constexpr ImU32 pending = IM_COL32(220, 80, 70, 255);
inline constexpr ImU32 free_block = IM_COL32(58, 62, 70, 255);
inline constexpr ImU32 marker_assert = IM_COL32(240, 70, 70, 255);
inline constexpr ImU32 marker_oom = IM_COL32(255, 140, 0, 255);
inline constexpr ImU32 marker_diag = IM_COL32(200, 120, 255, 255);
inline constexpr ImU32 cursor = IM_COL32(255, 255, 255, 200);
inline constexpr ImU32 selection = IM_COL32(255, 230, 90, 255);
inline constexpr ImU32 text_dim = IM_COL32(160, 166, 178, 255);
inline constexpr ImU32 grid = IM_COL32(255, 255, 255, 22);
} // namespace palette

} // namespace tdiag::view
