// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The Job tab: trace::analyze_job's figures for a job of several ranks (document::job), as
// `tdiag trace analyze` prints them: the GPU time of each rank as a bar (compute, non-compute,
// idle), the straggler report, idle time per stream, the steps and the rank deviations. Rows
// with a moment (a collective, a step) jump the timeline there, and a straggler's cause jumps
// to the kernel or gap that made its rank late. Nothing is computed here.
#include "view_job.hpp"

#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "views.hpp"

namespace tdiag::view {

namespace {

constexpr ImU32 compute_colour = IM_COL32(86, 156, 214, 255);
constexpr ImU32 non_compute_colour = IM_COL32(220, 170, 80, 255);
constexpr ImU32 idle_colour = IM_COL32(70, 74, 84, 255);

std::string us_text(double us) {
  return format_duration(us * 1000.0);
}

// Shows [t0, t1] (a rank's own axis plus its clock offset: the job's clock) on the timeline.
void show_on_timeline(view_context& ctx, std::int64_t t0, std::int64_t t1) {
  show_time(ctx, t0, t1);
  ctx.state.view = main_view::timeline;
  ctx.state.view_changed = true;
}

std::int64_t offset_of(const trace::job_analysis_result& a, int rank) {
  for (std::size_t i = 0; i < a.ranks.size() && i < a.clock_offsets_ns.size(); ++i)
    if (a.ranks[i].rank == rank)
      return a.clock_offsets_ns[i];
  return 0;
}

// One stacked bar per rank: compute, non-compute, idle over the rank's GPU span, scaled to the
// longest span.
void draw_breakdown(const trace::job_analysis_result& a, float scale) {
  double longest = 0;
  for (const auto& r : a.ranks)
    longest = std::max(longest, r.temporal.kernel_us);
  const float label_w = 70.0f * scale, bar_h = 18.0f * scale;
  const float bar_w = std::max(ImGui::GetContentRegionAvail().x - label_w - 620.0f * scale, 80.0f);
  for (const auto& r : a.ranks) {
    const auto& t = r.temporal;
    ImGui::Text("rank %d", r.rank);
    ImGui::SameLine(label_w);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float full = longest > 0 ? bar_w * static_cast<float>(t.kernel_us / longest) : 0.0f;
    float x = p.x;
    for (const auto& [part, colour] :
         {std::pair{t.compute_us, compute_colour}, std::pair{t.non_compute_us, non_compute_colour},
          std::pair{t.idle_us, idle_colour}}) {
      const float w = t.kernel_us > 0 ? full * static_cast<float>(part / t.kernel_us) : 0.0f;
      dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + w, p.y + bar_h), colour);
      x += w;
    }
    ImGui::Dummy(ImVec2(bar_w, bar_h));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("rank %d: GPU span %s\ncompute %s\nnon-compute %s\nidle %s", r.rank,
                        us_text(t.kernel_us).c_str(), us_text(t.compute_us).c_str(),
                        us_text(t.non_compute_us).c_str(), us_text(t.idle_us).c_str());
    ImGui::SameLine();
    const std::string overlap =
        r.comp_comm_overlap_pct ? fmt::format("{:.1f}%", *r.comp_comm_overlap_pct) : "n/a";
    ImGui::Text("compute %.1f%%  non-compute %.1f%%  idle %.1f%%  of %s; comm overlap %s",
                t.pct(t.compute_us), t.pct(t.non_compute_us), t.pct(t.idle_us),
                us_text(t.kernel_us).c_str(), overlap.c_str());
  }
  for (const auto& [name, colour] :
       {std::pair{"compute", compute_colour}, std::pair{"non-compute", non_compute_colour},
        std::pair{"idle", idle_colour}}) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(p, ImVec2(p.x + 10 * scale, p.y + 10 * scale),
                                              colour);
    ImGui::Dummy(ImVec2(12 * scale, 10 * scale));
    ImGui::SameLine();
    ImGui::TextDisabled("%s", name);
    ImGui::SameLine(0.0f, 16.0f * scale);
  }
  ImGui::NewLine();
}

