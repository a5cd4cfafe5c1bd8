// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Flight Recorder tab: trace::fr::analyze()'s verdict on a job's dumps (document::fr), as
// `tdiag fr analyze` prints it, above one row per rank of its ring (fr_rings): each entry a cell
// coloured by how far it got as the analysis reads it (its state, and pg_status) in sequence
// order, the culprits' own entries outlined in red with their
// cause, each group's first divergence outlined in magenta (and a rank missing from it marked
// after its ring), ranks without a dump or with an empty one shown as such. Nothing is computed
// here.
#include "view_fr.hpp"

#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "views.hpp"

namespace tdiag::view {

namespace {

namespace fr = trace::fr;

constexpr ImU32 completed_colour = IM_COL32(78, 160, 98, 255);
constexpr ImU32 started_colour = IM_COL32(220, 170, 80, 255);
constexpr ImU32 scheduled_colour = IM_COL32(92, 112, 146, 255);
constexpr ImU32 pending_colour = IM_COL32(196, 110, 64, 255);
constexpr ImU32 unknown_colour = IM_COL32(112, 116, 126, 255);
constexpr ImU32 culprit_colour = IM_COL32(240, 70, 70, 255);
constexpr ImU32 divergence_colour = IM_COL32(220, 90, 255, 255);
constexpr ImU32 absent_colour = IM_COL32(52, 56, 64, 255);

ImU32 progress_colour(fr::entry_progress p) {
  switch (p) {
  case fr::entry_progress::completed:
    return completed_colour;
  case fr::entry_progress::started:
    return started_colour;
  case fr::entry_progress::pending:
    return pending_colour;
  case fr::entry_progress::scheduled:
    return scheduled_colour;
  case fr::entry_progress::unknown:
    break;
  }
  return unknown_colour;
}

// "nccl:all_reduce" -> "all_reduce".
std::string_view short_op(std::string_view op) {
  const auto colon = op.rfind(':');
  return colon == std::string_view::npos ? op : op.substr(colon + 1);
}

void draw_summary(const fr_document& d) {
  const auto& r = d.report;
  const ImVec4 bad(1.0f, 0.55f, 0.5f, 1.0f);
  const ImVec4 good(0.55f, 0.85f, 0.6f, 1.0f);
  ImGui::TextColored(r.findings() ? bad : good, "%zu rank(s) · %s · %zu culprit(s) · %zu group(s)",
                     r.ranks.size(), r.stuck ? "stuck" : "not stuck", r.culprits.size(),
                     r.groups.size());
  ImGui::PushStyleColor(ImGuiCol_Text, bad);
  for (const auto& c : r.culprits)
    ImGui::TextWrapped("rank %d: %s in group %s #%lld %s — %s", c.rank,
                       std::string(fr::to_string(c.cause)).c_str(), c.pg.c_str(),
                       static_cast<long long>(c.seq), c.op.c_str(), c.detail.c_str());
  ImGui::PopStyleColor();
  for (const auto& v : d.rings.verdicts)
    ImGui::TextWrapped("%s", v.c_str());
}

void draw_legend(float scale) {
  const auto swatch = [&](ImU32 fill, ImU32 outline, const char* name) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p, ImVec2(p.x + 12 * scale, p.y + 12 * scale), fill);
    if (outline != 0)
      dl->AddRect(p, ImVec2(p.x + 12 * scale, p.y + 12 * scale), outline, 0.0f, 0, 2.0f * scale);
    ImGui::Dummy(ImVec2(14 * scale, 12 * scale));
    ImGui::SameLine();
    ImGui::TextDisabled("%s", name);
    ImGui::SameLine(0.0f, 16.0f * scale);
  };
  swatch(completed_colour, 0, "completed");
  swatch(started_colour, 0, "started");
  swatch(scheduled_colour, 0, "scheduled");
  swatch(pending_colour, 0, "not completed");
  swatch(unknown_colour, 0, "state unknown");
  swatch(absent_colour, culprit_colour, "culprit's entry");
  swatch(absent_colour, divergence_colour, "first divergence");
  ImGui::NewLine();
}

std::string cell_tooltip(const fr_rings& rings, const fr_row& row, const fr_cell& c,
                         const fr::job_report& r) {
  std::string out = fmt::format("rank {} · record {}\ngroup {} · {}#{} {}\n{}", row.rank,
                                c.record_id, group_of(rings, c), c.p2p ? "p2p " : "", c.seq,
                                op_of(rings, c), fr::to_string(c.progress));
  if (fr::to_string(c.progress) != fr::to_string(c.state))
    out += fmt::format(" (the entry says {}; pg_status tells more)", fr::to_string(c.state));
  if (c.culprit) {
    const auto& k = r.culprits[*c.culprit];
    out += fmt::format("\nculprit: {} — {}", fr::to_string(k.cause), k.detail);
  }
  if (c.divergence) {
    const auto& m = r.mismatches[*c.divergence];
    out += fmt::format("\nfirst divergence of group {}: {} (expected {})", m.pg,
                       fr::to_string(m.state), m.expected);
    if (!m.detail.empty())
      out += "\n" + m.detail;
  }
  return out;
}

