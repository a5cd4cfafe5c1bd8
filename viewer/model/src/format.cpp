// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/units.hpp>
#include <tensordiag/viewer/format.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

namespace tdiag::view {
namespace {

// The views compute in doubles; the one print form (units.hpp) takes whole ns and bytes.
std::int64_t to_int(double v) {
  constexpr double limit = 9.2e18;
  return std::isnan(v) ? 0 : static_cast<std::int64_t>(std::llround(std::clamp(v, -limit, limit)));
}

} // namespace

std::string format_duration(double ns) {
  return trace::format_duration(to_int(ns));
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
  const std::int64_t b = to_int(bytes);
  return b < 0 ? "-" + trace::format_bytes(0 - static_cast<std::uint64_t>(b))
               : trace::format_bytes(static_cast<std::uint64_t>(b));
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

} // namespace tdiag::view