constexpr ImGuiTableFlags table_flags = ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV |
                                        ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_ScrollY;

float table_height(std::size_t rows, float scale) {
  return std::min(static_cast<float>(rows + 1) * ImGui::GetTextLineHeightWithSpacing(),
                  260.0f * scale);
}

// "compute +1.2 ms: gemm_x" / "host gap +3 ms in enumerate(DataLoader)..." / ...
std::string cause_text(const trace::straggler_cause& c) {
  using trace::late_cause;
  const auto excess = us_text(c.excess_us[static_cast<std::size_t>(c.cause)]);
  switch (c.cause) {
  case late_cause::compute:
    return c.kernels.empty()
               ? fmt::format("compute +{}", excess)
               : fmt::format("compute +{}: {}", excess, short_name(c.kernels.front().name));
  case late_cause::host_gap:
    return fmt::format("host gap +{}{}", excess, c.gap_host.empty() ? "" : " in " + c.gap_host);
  case late_cause::collective:
    return fmt::format("earlier collective +{}", excess);
  case late_cause::copy:
    return fmt::format("copy +{}", excess);
  case late_cause::none:
    break;
  }
  return "-";
}

void draw_clocks(const trace::job_clocks& c) {
  if (c.ranks.size() < 2)
    return;
  ImGui::Text("clocks: %s (reference rank %d)",
              c.used == trace::clock_alignment::collectives ? "aligned on the collectives' ends"
                                                            : "Kineto's base time",
              c.reference_rank);
  if (ImGui::IsItemHovered()) {
    std::string tip = "rank: offset; collectives used, |residual| median / max\n";
    for (const auto& k : c.ranks)
      tip += fmt::format("rank {}: {}; {} , {} / {}\n", k.rank,
                         format_duration(static_cast<double>(k.offset_ns)), k.collectives,
                         us_text(k.median_abs_residual_us), us_text(k.max_abs_residual_us));
    ImGui::SetTooltip("%s", tip.c_str());
  }
  for (const auto& w : c.warnings)
    ImGui::TextColored(ImVec4(0.95f, 0.75f, 0.3f, 1.0f), "%s", w.message.c_str());
}

// The cause of one collective's lateness; a click shows it on the last rank's timeline.
void draw_cause(view_context& ctx, const trace::job_analysis_result& a,
                const trace::collective_wait& c, int row) {
  const auto& cause = c.cause;
  if (cause.cause == trace::late_cause::none) {
    ImGui::TextDisabled("-");
    return;
  }
  const std::string label = fmt::format("{}##cause{}", cause_text(cause), row);
  if (ImGui::SmallButton(label.c_str()) && cause.focus_start_ns < cause.focus_end_ns) {
    const auto offset = offset_of(a, c.last_rank);
    show_on_timeline(ctx, cause.focus_start_ns + offset, cause.focus_end_ns + offset);
  }
  if (ImGui::IsItemHovered()) {
    std::string tip = fmt::format("rank {} arrived {} after the others' median\n", c.last_rank,
                                  us_text(cause.late_us));
    for (std::size_t k = 1; k < trace::late_cause_count; ++k)
      tip += fmt::format("  {} {:+.1f} us vs the median rank\n",
                         to_string(static_cast<trace::late_cause>(k)), cause.excess_us[k]);
    for (const auto& k : cause.kernels)
      tip += fmt::format("  {}: {} vs median {}\n", short_name(k.name), us_text(k.us),
                         us_text(k.median_us));
    ImGui::SetTooltip("%sclick: show the cause on rank %d's timeline", tip.c_str(), c.last_rank);
  }
}

