// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/capture/capture_range.hpp>

namespace tdiag::capture {

range_gate::range_gate(std::vector<range_spec> ranges) : ranges_(std::move(ranges)) {
  if (ranges_.size() > 64)
    detail::bad_range("...", "more than 64 ranges");
  nvtx_depth_.assign(ranges_.size(), 0);
  for (std::size_t i = 0; i < ranges_.size(); ++i) // launches:0:B holds the first launch
    if (ranges_[i].kind == range_kind::launches && ranges_[i].first_launch == 0)
      set(i, true);
}

bool range_gate::any(range_kind kind) const noexcept {
  for (const auto& r : ranges_)
    if (r.kind == kind)
      return true;
  return false;
}

bool range_gate::watches_launches() const noexcept {
  for (const auto& r : ranges_)
    if (r.kind == range_kind::launches && launches_ < r.end_launch)
      return true;
  return false;
}

bool range_gate::set(std::size_t i, bool open) {
  const bool before = active();
  const std::uint64_t bit = std::uint64_t{1} << i;
  const bool was_open = (open_ & bit) != 0;
  open_ = open ? open_ | bit : open_ & ~bit;
  if (open && !was_open && !before)
    ++opened_;
  return active() != before;
}

bool range_gate::set_profiler(bool open) {
  bool changed = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if (ranges_[i].kind == range_kind::profiler_api)
      changed = set(i, open) || changed;
  return changed;
}

std::uint64_t range_gate::nvtx_matches(std::string_view name) const noexcept {
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if (ranges_[i].kind == range_kind::nvtx && ranges_[i].nvtx_name == name)
      mask |= std::uint64_t{1} << i;
  return mask;
}

bool range_gate::nvtx_open(std::uint64_t mask) {
  bool changed = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if (mask & (std::uint64_t{1} << i))
      if (nvtx_depth_[i]++ == 0)
        changed = set(i, true) || changed;
  return changed;
}

bool range_gate::nvtx_close(std::uint64_t mask) {
  bool changed = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if ((mask & (std::uint64_t{1} << i)) && nvtx_depth_[i] > 0)
      if (--nvtx_depth_[i] == 0)
        changed = set(i, false) || changed;
  return changed;
}

bool range_gate::nvtx_push(std::uint64_t stack, std::string_view name) {
  const std::uint64_t mask = nvtx_matches(name);
  // Every push is remembered (pops carry no name); a stack of non-matching pushes stays small.
  push_stacks_[stack].push_back(mask);
  return mask != 0 && nvtx_open(mask);
}

bool range_gate::nvtx_pop(std::uint64_t stack) {
  const auto it = push_stacks_.find(stack);
  if (it == push_stacks_.end() || it->second.empty())
    return false; // a pop without its push (pushed before capture started)
  const std::uint64_t mask = it->second.back();
  it->second.pop_back();
  return mask != 0 && nvtx_close(mask);
}

bool range_gate::nvtx_start(std::uint64_t id, std::string_view name) {
  const std::uint64_t mask = nvtx_matches(name);
  if (mask == 0)
    return false;
  started_[id] = mask;
  return nvtx_open(mask);
}

bool range_gate::nvtx_end(std::uint64_t id) {
  const auto it = started_.find(id);
  if (it == started_.end())
    return false;
  const std::uint64_t mask = it->second;
  started_.erase(it);
  return nvtx_close(mask);
}

bool range_gate::launch() {
  const std::uint64_t next = ++launches_;
  bool changed = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i)
    if (ranges_[i].kind == range_kind::launches)
      changed = set(i, next >= ranges_[i].first_launch && next < ranges_[i].end_launch) || changed;
  return changed;
}

bool range_gate::clock(std::int64_t now_ns) {
  bool changed = false;
  for (std::size_t i = 0; i < ranges_.size(); ++i) {
    const auto& r = ranges_[i];
    if (r.kind != range_kind::time)
      continue;
    const bool inside =
        now_ns >= r.delay_ns && (r.duration_ns == std::numeric_limits<std::int64_t>::max() ||
                                 now_ns - r.delay_ns < r.duration_ns);
    changed = set(i, inside) || changed;
  }
  return changed;
}

std::optional<std::int64_t> range_gate::next_clock_edge(std::int64_t now_ns) const noexcept {
  std::optional<std::int64_t> next;
  auto consider = [&](std::int64_t t) {
    if (t > now_ns && (!next || t < *next))
      next = t;
  };
  for (const auto& r : ranges_)
    if (r.kind == range_kind::time) {
      consider(r.delay_ns);
      if (r.duration_ns != std::numeric_limits<std::int64_t>::max())
        consider(r.delay_ns + r.duration_ns);
    }
  return next;
}

} // namespace tdiag::capture
