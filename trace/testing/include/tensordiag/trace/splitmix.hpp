// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The generator behind the synthetic traces and snapshots: splitmix64, tiny, fast and the same
// numbers on every platform and standard library (unlike <random>'s distributions), so a seed
// names one trace everywhere.
#pragma once

#include <cstdint>

namespace tdiag::trace {

struct splitmix64 {
  std::uint64_t state = 0;

  std::uint64_t next() noexcept {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// In [0, n); 0 when n is 0.
  std::uint64_t below(std::uint64_t n) noexcept { return n ? next() % n : 0; }
};

} // namespace tdiag::trace
