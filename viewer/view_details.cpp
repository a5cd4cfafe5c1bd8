// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The details panel: every field of the selected event, allocation, block or report
// diagnostic, and its stack, innermost frame first, as function and file:line.
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include "views.hpp"

namespace tdiag::view {
namespace {

void row(const char* key, const std::string& value) {
  ImGui::TableNextRow();
  ImGui::TableSetColumnIndex(0);
  ImGui::TextDisabled("%s", key);
  ImGui::TableSetColumnIndex(1);
  ImGui::TextWrapped("%s", value.c_str());
}

bool begin_fields() {
  return ImGui::BeginTable("##fields", 2,
                           ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg);
}

void stack_frames(const trace::trace& t, trace::stack_id stack) {
  const auto frames = t.stacks.stack(stack);
  ImGui::Spacing();
  ImGui::Text("Stack (%zu frames)", frames.size());
  ImGui::Separator();
  if (frames.empty()) {
    ImGui::TextDisabled("no stack recorded");
    return;
  }
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto& f = t.stacks.frame_at(frames[i]);
    ImGui::TextColored(ImVec4(0.55f, 0.58f, 0.65f, 1.0f), "#%zu", i);
    ImGui::SameLine();
    ImGui::TextWrapped("%s", std::string(t.name(f.function)).c_str());
    ImGui::Indent();
    ImGui::TextColored(ImVec4(0.47f, 0.72f, 0.95f, 1.0f), "%s:%u",
                       std::string(t.name(f.file)).c_str(), f.line);
    ImGui::Unindent();
  }
}

std::string when(const document& doc, std::int64_t ns) {
  return format_duration(static_cast<double>(ns - doc.span.begin));
}

void event_details(view_context& ctx, event_ref e) {
  const auto& t = ctx.doc.trace;
  const event_times w = times_of(t, e);
  ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "%s",
                     std::string(kind_label(t, e)).c_str());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(std::string(name_of(t, e)).c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  if (!begin_fields())
    return;
  row("start", when(ctx.doc, w.begin));
  if (w.end != w.begin)
    row("duration", format_duration(static_cast<double>(w.end - w.begin)));
  const auto& lane = t.lanes.at(lane_of(t, e));
  switch (e.kind) {
  case event_kind::kernel: {
    const auto& k = t.kernels[e.index];
    row("device / stream", fmt::format("{} / {}", k.device, k.stream));
    row("grid", fmt::format("[{}, {}, {}]", k.grid[0], k.grid[1], k.grid[2]));
    row("block", fmt::format("[{}, {}, {}]", k.block[0], k.block[1], k.block[2]));
    row("registers", fmt::format("{}", k.registers));
    row("shared memory", format_bytes(static_cast<double>(k.shared_static + k.shared_dynamic)));
    row("correlation", fmt::format("{}", k.correlation));
    if (k.launch_id != 0)
      row("launch id", fmt::format("{}", k.launch_id));
    break;
  }
  case event_kind::copy: {
    const auto& c = t.copies[e.index];
    row("bytes", format_bytes(static_cast<double>(c.bytes)));
    row("device / stream", fmt::format("{} / {}", c.device, c.stream));
    if (w.end > w.begin)
      row("bandwidth", fmt::format("{}/s", format_bytes(static_cast<double>(c.bytes) * 1e9 /
                                                        static_cast<double>(w.end - w.begin))));
    row("correlation", fmt::format("{}", c.correlation));
    break;
  }
  case event_kind::api: {
    const auto& a = t.api_calls[e.index];
    row("process / thread", fmt::format("{} / {}", a.process, a.thread));
    if (a.correlation != 0)
      row("correlation", fmt::format("{}", a.correlation));
    break;
  }
  case event_kind::memory: {
    const auto& m = t.memory[e.index];
    row("action", std::string(to_string(m.action)));
    row("size", fmt::format("{} ({} B)", format_bytes(static_cast<double>(m.size)), m.size));
    row("address", fmt::format("0x{:x}", m.address));
    row("device / stream", fmt::format("{} / {}", m.device, m.stream));
    const auto& d = t.detail_of(m);
    if (m.action == trace::memory_action::oom)
      row("device free", format_bytes(static_cast<double>(d.device_free)));
    if (d.total_allocated >= 0)
      row("total allocated", format_bytes(static_cast<double>(d.total_allocated)));
    if (d.total_reserved >= 0)
      row("total reserved", format_bytes(static_cast<double>(d.total_reserved)));
    break;
  }
  case event_kind::assertion: {
    const auto& a = t.assertions[e.index];
    row("message", std::string(t.name(a.message)));
    row("block", fmt::format("[{}, {}, {}]", a.block[0], a.block[1], a.block[2]));
    row("thread", fmt::format("[{}, {}, {}]", a.thread[0], a.thread[1], a.thread[2]));
    row("launch id", fmt::format("{}", a.launch_id));
    break;
  }
  default:
    break;
  }
  row("lane", lane.kind == trace::lane_kind::gpu_stream
                  ? fmt::format("GPU {} stream {}", lane.group, lane.id)
                  : fmt::format("{} {}", lane.group, lane.id));
  ImGui::EndTable();
  if (ctx.state.selected_allocation && ctx.state.memory_device < ctx.doc.memory.size()) {
    const auto& allocs = ctx.doc.memory[ctx.state.memory_device].allocations;
    if (*ctx.state.selected_allocation < allocs.size()) {
      const auto& a = allocs[*ctx.state.selected_allocation];
      ImGui::Spacing();
      ImGui::Text("Allocation lifetime: %s",
                  a.alive_at_end ? "alive at the end of the trace"
                                 : format_duration(static_cast<double>(a.end - a.begin)).c_str());
    }
  }
  stack_frames(t, stack_of(t, e));
}

void diagnostic_details(const diagnostic& d) {
  const ImVec4 colour = d.level == severity::error     ? ImVec4(1.0f, 0.42f, 0.4f, 1.0f)
                        : d.level == severity::warning ? ImVec4(1.0f, 0.75f, 0.3f, 1.0f)
                                                       : ImVec4(0.6f, 0.8f, 1.0f, 1.0f);
  ImGui::TextColored(colour, "%s %s", std::string(to_string(d.level)).c_str(), d.code.c_str());
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextUnformatted(d.title.c_str());
  ImGui::Separator();
  ImGui::TextUnformatted(d.message.c_str());
  ImGui::PopTextWrapPos();
  if (d.location.known())
    ImGui::TextColored(ImVec4(0.47f, 0.72f, 0.95f, 1.0f), "%s:%u", d.location.file.c_str(),
                       d.location.line);
  if (!d.fields.empty() && begin_fields()) {
    for (const auto& f : d.fields)
      row(f.name.c_str(), to_text(f.value));
    ImGui::EndTable();
  }
  for (const auto& note : d.notes)
    ImGui::TextWrapped("note: %s", note.c_str());
  if (!d.hint.empty())
    ImGui::TextColored(ImVec4(0.5f, 0.9f, 0.6f, 1.0f), "hint: %s", d.hint.c_str());
  if (!d.stack.empty()) {
    ImGui::Spacing();
    ImGui::Text("Stack (%zu frames)", d.stack.size());
    ImGui::Separator();
    for (std::size_t i = 0; i < d.stack.size(); ++i) {
      ImGui::TextWrapped("#%zu %s", i, d.stack[i].function.c_str());
      if (!d.stack[i].file.empty())
        ImGui::TextColored(ImVec4(0.47f, 0.72f, 0.95f, 1.0f), "    %s:%u", d.stack[i].file.c_str(),
                           d.stack[i].line);
    }
  }
}

} // namespace

