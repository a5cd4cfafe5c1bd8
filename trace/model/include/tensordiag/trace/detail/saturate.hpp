// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Overflow-safe conversions and sums for values read from files (private): imported times are
// kept within +-2^60 ns of the origin, so differences and spans of them never overflow; sums of
// untrusted sizes and durations saturate instead of wrapping (signed overflow is undefined).
#pragma once

#include <cstdint>
#include <limits>

namespace tdiag::trace::detail {

inline constexpr std::int64_t time_limit = std::int64_t{1} << 60;

__extension__ using wide_int = __int128; // GCC and Clang; __extension__ keeps -Wpedantic quiet

[[nodiscard]] constexpr std::int64_t clamp_time(wide_int t) noexcept {
  return t > time_limit ? time_limit : t < -time_limit ? -time_limit : static_cast<std::int64_t>(t);
}
/// Any wide value into int64 (for epoch origins, which exceed time_limit).
[[nodiscard]] constexpr std::int64_t clamp_i64(wide_int t) noexcept {
  return t > std::numeric_limits<std::int64_t>::max()   ? std::numeric_limits<std::int64_t>::max()
         : t < std::numeric_limits<std::int64_t>::min() ? std::numeric_limits<std::int64_t>::min()
                                                        : static_cast<std::int64_t>(t);
}
[[nodiscard]] constexpr std::int64_t clamp_time(double t) noexcept {
  if (!(t == t))
    return 0; // NaN
  return t > static_cast<double>(time_limit)    ? time_limit
         : t < -static_cast<double>(time_limit) ? -time_limit
                                                : static_cast<std::int64_t>(t);
}
[[nodiscard]] constexpr std::int64_t to_i64(double d) noexcept {
  if (!(d == d))
    return 0;
  if (d >= 9.2e18)
    return std::numeric_limits<std::int64_t>::max();
  if (d <= -9.2e18)
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(d);
}
[[nodiscard]] constexpr std::uint64_t to_u64(double d) noexcept {
  if (!(d > 0))
    return 0;
  if (d >= 1.8e19)
    return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(d);
}
[[nodiscard]] constexpr std::int64_t sat_add(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return r;
}
[[nodiscard]] constexpr std::int64_t sat_sub(std::int64_t a, std::int64_t b) noexcept {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? std::numeric_limits<std::int64_t>::max()
                 : std::numeric_limits<std::int64_t>::min();
  return r;
}
/// A byte count as a signed value, saturated.
[[nodiscard]] constexpr std::int64_t signed_size(std::uint64_t n) noexcept {
  return n > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
             ? std::numeric_limits<std::int64_t>::max()
             : static_cast<std::int64_t>(n);
}

} // namespace tdiag::trace::detail
