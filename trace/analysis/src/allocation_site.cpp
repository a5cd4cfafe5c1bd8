// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/allocation_site.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tdiag::trace {

bool is_internal_frame(const trace& t, const frame& f) {
  const auto file = t.name(f.file);
  if (file.empty() || file == "??" || f.line == 0)
    return true;
  if (file.front() == '<')
    return true; // <frozen runpy>, <string>, <built-in>
  for (const std::string_view marker :
       {"/torch/", "site-packages/", "dist-packages/", "/lib/python", "/_pytest/"})
    if (file.find(marker) != std::string_view::npos)
      return true;
  if (file.starts_with("torch/"))
    return true;
  for (const std::string_view ext : {".cpp", ".cc", ".h", ".hpp", ".cu", ".cuh"})
    if (file.ends_with(ext))
      return true;
  return false;
}

frame_id user_frame(const trace& t, stack_id stack) {
  const auto frames = t.stacks.stack(stack);
  for (const auto id : frames)
    if (!is_internal_frame(t, t.stacks.frame_at(id)))
      return id;
  for (const auto id : frames)
    if (t.stacks.frame_at(id).line != 0)
      return id;
  return frames.empty() ? 0 : frames.front();
}

std::string describe_frame(const trace& t, frame_id id) {
  if (id == 0 || id >= t.stacks.frame_count())
    return "<unknown site>";
  const auto& f = t.stacks.frame_at(id);
  const auto file = t.name(f.file);
  const auto function = t.name(f.function);
  std::string where = f.line != 0 ? fmt::format("{}:{}", file, f.line) : std::string(file);
  if (where.empty() || where == "??")
    return function.empty() ? "<unknown site>" : std::string(function);
  return function.empty() ? where : fmt::format("{} ({})", where, function);
}

source_location frame_location(const trace& t, frame_id id) {
  source_location loc;
  if (id == 0 || id >= t.stacks.frame_count())
    return loc;
  const auto& f = t.stacks.frame_at(id);
  if (t.name(f.file) != "??")
    loc.file = std::string(t.name(f.file));
  loc.line = f.line;
  loc.function = std::string(t.name(f.function));
  return loc;
}

std::string describe_site(const trace& t, stack_id stack) {
  return describe_frame(t, user_frame(t, stack));
}

std::vector<allocation_site_total> allocation_sites(const trace& t) {
  std::unordered_map<stack_id, frame_id> site_of; // many events share a stack
  std::map<frame_id, allocation_site_total> by_site;
  const auto all = t.memory.all();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto& e = all[i];
    if (e.action != memory_action::alloc)
      continue;
    auto it = site_of.find(e.stack);
    if (it == site_of.end())
      it = site_of.emplace(e.stack, user_frame(t, e.stack)).first;
    auto& s = by_site[it->second];
    if (s.count == 0 || e.size > s.largest)
      s.largest = e.size, s.largest_event = i;
    ++s.count;
    s.bytes += e.size;
  }
  std::vector<allocation_site_total> out;
  out.reserve(by_site.size());
  for (auto& [site, s] : by_site) {
    s.site = site;
    out.push_back(s);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
  return out;
}

std::vector<stack_frame> report_stack(const trace& t, stack_id stack, std::size_t limit) {
  std::vector<stack_frame> out;
  for (const auto id : t.stacks.stack(stack)) {
    if (out.size() == limit)
      break;
    const auto& f = t.stacks.frame_at(id);
    stack_frame s;
    s.function = std::string(t.name(f.function));
    s.file = std::string(t.name(f.file));
    s.line = f.line;
    out.push_back(std::move(s));
  }
  return out;
}

} // namespace tdiag::trace
