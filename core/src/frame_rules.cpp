// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "frame_rules.hpp"

#include <atomic>
#include <cstddef>

namespace tdiag::detail {
namespace {

// Open addressing over a fixed table: entries are never removed, so a reader needs no lock. A
// process has a few thousand distinct launch-site return addresses at most.
constexpr std::size_t table_bits = 13;
constexpr std::size_t table_size = std::size_t{1} << table_bits;
constexpr std::size_t max_probes = 16;

struct entry {
  std::atomic<std::uintptr_t> ip{0};
  std::atomic<std::uint64_t> rule{0}; // packed; 0 = not written yet
};

entry table[table_size];

std::size_t home(std::uintptr_t ip) noexcept {
  return static_cast<std::size_t>((ip * 0x9E3779B97F4A7C15ull) >> (64 - table_bits));
}

std::uint64_t pack(frame_rule r) noexcept {
  return std::uint64_t{static_cast<std::uint8_t>(r.kind)} | std::uint64_t{r.fp_saved} << 8 |
         std::uint64_t{static_cast<std::uint16_t>(r.fp_offset)} << 16 |
         std::uint64_t{r.cfa_offset} << 32;
}

frame_rule unpack(std::uint64_t v) noexcept {
  frame_rule r;
  r.kind = static_cast<frame_rule_kind>(v & 0xFF);
  r.fp_saved = ((v >> 8) & 1) != 0;
  r.fp_offset = static_cast<std::int16_t>(static_cast<std::uint16_t>(v >> 16));
  r.cfa_offset = static_cast<std::uint32_t>(v >> 32);
  return r;
}

} // namespace

frame_rule find_frame_rule(std::uintptr_t ip) noexcept {
  for (std::size_t i = 0, slot = home(ip); i < max_probes; ++i, slot = (slot + 1) % table_size) {
    const std::uintptr_t here = table[slot].ip.load(std::memory_order_acquire);
    if (here == ip)
      return unpack(table[slot].rule.load(std::memory_order_acquire));
    if (here == 0)
      break;
  }
  return {};
}

void learn_frame_rule(std::uintptr_t ip, frame_rule rule) noexcept {
  if (ip == 0 || rule.kind == frame_rule_kind::none)
    return;
  for (std::size_t i = 0, slot = home(ip); i < max_probes; ++i, slot = (slot + 1) % table_size) {
    std::uintptr_t here = table[slot].ip.load(std::memory_order_acquire);
    if (here == 0 && table[slot].ip.compare_exchange_strong(here, ip, std::memory_order_acq_rel))
      here = ip;
    if (here != ip)
      continue;
    std::uint64_t empty = 0; // a racing learner of the same address wrote the same rule
    table[slot].rule.compare_exchange_strong(empty, pack(rule), std::memory_order_release,
                                             std::memory_order_relaxed);
    return;
  }
}

} // namespace tdiag::detail
