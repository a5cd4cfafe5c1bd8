// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "oom_state.hpp"

#include <tensordiag/trace/allocation_site.hpp>

#include <algorithm>
#include <span>

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

std::uint32_t& live_state::slot(frame_id site) {
  if (site >= slots_.size())
    slots_.resize(std::max<std::size_t>(site + 1, t_.stacks.frame_count()), none);
  return slots_[site];
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
  // Each site's entry in out.sites by slot_ (reset to none before returning).
  const auto find = [&](frame_id site) -> site_share& {
    auto& at = slot(site);
    if (at == none)
      at = static_cast<std::uint32_t>(out.sites.size()), out.sites.push_back({.site = site});
    return out.sites[at];
  };
  for (const auto& b : s.blocks) {
    if (b.state == block_state::inactive) {
      out.free += b.size;
      out.largest_free = std::max(out.largest_free, b.size);
    }
    if (b.state != block_state::active_allocated)
      continue;
    out.allocated += b.size;
    auto& share = find(site_of(b.stack));
    share.bytes += b.size;
    ++share.count;
    if (share.stack == no_stack)
      share.stack = b.stack;
  }
  for (const auto& x : out.sites)
    slot(x.site) = none;
  return out;
}

// One site's share of the segment at `address` goes from `old` to `now` (null: none).
void live_state::change_site(std::uint64_t address, frame_id site, const site_share* old,
                             const site_share* now) {
  if (old != nullptr && now != nullptr && old->bytes == now->bytes && old->count == now->count &&
      old->stack == now->stack)
    return;
  auto& total = sites_[site];
  if (total.count != 0)
    ranked_.erase({total.bytes, site});
  // The sums wrap, as read_state's.
  total.bytes += (now != nullptr ? now->bytes : 0) - (old != nullptr ? old->bytes : 0);
  total.count = total.count - (old != nullptr ? old->count : 0) + (now != nullptr ? now->count : 0);
  const auto was = old != nullptr ? old->stack : no_stack;
  const auto is = now != nullptr ? now->stack : no_stack;
  if (was != is) {
    if (was != no_stack)
      total.stacks.erase(address);
    if (is != no_stack)
      total.stacks.emplace(address, is);
  }
  if (total.count == 0)
    sites_.erase(site);
  else
    ranked_.insert({total.bytes, site});
}

// The segment at `address` goes from share `old` to `now` (null: none). Only the sites whose
// share changed move in the ranking: an oom after one allocation in a segment of 100,000 blocks
// re-ranks one site, not 100,000.
void live_state::replace(std::uint64_t address, const segment_share* old,
                         const segment_share* now) {
  const auto get = [](const segment_share* s, std::uint64_t segment_share::*field) {
    return s != nullptr ? s->*field : 0;
  };
  // The sums wrap, as read_state's.
  reserved_ += get(now, &segment_share::reserved) - get(old, &segment_share::reserved);
  allocated_ += get(now, &segment_share::allocated) - get(old, &segment_share::allocated);
  free_ += get(now, &segment_share::free) - get(old, &segment_share::free);
  if (old != nullptr)
    largest_free_.erase(largest_free_.find(old->largest_free));
  if (now != nullptr)
    largest_free_.insert(now->largest_free);
  const std::span<const site_share> before =
      old != nullptr ? std::span<const site_share>(old->sites) : std::span<const site_share>();
  for (std::size_t i = 0; i < before.size(); ++i)
    slot(before[i].site) = static_cast<std::uint32_t>(i);
  std::vector<bool> matched(before.size(), false);
  for (const auto& s :
       now != nullptr ? std::span<const site_share>(now->sites) : std::span<const site_share>()) {
    const auto i = slot(s.site);
    if (i != none)
      matched[i] = true;
    change_site(address, s.site, i != none ? &before[i] : nullptr, &s);
  }
  for (const auto& x : before)
    slot(x.site) = none;
  for (std::size_t i = 0; i < before.size(); ++i)
    if (!matched[i])
      change_site(address, before[i].site, &before[i], nullptr);
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
      replace(address, nullptr, &share);
  } else {
    auto touched = std::vector<std::uint64_t>(replay.touched().begin(), replay.touched().end());
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (const auto address : touched) {
      const auto old = shares_.find(address);
      const auto* seg = replay.segment_at(address);
      if (seg == nullptr && old == shares_.end())
        continue;
      auto now = seg != nullptr ? share_of(*seg) : segment_share{};
      replace(address, old != shares_.end() ? &old->second : nullptr,
              seg != nullptr ? &now : nullptr);
      if (seg == nullptr)
        shares_.erase(old);
      else
        shares_.insert_or_assign(address, std::move(now));
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