void draw_stragglers(view_context& ctx, const trace::job_analysis_result& a, float scale) {
  draw_clocks(a.clocks);
  if (a.collectives.empty()) {
    ImGui::TextDisabled("no collective matched on the ranks of its group");
    return;
  }
  ImGui::Text("%zu collectives matched on every rank of their group", a.collectives.size());
  for (const auto& w : a.waits) {
    std::string late;
    for (std::size_t k = 1; k < trace::late_cause_count; ++k)
      if (w.late_by_cause_us[k] > 0)
        late += fmt::format(" {} {}", to_string(static_cast<trace::late_cause>(k)),
                            us_text(w.late_by_cause_us[k]));
    ImGui::BulletText("rank %d waited %s for the others and arrived last %zu time(s)%s%s", w.rank,
                      us_text(w.wait_us).c_str(), w.times_last,
                      late.empty() ? "" : ", late by:", late.c_str());
  }
  const int columns = 6 + static_cast<int>(a.ranks.size());
  if (!ImGui::BeginTable("##collectives", columns, table_flags,
                         ImVec2(0, table_height(a.collectives.size(), scale))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  ImGui::TableSetupColumn("collective");
  ImGui::TableSetupColumn("n");
  ImGui::TableSetupColumn("step");
  ImGui::TableSetupColumn("last");
  ImGui::TableSetupColumn("spread");
  ImGui::TableSetupColumn("why the last rank was late");
  for (const auto& r : a.ranks)
    ImGui::TableSetupColumn(fmt::format("rank {} waited", r.rank).c_str());
  ImGui::TableHeadersRow();
  ImGuiListClipper clipper;
  clipper.Begin(static_cast<int>(a.collectives.size()));
  while (clipper.Step())
    for (int i = clipper.DisplayStart; i < clipper.DisplayEnd; ++i) {
      const auto& c = a.collectives[static_cast<std::size_t>(i)];
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      const std::string label = fmt::format("{}##c{}", short_name(c.name), i);
      if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
        std::int64_t t0 = INT64_MAX, t1 = INT64_MIN;
        for (std::size_t m = 0; m < c.start_ns.size() && m < c.members.size(); ++m) {
          if (c.members[m] >= a.clock_offsets_ns.size())
            continue;
          const auto offset = a.clock_offsets_ns[c.members[m]];
          t0 = std::min(t0, c.start_ns[m] + offset);
          t1 = std::max(t1, c.end_ns[m] + offset);
        }
        if (t0 < t1)
          show_on_timeline(ctx, t0, t1);
      }
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s%s%s\nclick: show it on the timeline", c.name.c_str(),
                          c.group.empty() ? "" : "\nprocess group ", c.group.c_str());
      ImGui::TableNextColumn();
      ImGui::Text("%zu", c.occurrence);
      ImGui::TableNextColumn();
      ImGui::Text(c.step >= 0 ? "%d" : "-", c.step);
      ImGui::TableNextColumn();
      ImGui::Text("rank %d", c.last_rank);
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us_text(c.spread_us).c_str());
      ImGui::TableNextColumn();
      draw_cause(ctx, a, c, i);
      // One column per rank of the job: "-" for a rank outside the collective's group.
      for (const auto& r : a.ranks) {
        ImGui::TableNextColumn();
        const auto at = std::find(c.ranks.begin(), c.ranks.end(), r.rank) - c.ranks.begin();
        if (static_cast<std::size_t>(at) < c.wait_us.size())
          ImGui::TextUnformatted(us_text(c.wait_us[static_cast<std::size_t>(at)]).c_str());
        else
          ImGui::TextDisabled("-");
      }
    }
  ImGui::EndTable();
}

