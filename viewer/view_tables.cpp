// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The tables panel: kernels by total time, allocation sites, leaks, OOM report, assertion
// failures and report diagnostics. A regex filter, sortable columns, virtualised rows; a click
// selects the row's event and jumps to it.
#include <fmt/format.h>

#include <algorithm>

#include "views.hpp"

namespace tdiag::view {

void draw_tables(view_context& ctx) {
  auto& s = ctx.state;
  auto& tables = ctx.tables;
  if (tables.empty())
    return;
  s.table_index = std::min(s.table_index, tables.size() - 1);
  const float scale = s.ui_scale;

  // Table chooser: one button per table, with its row count.
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i > 0)
      ImGui::SameLine();
    const bool current = i == s.table_index;
    if (current)
      ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyle().Colors[ImGuiCol_ButtonActive]);
    const std::string label =
        fmt::format("{} ({})##table{}", tables[i]->title(), tables[i]->rows().size(), i);
    if (ImGui::Button(label.c_str())) {
      s.table_index = i;
      tables[i]->set_filter(s.table_filter);
    }
    if (current)
      ImGui::PopStyleColor();
  }
  table_model& m = *tables[s.table_index];
  if (m.filter() != s.table_filter)
    s.table_filter_error = m.set_filter(s.table_filter);

  ImGui::SetNextItemWidth(420.0f * scale);
  char buffer[512];
  const std::size_t len = std::min(s.table_filter.size(), sizeof(buffer) - 1);
  std::copy_n(s.table_filter.data(), len, buffer);
  buffer[len] = '\0';
  if (ImGui::InputTextWithHint("##filter", "filter (regex, case-insensitive)", buffer,
                               sizeof(buffer))) {
    s.table_filter = buffer;
    s.table_filter_error = m.set_filter(s.table_filter);
  }
  ImGui::SameLine();
  if (!s.table_filter_error.empty())
    ImGui::TextColored(ImVec4(1.0f, 0.45f, 0.4f, 1.0f), "bad regex: %s",
                       s.table_filter_error.c_str());
  else
    ImGui::TextDisabled("%zu of %zu rows", m.visible().size(), m.rows().size());

  const auto& cols = m.columns();
  const ImGuiTableFlags flags = ImGuiTableFlags_Sortable | ImGuiTableFlags_ScrollY |
                                ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                ImGuiTableFlags_Resizable | ImGuiTableFlags_Reorderable |
                                ImGuiTableFlags_SizingStretchProp;
  if (m.rows().empty()) {
    ImGui::Spacing();
    ImGui::TextDisabled("Nothing to show: this table is empty for the loaded files.");
  }
  ImGui::PushID(static_cast<int>(s.table_index));
  if (!ImGui::BeginTable("##table", static_cast<int>(cols.size()), flags)) {
    ImGui::PopID();
    return;
  }
  ImGui::TableSetupScrollFreeze(0, 1);
  for (std::size_t c = 0; c < cols.size(); ++c) {
    ImGuiTableColumnFlags cf =
        c == 0 ? ImGuiTableColumnFlags_WidthStretch : ImGuiTableColumnFlags_WidthFixed;
    // The model's own order (kernels by total time, ...) is the table's initial sort.
    if (c == m.sort_column())
      cf |= ImGuiTableColumnFlags_DefaultSort |
            (m.sort_ascending() ? ImGuiTableColumnFlags_PreferSortAscending
                                : ImGuiTableColumnFlags_PreferSortDescending);
    ImGui::TableSetupColumn(cols[c].c_str(), cf, c == 0 ? 4.0f : 110.0f * scale);
  }
  ImGui::TableHeadersRow();
  if (ImGuiTableSortSpecs* sort = ImGui::TableGetSortSpecs(); sort && sort->SpecsDirty) {
    if (sort->SpecsCount > 0)
      m.sort(static_cast<std::size_t>(sort->Specs[0].ColumnIndex),
             sort->Specs[0].SortDirection == ImGuiSortDirection_Ascending);
    sort->SpecsDirty = false;
  }
  const auto& visible = m.visible();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(visible.size()));
  while (clipper.Step()) {
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& r = m.rows()[visible[static_cast<std::size_t>(i)]];
      ImGui::TableNextRow();
      ImGui::TableSetColumnIndex(0);
      const bool selected = (r.target.valid() && r.target == s.selected) ||
                            (r.report != static_cast<std::size_t>(-1) && s.selected_diagnostic &&
                             *s.selected_diagnostic == std::pair{r.report, r.diagnostic});
      ImGui::PushID(i);
      if (ImGui::Selectable(r.cells[0].c_str(), selected, ImGuiSelectableFlags_SpanAllColumns)) {
        if (r.target.valid()) {
          jump_to(ctx, r.target, true);
        } else if (r.report != static_cast<std::size_t>(-1)) {
          s.selected = {};
          s.selected_block.reset();
          s.selected_allocation.reset();
          s.selected_diagnostic = std::pair{r.report, r.diagnostic};
          if (r.has_time) {
            show_time(ctx, r.time, r.time);
            s.view = main_view::timeline;
            s.view_changed = true;
          }
        }
      }
      if (ImGui::IsItemHovered() && r.cells[0].size() > 60)
        ImGui::SetTooltip("%s", r.cells[0].c_str());
      ImGui::PopID();
      for (std::size_t c = 1; c < cols.size(); ++c) {
        ImGui::TableSetColumnIndex(static_cast<int>(c));
        ImGui::TextUnformatted(r.cells[c].c_str());
      }
    }
  }
  ImGui::EndTable();
  ImGui::PopID();
}

} // namespace tdiag::view