std::string row_tooltip(const fr_row& row, const fr::job_report& r) {
  std::string out = row.label;
  if (!row.source.empty())
    out += "\n" + row.source;
  for (const auto i : row.culprits)
    out += fmt::format("\n{}", r.culprits[i].detail);
  for (const auto& m : row.missing)
    out += fmt::format("\nnever issued #{} of group {} (first divergence)", m.seq, m.group);
  return out;
}

struct ring_geometry {
  float label_w = 0, cell_w = 0, row_h = 0;
};

// One rank's row: its cells in the visible columns, the marks, and after its ring the
// divergences it never issued; or a bar saying why it has no ring.
void draw_row(const fr_rings& rings, const fr_row& row, const fr::job_report& r,
              const ring_geometry& g, ImVec2 origin, std::int64_t first, std::int64_t last,
              float scale) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float y0 = origin.y + 2.0f * scale;
  const float y1 = origin.y + g.row_h - 2.0f * scale;
  const ImVec2 mouse = ImGui::GetMousePos();
  const bool row_hovered = ImGui::IsWindowHovered() && mouse.y >= y0 && mouse.y < y1;
  if (row.status != fr_row_status::ok) {
    const float x0 = origin.x + g.label_w;
    const float x1 = std::max(x0 + 160.0f * scale,
                              ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x);
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), absent_colour);
    const std::string what(to_string(row.status));
    const float tx = std::max(x0, ImGui::GetWindowPos().x + g.label_w) + 8.0f * scale; // in view
    dl->AddText(ImVec2(tx, y0 + (y1 - y0 - ImGui::GetFontSize()) * 0.5f),
                row.culprits.empty() ? palette::text_dim : culprit_colour, what.c_str());
  }
  const fr_cell* hovered = nullptr;
  float last_x = origin.x + g.label_w;
  const auto from = std::lower_bound(row.cells.begin(), row.cells.end(), first,
                                     [](const fr_cell& c, std::int64_t x) { return c.column < x; });
  for (auto it = from; it != row.cells.end() && it->column <= last; ++it) {
    const fr_cell& c = *it;
    const float x0 = origin.x + g.label_w + static_cast<float>(c.column) * g.cell_w;
    const float x1 = x0 + std::max(g.cell_w - 1.0f, 1.0f);
    last_x = std::max(last_x, x1);
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), progress_colour(c.progress));
    if (c.p2p) { // a point-to-point call: a corner cut
      const float k = std::min(8.0f * scale, (x1 - x0) * 0.5f);
      dl->AddTriangleFilled(ImVec2(x1 - k, y0), ImVec2(x1, y0), ImVec2(x1, y0 + k),
                            IM_COL32(235, 238, 245, 255));
    }
    if (g.cell_w >= 34.0f * scale) {
      const std::string text = g.cell_w >= 100.0f * scale
                                   ? fmt::format("{} {}", c.seq, short_op(op_of(rings, c)))
                                   : fmt::format("{}", c.seq);
      dl->AddText(ImVec2(x0 + 3.0f * scale, y0 + 1.0f * scale), IM_COL32(20, 22, 26, 255),
                  text.c_str());
    }
    if (c.divergence)
      dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), divergence_colour, 0.0f, 0,
                  2.5f * scale);
    if (c.culprit)
      dl->AddRect(ImVec2(x0 - 2, y0 - 2), ImVec2(x1 + 2, y1 + 2), culprit_colour, 0.0f, 0,
                  3.0f * scale);
    if (row_hovered && mouse.x >= x0 && mouse.x < x1 + 1.0f)
      hovered = &c;
  }
  if (last >= 0 && !row.cells.empty() && row.cells.back().column <= last)
    for (const auto& m : row.missing) {
      const std::string text = fmt::format("never issued #{} of group {}", m.seq, m.group);
      const float x0 = last_x + 6.0f * scale;
      const ImVec2 size = ImGui::CalcTextSize(text.c_str());
      dl->AddRect(ImVec2(x0, y0), ImVec2(x0 + size.x + 8.0f * scale, y1), divergence_colour, 0.0f,
                  0, 2.0f * scale);
      dl->AddText(ImVec2(x0 + 4.0f * scale, y0 + (y1 - y0 - size.y) * 0.5f), divergence_colour,
                  text.c_str());
      last_x = x0 + size.x + 8.0f * scale;
    }
  // The label, over the cells that scroll under it.
  const float lx = ImGui::GetWindowPos().x;
  dl->AddRectFilled(ImVec2(lx, origin.y), ImVec2(lx + g.label_w - 4.0f * scale, origin.y + g.row_h),
                    IM_COL32(27, 29, 34, 255));
  dl->AddText(ImVec2(lx + 6.0f * scale, y0 + (y1 - y0 - ImGui::GetFontSize()) * 0.5f),
              row.culprits.empty() ? IM_COL32(220, 224, 232, 255) : culprit_colour,
              row.label.c_str());
  if (hovered != nullptr)
    ImGui::SetTooltip("%s", cell_tooltip(rings, row, *hovered, r).c_str());
  else if (row_hovered && mouse.x < lx + g.label_w)
    ImGui::SetTooltip("%s", row_tooltip(row, r).c_str());
}

