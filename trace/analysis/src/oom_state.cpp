// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "oom_state.hpp"

#include <tensordiag/trace/allocation_site.hpp>

#include <algorithm>

namespace tdiag::trace::detail {
namespace {

bool by_bytes_then_site(const oom_site& a, const oom_site& b) noexcept {
  return a.bytes != b.bytes ? a.bytes > b.bytes : a.site < b.site;
}

} // namespace

oom_state read_state(const trace& t, const allocator_state& state) {
  oom_state out;
  out.figures = state.figures();
  std::map<frame_id, oom_site> sites;
  for (const auto& seg : state.segments) {
    for (const auto& b : seg.blocks) {
      if (b.state == block_state::active_allocated) {
        auto& s = sites[user_frame(t, b.stack)];
        s.bytes += b.size;
        ++s.count;
        if (s.stack == no_stack)
          s.stack = b.stack;
      }
    }
  }
  for (auto& [frame, s] : sites) {
    s.site = frame;
    out.sites.push_back(s);
  }
  out.site_count = out.sites.size();
  const auto kept = std::min(out.sites.size(), oom_sites_kept);
  std::partial_sort(out.sites.begin(), out.sites.begin() + static_cast<std::ptrdiff_t>(kept),
                    out.sites.end(), by_bytes_then_site);
  out.sites.resize(kept);
  return out;
}

frame_id live_state::site_of(stack_id stack) {
  auto it = site_of_.find(stack);
  if (it == site_of_.end())
    it = site_of_.emplace(stack, user_frame(t_, stack)).first;
  return it->second;
}

// What allocator_state::figures() and read_state() count of one segment (sums wrap as theirs).
live_state::segment_share live_state::share_of(const segment& s) {
  segment_share out;
  if (s.pool != implicit_pool)
    out.reserved = s.total_size;
  for (const auto& b : s.blocks) {
    if (b.state == block_state::inactive) {
      out.free += b.size;
      out.largest_free = std::max(out.largest_free, b.size);
    }
    if (b.state != block_state::active_allocated)
      continue;
    out.allocated += b.size;
    const auto site = site_of(b.stack);
    // A segment holds few sites: a look along them beats a map.
    auto it = std::find_if(out.sites.begin(), out.sites.end(),
                           [&](const site_share& x) { return x.site == site; });
    if (it == out.sites.end())
      it = out.sites.insert(out.sites.end(), site_share{.site = site});
    it->bytes += b.size;
    ++it->count;
    if (it->stack == no_stack)
      it->stack = b.stack;
  }
  return out;
}

void live_state::add(std::uint64_t address, const segment_share& share, bool remove) {
  const auto sign = [&](std::uint64_t v) { return remove ? ~v + 1 : v; }; // wraps, as the sums
  reserved_ += sign(share.reserved);
  allocated_ += sign(share.allocated);
  free_ += sign(share.free);
  if (remove)
    largest_free_.erase(largest_free_.find(share.largest_free));
  else
    largest_free_.insert(share.largest_free);
  for (const auto& s : share.sites) {
    auto& total = sites_[s.site];
    if (total.count != 0)
      ranked_.erase({total.bytes, s.site});
    total.bytes += sign(s.bytes);
    total.count = remove ? total.count - s.count : total.count + s.count;
    if (s.stack != no_stack) {
      if (remove)
        total.stacks.erase(address);
      else
        total.stacks.emplace(address, s.stack);
    }
    if (total.count == 0)
      sites_.erase(s.site);
    else
      ranked_.insert({total.bytes, s.site});
  }
}

oom_state live_state::read(replay_pass& replay) {
  if (!started_ || replay.all_touched()) {
    // The whole state (the first time, or after more steps than the list of touched segments
    // keeps).
    started_ = true;
    shares_.clear();
    reserved_ = allocated_ = free_ = 0;
    largest_free_.clear();
    sites_.clear();
    ranked_.clear();
    for (const auto& seg : replay.state().segments)
      shares_.emplace(seg.address, share_of(seg));
    for (const auto& [address, share] : shares_)
      add(address, share, false);
  } else {
    auto touched = std::vector<std::uint64_t>(replay.touched().begin(), replay.touched().end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const auto address : touched) {
      if (const auto old = shares_.find(address); old != shares_.end()) {
        add(address, old->second, true);
        shares_.erase(old);
      }
      if (const auto* seg = replay.segment_at(address)) {
        const auto& share = shares_.emplace(address, share_of(*seg)).first->second;
        add(address, share, false);
      }
    }
  }
  replay.clear_touched();
  oom_state out;
  out.figures.reserved = reserved_;
  out.figures.allocated = allocated_;
  out.figures.free = free_;
  out.figures.largest_free_block = largest_free_.empty() ? 0 : *largest_free_.rbegin();
  out.site_count = sites_.size();
  for (const auto& [bytes, site] : ranked_) {
    if (out.sites.size() == oom_sites_kept)
      break;
    const auto& total = sites_.at(site);
    out.sites.push_back({.site = site,
                         .stack = total.stacks.empty() ? no_stack : total.stacks.begin()->second,
                         .bytes = bytes,
                         .count = total.count});
  }
  return out;
}

} // namespace tdiag::trace::detail
