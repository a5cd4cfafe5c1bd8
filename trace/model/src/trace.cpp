// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/trace.hpp>

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace tdiag::trace {

const std::string* trace_metadata::property(std::string_view key) const noexcept {
  for (const auto& [k, v] : properties)
    if (k == key)
      return &v;
  return nullptr;
}

void trace::finalize() {
  const std::size_t lane_count = lanes.size();
  if (!ranges.finalized() && !sync_waits.empty()) {
    // The ranges store sorts stably by (lane, start): the same order over indexes says where
    // each indexed row goes.
    const auto all = ranges.all();
    std::vector<std::uint32_t> order(all.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return all[a].lane != all[b].lane ? all[a].lane < all[b].lane : all[a].start < all[b].start;
    });
    std::vector<std::uint32_t> moved_to(all.size());
    for (std::uint32_t i = 0; i < order.size(); ++i)
      moved_to[order[i]] = i;
    move_sync_waits(moved_to);
  }
  std::sort(sync_waits.begin(), sync_waits.end(),
            [](const sync_wait& a, const sync_wait& b) { return a.range_index < b.range_index; });
  std::stable_sort(collectives.begin(), collectives.end(),
                   [](const collective_info& a, const collective_info& b) {
                     return a.correlation < b.correlation;
                   });
  for_each_store([&](auto& store) {
    if (!store.finalized())
      store.finalize(lane_count);
  });
  if (final_allocator_state)
    final_allocator_state->sort();
}

bool trace::finalized() const noexcept {
  bool all = true;
  for_each_store([&](const auto& store) { all = all && store.finalized(); });
  return all;
}

std::size_t trace::link_flows_by_correlation() {
  std::unordered_map<std::uint32_t, const api_event*> launches;
  for (const auto& call : api_calls.all())
    if (call.correlation != 0 && (call.kind == api_kind::runtime || call.kind == api_kind::driver))
      launches.emplace(call.correlation, &call);
  std::unordered_set<std::uint32_t> linked;
  for (const auto& f : flows.all())
    linked.insert(f.correlation);

  std::vector<flow_event> added;
  auto link = [&](std::uint32_t correlation, lane_id target_lane, std::int64_t target_time) {
    if (correlation == 0 || linked.contains(correlation))
      return;
    auto it = launches.find(correlation);
    if (it == launches.end())
      return;
    flow_event f;
    f.time = it->second->start;
    f.target_time = target_time;
    f.lane = it->second->lane;
    f.target_lane = target_lane;
    f.correlation = correlation;
    f.kind = flow_kind::launch;
    added.push_back(f);
    linked.insert(correlation);
  };
  for (const auto& k : kernels.all())
    link(k.correlation, k.lane, k.start);
  for (const auto& c : copies.all())
    link(c.correlation, c.lane, c.start);
  for (const auto& f : added)
    flows.push_back(f);
  return added.size();
}

std::size_t trace::event_count() const noexcept {
  std::size_t n = 0;
  for_each_store([&](const auto& store) { n += store.size(); });
  return n;
}

std::uint64_t trace::memory_bytes() const noexcept {
  // A lane: its row and its index entry (a map node of ~80 bytes).
  std::uint64_t n = strings.text_bytes() + std::uint64_t{lanes.size()} * (sizeof(lane) + 80);
  for_each_store([&](const auto& store) {
    n += 2 * std::uint64_t{store.size()} * sizeof(*store.all().data());
  });
  return n + 2 * std::uint64_t{memory_details.size()} * sizeof(memory_detail);
}

time_span trace::span() const noexcept {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max();
  std::int64_t hi = std::numeric_limits<std::int64_t>::min();
  for_each_store([&](const auto& store) {
    for (const auto& r : store.all()) {
      lo = std::min(lo, begin_time(r));
      hi = std::max(hi, end_time(r));
    }
  });
  if (lo > hi)
    return {};
  return {lo, hi};
}

void trace::move_sync_waits(std::span<const std::uint32_t> moved_to) {
  std::erase_if(sync_waits, [&](sync_wait& w) {
    if (w.range_index >= moved_to.size() || moved_to[w.range_index] == dropped_range)
      return true;
    w.range_index = moved_to[w.range_index];
    return false;
  });
}

const sync_wait* trace::sync_wait_of(std::size_t range_index) const noexcept {
  const auto it =
      std::lower_bound(sync_waits.begin(), sync_waits.end(), range_index,
                       [](const sync_wait& w, std::size_t i) { return w.range_index < i; });
  return it != sync_waits.end() && it->range_index == range_index ? &*it : nullptr;
}

const memory_detail& trace::detail_of(const memory_event& e) const noexcept {
  static constexpr memory_detail none{};
  return e.detail == 0 || e.detail > memory_details.size() ? none : memory_details[e.detail - 1];
}

std::uint32_t trace::add_memory_detail(const memory_detail& d) {
  if (d == memory_detail{})
    return 0;
  if (!memory_details.empty() && memory_details.back() == d)
    return static_cast<std::uint32_t>(memory_details.size());
  if (memory_details.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw std::length_error("trace::add_memory_detail: more than 2^32 - 2 memory details");
  memory_details.push_back(d);
  return static_cast<std::uint32_t>(memory_details.size());
}

memory_record trace::record_of(const memory_event& e) const noexcept {
  const auto& d = detail_of(e);
  memory_record r;
  r.time = e.time;
  r.lane = e.lane;
  r.action = e.action;
  r.device = e.device;
  r.stack = e.stack;
  r.address = e.address;
  r.size = e.size;
  r.stream = e.stream;
  r.pool = d.pool;
  r.device_free = d.device_free;
  r.total_allocated = d.total_allocated;
  r.total_reserved = d.total_reserved;
  r.correlation = d.correlation;
  r.user_metadata = d.user_metadata;
  return r;
}

memory_event trace::event_of(const memory_record& r) {
  memory_event e;
  e.time = r.time;
  e.lane = r.lane;
  e.action = r.action;
  e.device = r.device;
  e.stack = r.stack;
  e.detail = add_memory_detail(r.detail());
  e.address = r.address;
  e.size = r.size;
  e.stream = r.stream;
  return e;
}

const collective_info* trace::collective_of(std::uint32_t correlation) const noexcept {
  const auto it = std::lower_bound(
      collectives.begin(), collectives.end(), correlation,
      [](const collective_info& c, std::uint32_t id) { return c.correlation < id; });
  return correlation != 0 && it != collectives.end() && it->correlation == correlation ? &*it
                                                                                       : nullptr;
}

namespace {

// Memory events compare with their details, whatever entry holds them.
bool same_memory(const trace& a, const trace& b) {
  const auto x = a.memory.all(), y = b.memory.all();
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(),
                                            [&](const memory_event& p, const memory_event& q) {
                                              return a.record_of(p) == b.record_of(q);
                                            });
}

} // namespace

bool operator==(const trace& a, const trace& b) {
  return a.strings == b.strings && a.stacks == b.stacks && a.lanes == b.lanes &&
         a.kernels == b.kernels && a.copies == b.copies && a.api_calls == b.api_calls &&
         a.ranges == b.ranges && a.markers == b.markers && same_memory(a, b) &&
         a.assertions == b.assertions && a.flows == b.flows && a.counters == b.counters &&
         a.final_allocator_state == b.final_allocator_state && a.metadata == b.metadata &&
         a.sync_waits == b.sync_waits && a.collectives == b.collectives;
}

} // namespace tdiag::trace
