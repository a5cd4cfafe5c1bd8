// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <charconv>
#include <cmath>

namespace tdiag::trace {

std::string format_bytes(std::uint64_t bytes) {
  static constexpr const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, units[u]);
}

std::string format_byte_delta(std::int64_t bytes) {
  const auto magnitude = format_bytes(static_cast<std::uint64_t>(bytes < 0 ? -bytes : bytes));
  return fmt::format("{}{}", bytes < 0 ? "-" : "+", magnitude);
}

std::string format_duration(std::int64_t ns) {
  const double a = std::fabs(static_cast<double>(ns));
  if (a < 1e3)
    return fmt::format("{} ns", ns);
  if (a < 1e6)
    return fmt::format("{:.3g} us", static_cast<double>(ns) / 1e3);
  if (a < 1e9)
    return fmt::format("{:.3g} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.4g} s", static_cast<double>(ns) / 1e9);
}

std::optional<std::int64_t> parse_duration(std::string_view text) {
  double value = 0;
  const auto* begin = text.data();
  const auto* end = text.data() + text.size();
  if (!text.empty() && *begin == '+')
    ++begin;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin)
    return std::nullopt;
  const std::string_view unit(ptr, static_cast<std::size_t>(end - ptr));
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1e9;
  else if (unit == "ms")
    scale = 1e6;
  else if (unit == "us")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1;
  else
    return std::nullopt;
  const double ns = value * scale;
  if (!(std::fabs(ns) < 4.0e18))
    return std::nullopt; // beyond any trace (and int64)
  return static_cast<std::int64_t>(std::llround(ns));
}

} // namespace tdiag::trace
