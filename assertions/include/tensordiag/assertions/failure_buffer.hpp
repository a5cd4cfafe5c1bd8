// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The publication protocol of the failure buffer, shared by every back-end's device code and by
// the host reader. Only atomic add and compare-and-swap touch shared words (safe on host-mapped
// memory over PCIe); a record is published by a plain store of its sequence number after a
// system-scope fence. Dependency-free C++17.
#pragma once

#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/config.hpp>

#include <cstdint>

// nvcc includes the CUDA runtime in every .cu; hipcc does not, and atomicAdd comes from here.
#if TDIAG_HAS_HIP
#  include <hip/hip_runtime.h>
#endif

namespace tdiag::assertions::detail {

// --- The few atomics the protocol needs, per compiler pass ------------------------------------
#if TDIAG_DEVICE_COMPILATION()
TDIAG_DEVICE inline std::uint64_t atomic_add(std::uint64_t* p, std::uint64_t v) {
  return atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
}
TDIAG_DEVICE inline std::uint64_t atomic_cas(std::uint64_t* p, std::uint64_t expected,
                                             std::uint64_t desired) {
  return atomicCAS(reinterpret_cast<unsigned long long*>(p),
                   static_cast<unsigned long long>(expected),
                   static_cast<unsigned long long>(desired));
}
TDIAG_DEVICE inline std::uint64_t load_acquire(const std::uint64_t* p) {
  return *static_cast<const volatile std::uint64_t*>(p);
}
TDIAG_DEVICE inline void publish_store(std::uint64_t* p, std::uint64_t v) {
  __threadfence_system(); // the record's fields reach the host before its sequence number
  *static_cast<volatile std::uint64_t*>(p) = v;
}
#else
inline std::uint64_t atomic_add(std::uint64_t* p, std::uint64_t v) {
  return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
inline std::uint64_t atomic_cas(std::uint64_t* p, std::uint64_t expected, std::uint64_t desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expected; // the value seen: == the argument when the exchange happened
}
inline std::uint64_t load_acquire(const std::uint64_t* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
inline void publish_store(std::uint64_t* p, std::uint64_t v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
#endif

/// Where a failure happened, gathered by the back-end's device code.
struct failure_origin {
  std::uint64_t launch_id;
  std::uint64_t timestamp_ns;
  std::uint32_t block[3];
  std::uint32_t thread[3];
  std::uint32_t sm;
  std::uint32_t lane;
  std::uint8_t flags;
};

TDIAG_HOST_DEVICE inline site_counter* site_counters(buffer_header* h) {
  return reinterpret_cast<site_counter*>(reinterpret_cast<char*>(h) + h->sites_offset);
}
TDIAG_HOST_DEVICE inline failure_record* records(buffer_header* h) {
  return reinterpret_cast<failure_record*>(reinterpret_cast<char*>(h) + h->records_offset);
}

/// Counts one hit of `site` in the open-addressing table (claim a slot by CAS, then add).
TDIAG_HOST_DEVICE inline void count_site(buffer_header* h, std::uint64_t site, std::uint32_t id) {
  site_counter* table = site_counters(h);
  const std::uint32_t mask = h->site_capacity - 1;
  for (std::uint32_t probe = 0; probe <= mask; ++probe) {
    site_counter& slot = table[(id + probe) & mask];
    const std::uint64_t seen = atomic_cas(&slot.site, 0, site);
    if (seen == 0 || seen == site) {
      atomic_add(&slot.count, 1);
      return;
    }
  }
  atomic_add(&h->site_overflow, 1); // never silent: the total still counts it
}

/// Records one failure: claim, count the site, write the record if a slot is free (else count it
/// as dropped), publish. Lock-free; safe from any number of threads and devices at once.
TDIAG_HOST_DEVICE inline void publish_failure(buffer_header* h, const site_descriptor* site,
                                              const failure_origin& origin,
                                              const std::uint64_t* values, const value_type* types,
                                              std::uint32_t count) {
  const std::uint64_t claim = atomic_add(&h->claimed, 1);
  const auto site_address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(site));
  count_site(h, site_address, site->site_id);
  const std::uint64_t acknowledged = load_acquire(&h->acknowledged);
  // A stale `acknowledged` only makes this conservative: the failure is counted as dropped.
  if (claim - acknowledged >= h->record_capacity) {
    atomic_add(&h->dropped, 1);
    return;
  }
  failure_record& r = records(h)[claim % h->record_capacity];
  r.site = site_address;
  r.launch_id = origin.launch_id;
  r.timestamp_ns = origin.timestamp_ns;
  r.site_id = site->site_id;
  r.version = layout_version;
  r.operand_count = static_cast<std::uint8_t>(count);
  r.flags = origin.flags;
  for (int d = 0; d < 3; ++d) {
    r.block[d] = origin.block[d];
    r.thread[d] = origin.thread[d];
  }
  r.sm = origin.sm;
  r.lane = origin.lane;
  for (std::uint32_t i = 0; i < max_operands; ++i) {
    r.types[i] = i < count ? types[i] : value_type::none;
    r.values[i] = i < count ? values[i] : 0;
  }
  publish_store(&r.sequence, claim + 1);
}

} // namespace tdiag::assertions::detail
