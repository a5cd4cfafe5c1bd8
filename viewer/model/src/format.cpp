// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <utility>

namespace tdiag::view {
namespace {

// Three significant digits.
std::string sig3(double v, std::string_view unit) {
  const double a = std::fabs(v);
  if (a >= 100.0)
    return fmt::format("{:.0f} {}", v, unit);
  if (a >= 10.0)
    return fmt::format("{:.1f} {}", v, unit);
  return fmt::format("{:.2f} {}", v, unit);
}

} // namespace

std::string format_duration(double ns) {
  const double a = std::fabs(ns);
  if (a < 1e3)
    return fmt::format("{:.0f} ns", ns);
  if (a < 1e6)
    return sig3(ns / 1e3, "µs");
  if (a < 1e9)
    return sig3(ns / 1e6, "ms");
  return sig3(ns / 1e9, "s");
}

std::string format_time_tick(double ns, double step_ns) {
  const double a = std::fabs(ns);
  const auto [scale, unit] = a < 1e3   ? std::pair{1.0, "ns"}
                             : a < 1e6 ? std::pair{1e3, "µs"}
                             : a < 1e9 ? std::pair{1e6, "ms"}
                                       : std::pair{1e9, "s"};
  // As many decimals as the step needs, so that neighbouring ticks never read the same.
  const double step = step_ns / scale;
  int decimals =
      step > 0 ? static_cast<int>(std::clamp(std::ceil(-std::log10(step) - 1e-9), 0.0, 9.0)) : 0;
  while (decimals < 9 && step > 0) { // a step of 2.5 needs one decimal more than its magnitude
    const double scaled = step * std::pow(10.0, decimals);
    if (std::fabs(scaled - std::round(scaled)) < 1e-6 * scaled)
      break;
    ++decimals;
  }
  return fmt::format("{:.{}f} {}", ns / scale, decimals, unit);
}

std::string format_bytes(double bytes) {
  static constexpr std::array<std::string_view, 6> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  std::size_t u = 0;
  while (std::fabs(v) >= 1024.0 && u + 1 < units.size()) {
    v /= 1024.0;
    ++u;
  }
  if (u == 0)
    return fmt::format("{:.0f} B", v);
  return sig3(v, units[u]);
}

double tick_step(double ns_per_px, double min_px) noexcept {
  const double min_ns = std::max(ns_per_px * min_px, 1e-3);
  double p = std::pow(10.0, std::floor(std::log10(min_ns)));
  for (;;) {
    for (const double m : {1.0, 2.0, 5.0})
      if (p * m >= min_ns)
        return p * m;
    p *= 10.0;
  }
}

std::optional<std::int64_t> parse_time_offset(std::string_view text, std::int64_t span_ns) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  double value = 0.0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || !std::isfinite(value))
    return std::nullopt;
  const std::string_view unit(ptr, static_cast<std::size_t>(last - ptr));
  double scale = 0.0;
  if (unit.empty() || unit == "ms")
    scale = 1e6;
  else if (unit == "s")
    scale = 1e9;
  else if (unit == "us" || unit == "µs")
    scale = 1e3;
  else if (unit == "ns")
    scale = 1.0;
  else if (unit == "%")
    scale = static_cast<double>(span_ns) / 100.0;
  else
    return std::nullopt;
  return static_cast<std::int64_t>(std::llround(value * scale));
}

} // namespace tdiag::view
