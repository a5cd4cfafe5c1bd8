// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reading a failure buffer on the host and acknowledging what was read, so later failures are
// reported afresh. Works on the live buffer when it is host-coherent, else on a copy.
#include <tensordiag/assertions/failure_buffer.hpp>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "runtime_state.hpp"

namespace tdiag::assertions::detail {

namespace {
// A failing device thread claims, then counts its site, then writes and publishes its record. A
// reader that lands between those steps sees a claim without its site count or record: it waits
// this long for the device to finish (microseconds) before reporting what it has.
constexpr auto settle_time = std::chrono::milliseconds(10);
} // namespace

device_failures read_failures(device_state& ds, bool acknowledge) {
  device_failures out;
  std::vector<char> copy;
  std::uint64_t claimed = 0, ack = 0, dropped = 0, overflow = 0, first_unpublished = 0;
  const auto deadline = std::chrono::steady_clock::now() + settle_time;
  for (;;) {
    out = device_failures{};
    out.state = &ds;
    auto* h = static_cast<buffer_header*>(ds.buffer.host);
    if (!ds.buffer.host_coherent) {
      copy.resize(ds.buffer.bytes);
      ds.owner->read_device_memory(ds.device, ds.buffer.device, copy.data(), copy.size());
      h = reinterpret_cast<buffer_header*>(copy.data());
    }
    claimed = load_acquire(&h->claimed);
    ack = load_acquire(&h->acknowledged);
    dropped = load_acquire(&h->dropped);
    overflow = load_acquire(&h->site_overflow);
    out.total = claimed - ds.seen_claimed.load(std::memory_order_relaxed);
    out.dropped = dropped - ds.acked_dropped;
    out.overflow = overflow - ds.acked_overflow;

    std::uint64_t counted = out.overflow;
    site_counter* sites = site_counters(h);
    for (std::uint32_t i = 0; i < ds.site_capacity; ++i) {
      const std::uint64_t site = load_acquire(&sites[i].site);
      if (site == 0)
        continue;
      const std::uint64_t count = load_acquire(&sites[i].count);
      const auto it = ds.acked_site_counts.find(site);
      const std::uint64_t before = it == ds.acked_site_counts.end() ? 0 : it->second;
      if (count > before) {
        out.site_counts[site] = count - before;
        counted += count - before;
      }
    }

    failure_record* ring = records(h);
    first_unpublished = claimed;
    for (std::uint64_t claim = ack; claim < claimed && claim - ack < ds.record_capacity; ++claim) {
      failure_record& slot = ring[claim % ds.record_capacity];
      if (load_acquire(&slot.sequence) != claim + 1) {
        if (first_unpublished == claimed)
          first_unpublished = claim;
        ++out.in_flight;
        continue;
      }
      if (ds.taken_beyond_ack.count(claim) != 0)
        continue;
      taken_record t;
      t.claim = claim;
      std::memcpy(&t.record, &slot, sizeof(slot));
      out.records.push_back(t);
    }
    const bool settled = out.in_flight == 0 && counted >= out.total;
    if (settled || !acknowledge || std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (!acknowledge)
    return out;

  ds.seen_claimed.store(claimed, std::memory_order_relaxed);
  ds.acked_dropped = dropped;
  ds.acked_overflow = overflow;
  for (const auto& [site, count] : out.site_counts)
    ds.acked_site_counts[site] += count;
  // Claims past the ring were counted as dropped; an unpublished one holds the ring back.
  const std::uint64_t new_ack = first_unpublished;
  for (const auto& t : out.records)
    if (t.claim >= new_ack)
      ds.taken_beyond_ack.insert(t.claim);
  std::erase_if(ds.taken_beyond_ack, [&](std::uint64_t c) { return c < new_ack; });
  if (new_ack != ack) {
    if (ds.buffer.host_coherent) {
      __atomic_store_n(&static_cast<buffer_header*>(ds.buffer.host)->acknowledged, new_ack,
                       __ATOMIC_RELEASE);
    } else {
      auto* live = static_cast<buffer_header*>(ds.buffer.device);
      ds.owner->write_device_memory(ds.device, &live->acknowledged, &new_ack, sizeof(new_ack));
    }
  }
  return out;
}

} // namespace tdiag::assertions::detail