void draw_idle(const trace::job_analysis_result& a, float scale) {
  std::size_t rows = 0;
  for (const auto& r : a.ranks)
    rows += r.idle.size();
  if (!ImGui::BeginTable("##idle", 5, table_flags, ImVec2(0, table_height(rows, scale))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"rank", "stream", "host wait", "kernel wait", "other"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const auto& r : a.ranks)
    for (const auto& s : r.idle) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%d", r.rank);
      ImGui::TableNextColumn();
      ImGui::Text("%llu", static_cast<unsigned long long>(s.stream));
      for (const auto& share : s.by_category) {
        ImGui::TableNextColumn();
        const std::string ratio = share.ratio ? fmt::format(" ({:.0f}%)", *share.ratio * 100) : "";
        ImGui::Text("%s%s", us_text(share.time_us).c_str(), ratio.c_str());
      }
    }
  ImGui::EndTable();
}

void draw_steps(view_context& ctx, const trace::job_analysis_result& a, float scale) {
  if (a.steps.empty()) {
    ImGui::TextDisabled("no ProfilerStep in the traces");
    return;
  }
  if (!ImGui::BeginTable("##steps", 7, table_flags, ImVec2(0, table_height(a.steps.size(), scale))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h :
       {"rank · step", "wall", "GPU busy", "GPU idle", "compute", "communication", "memory"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const auto& s = a.steps[i];
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    const std::string label = fmt::format("rank {} · step {}##s{}", s.rank, s.step, i);
    if (ImGui::Selectable(label.c_str(), false, ImGuiSelectableFlags_SpanAllColumns)) {
      const auto offset = offset_of(a, s.rank);
      show_on_timeline(ctx, s.start_ns + offset, s.end_ns + offset);
    }
    for (const double us : {s.step_us, s.gpu_busy_us, s.gpu_idle_us(), s.compute_us,
                            s.communication_us, s.memory_us}) {
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(us_text(us).c_str());
    }
  }
  ImGui::EndTable();
}

void draw_deviations(const trace::job_analysis_result& a, float scale) {
  if (a.deviations.empty()) {
    ImGui::TextDisabled("no kernel deviates between ranks");
    return;
  }
  if (!ImGui::BeginTable("##deviations", 4, table_flags,
                         ImVec2(0, table_height(a.deviations.size(), scale))))
    return;
  ImGui::TableSetupScrollFreeze(0, 1);
  for (const char* h : {"rank", "difference", "total vs median", "kernel"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  for (const auto& d : a.deviations) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::Text("%d", d.rank);
    ImGui::TableNextColumn();
    ImGui::Text("%s%s", d.delta_us() >= 0 ? "+" : "-", us_text(std::abs(d.delta_us())).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%s vs %s", us_text(d.sum_us).c_str(), us_text(d.median_us).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(std::string(short_name(d.name)).c_str());
  }
  ImGui::EndTable();
}

} // namespace

void draw_job(view_context& ctx) {
  if (!ctx.doc.job) {
    ImGui::TextDisabled("Open several traces, a folder or a glob (one trace per rank) to see the "
                        "job's analyses.");
    return;
  }
  const auto& a = ctx.doc.job->analysis;
  const float scale = ctx.state.ui_scale;
  ImGui::BeginChild("##job", ImVec2(0, 0), false);
  ImGui::Text("%zu rank(s); figures of `tdiag trace analyze` (exact, not --hta-compat)",
              a.ranks.size());
  if (ImGui::CollapsingHeader("Time on the GPU per rank", ImGuiTreeNodeFlags_DefaultOpen))
    draw_breakdown(a, scale);
  if (ImGui::CollapsingHeader("Stragglers: who every collective waited for",
                              ImGuiTreeNodeFlags_DefaultOpen))
    draw_stragglers(ctx, a, scale);
  if (ImGui::CollapsingHeader("Idle time per stream", ImGuiTreeNodeFlags_DefaultOpen))
    draw_idle(a, scale);
  if (ImGui::CollapsingHeader("Steps", ImGuiTreeNodeFlags_DefaultOpen))
    draw_steps(ctx, a, scale);
  if (ImGui::CollapsingHeader("Kernels where one rank deviates"))
    draw_deviations(a, scale);
  ImGui::EndChild();
}

} // namespace tdiag::view
