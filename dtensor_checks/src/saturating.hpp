// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Sums and products of recorded counts saturate: a recording is outside input, and its sizes
// and call counts are only bounded one by one. Internal to the comm report.
#pragma once

#include <cstdint>
#include <limits>

namespace tdiag::dtensor::detail {

inline constexpr std::int64_t saturated = std::numeric_limits<std::int64_t>::max();

inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_add_overflow(a, b, &out) ? saturated : out;
}

inline std::int64_t sat_mul(std::int64_t a, std::int64_t b) {
  std::int64_t out = 0;
  return __builtin_mul_overflow(a, b, &out) ? saturated : out;
}

} // namespace tdiag::dtensor::detail