void draw_rings(const fr_document& d, float height, view_state& state) {
  const float scale = state.ui_scale;
  const auto& rings = d.rings;
  ring_geometry g;
  g.row_h = std::round(ImGui::GetFontSize() + 12.0f * scale);
  g.label_w = 60.0f * scale;
  for (const auto& row : rings.rows)
    g.label_w = std::max(g.label_w, ImGui::CalcTextSize(row.label.c_str()).x + 18.0f * scale);
  const float avail = ImGui::GetContentRegionAvail().x - g.label_w - 200.0f * scale;
  const auto columns = std::max<std::int64_t>(rings.columns, 1);
  g.cell_w =
      std::clamp(std::floor(avail / static_cast<float>(columns)), 4.0f * scale, 120.0f * scale);
  ImGui::SetNextWindowContentSize(
      ImVec2(g.label_w + static_cast<float>(columns) * g.cell_w + 200.0f * scale,
             static_cast<float>(rings.rows.size()) * g.row_h));
  ImGui::BeginChild("##fr_rings", ImVec2(0, height), true, ImGuiWindowFlags_HorizontalScrollbar);
  if (state.fr_focus) { // where the verdict is: the newest entries, the first culprit
    state.fr_focus = false;
    ImGui::SetScrollX(g.label_w + static_cast<float>(columns) * g.cell_w);
    for (std::size_t i = 0; i < rings.rows.size(); ++i)
      if (!rings.rows[i].culprits.empty()) {
        ImGui::SetScrollY(std::max(0.0f, static_cast<float>(i) * g.row_h - height / 3.0f));
        break;
      }
  }
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  // Only the columns on screen are drawn (a ring holds thousands of entries).
  const float scroll = ImGui::GetScrollX();
  const float visible = ImGui::GetWindowWidth();
  const auto first = static_cast<std::int64_t>(std::max(0.0f, (scroll - g.label_w) / g.cell_w));
  const auto last = static_cast<std::int64_t>((scroll + visible) / g.cell_w) + 1;
  // and only the rows on screen (a job may have thousands of ranks).
  const float top = ImGui::GetScrollY();
  const auto first_row = static_cast<std::size_t>(std::max(0.0f, top / g.row_h));
  const auto rows_shown = static_cast<std::size_t>(ImGui::GetWindowHeight() / g.row_h) + 2;
  for (std::size_t i = first_row; i < std::min(rings.rows.size(), first_row + rows_shown); ++i)
    draw_row(rings, rings.rows[i], d.report, g,
             ImVec2(origin.x, origin.y + static_cast<float>(i) * g.row_h), first, last, scale);
  ImGui::Dummy(ImVec2(g.label_w + static_cast<float>(columns) * g.cell_w,
                      static_cast<float>(rings.rows.size()) * g.row_h));
  ImGui::EndChild();
}

} // namespace

void draw_fr(view_context& ctx) {
  if (!ctx.doc.fr) {
    ImGui::TextDisabled("No Flight Recorder dumps open.");
    return;
  }
  const auto& d = *ctx.doc.fr;
  const float scale = ctx.state.ui_scale;
  draw_summary(d);
  draw_legend(scale);
  const float rows_h =
      static_cast<float>(d.rings.rows.size()) * std::round(ImGui::GetFontSize() + 12.0f * scale) +
      ImGui::GetStyle().ScrollbarSize + 12.0f * scale;
  const float avail = ImGui::GetContentRegionAvail().y;
  draw_rings(d, std::min(rows_h, std::max(avail * 0.55f, 120.0f * scale)), ctx.state);
  ImGui::TextColored(ImVec4(0.6f, 0.75f, 1.0f, 1.0f), "Verdict (tdiag fr analyze)");
  ImGui::BeginChild("##fr_text", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  ImGui::TextUnformatted(d.text.c_str(), d.text.c_str() + d.text.size());
  ImGui::EndChild();
}

} // namespace tdiag::view