void draw_details(view_context& ctx) {
  auto& s = ctx.state;
  const auto& t = ctx.doc.trace;
  if (s.selected_diagnostic) {
    const auto [ri, di] = *s.selected_diagnostic;
    if (ri < ctx.reports.size() && di < ctx.reports[ri].content.diagnostics.size()) {
      diagnostic_details(ctx.reports[ri].content.diagnostics[di]);
      return;
    }
  }
  if (s.selected_block) {
    const auto& b = s.selected_block->block;
    ImGui::TextColored(ImVec4(0.65f, 0.68f, 0.75f, 1.0f), "allocator block");
    ImGui::Text("%s at 0x%llx", format_bytes(static_cast<double>(b.size)).c_str(),
                static_cast<unsigned long long>(b.address));
    ImGui::Separator();
    if (begin_fields()) {
      row("state", b.state == trace::block_state::active_allocated      ? "allocated"
                   : b.state == trace::block_state::active_pending_free ? "pending free"
                                                                        : "free");
      row("requested", format_bytes(static_cast<double>(b.requested_size)));
      row("segment", fmt::format("0x{:x}", s.selected_block->segment_address));
      row("device", fmt::format("{}", s.selected_block->device));
      ImGui::EndTable();
    }
    stack_frames(t, b.stack);
    return;
  }
  if (s.selected.valid()) {
    event_details(ctx, s.selected);
    return;
  }
  ImGui::TextDisabled("Nothing selected.");
  ImGui::Spacing();
  ImGui::TextWrapped("Click an event on the timeline, an allocation band in the memory view, a "
                     "block in the allocator view or a table row to see its fields and stack.");
  ImGui::Spacing();
  ImGui::Separator();
  ImGui::Text("Trace");
  if (begin_fields()) {
    row("format", t.metadata.format);
    row("events", fmt::format("{}", t.event_count()));
    row("kernels", fmt::format("{}", t.kernels.size()));
    row("memory events", fmt::format("{}", t.memory.size()));
    row("span", format_duration(static_cast<double>(ctx.doc.span.duration())));
    if (t.metadata.dropped_records != 0)
      row("dropped records", fmt::format("{}", t.metadata.dropped_records));
    row("load",
        fmt::format("{:.2f} s + {:.2f} s models", ctx.doc.load_seconds, ctx.doc.model_seconds));
    ImGui::EndTable();
  }
  for (const auto& w : ctx.doc.warnings) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1.0f));
    ImGui::TextWrapped("warning: %s", w.message.c_str());
    ImGui::PopStyleColor();
  }
}

} // namespace tdiag::view
