// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

namespace tdiag::trace {
namespace {

struct unit_scale {
  std::string_view suffix;
  double ns;
};

// Suffixes match whole (after trimming), so their order does not matter.
constexpr std::array<unit_scale, 6> duration_units = {{{"ms", 1e6},
                                                       {"us", 1e3},
                                                       {"\xC2\xB5s", 1e3}, // µs (UTF-8)
                                                       {"ns", 1.0},
                                                       {"s", 1e9},
                                                       {"", 1e9}}};

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ')
    text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ')
    text.remove_suffix(1);
  return text;
}

// The number at the start of `text` and the rest; nullopt without a finite number.
std::optional<std::pair<double, std::string_view>> split_number(std::string_view text) {
  text = trim(text);
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  if (begin != end && *begin == '+')
    ++begin;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr == begin || !std::isfinite(value))
    return std::nullopt;
  return std::pair{value, trim(std::string_view(ptr, static_cast<std::size_t>(end - ptr)))};
}

std::optional<std::int64_t> to_ns(double ns) {
  if (!(std::fabs(ns) < 4.0e18))
    return std::nullopt; // beyond any trace (and int64)
  return static_cast<std::int64_t>(std::llround(ns));
}

} // namespace

std::string format_bytes(std::uint64_t bytes) {
  static constexpr std::array<const char*, 6> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  if (bytes < 1024)
    return fmt::format("{} B", bytes);
  double v = static_cast<double>(bytes);
  std::size_t u = 0;
  while (v >= 1024.0 && u + 1 < units.size()) {
    v /= 1024.0;
    ++u;
  }
  return fmt::format("{:.2f} {}", v, units[u]);
}

std::string format_bytes_or_unknown(std::int64_t bytes) {
  return bytes < 0 ? "unknown" : format_bytes(static_cast<std::uint64_t>(bytes));
}

std::string format_byte_delta(std::int64_t bytes) {
  const auto magnitude =
      bytes < 0 ? 0 - static_cast<std::uint64_t>(bytes) : static_cast<std::uint64_t>(bytes);
  return fmt::format("{}{}", bytes < 0 ? "-" : "+", format_bytes(magnitude));
}

std::string format_duration(std::int64_t ns) {
  const double v = static_cast<double>(ns);
  const double a = std::fabs(v);
  if (a < 1e3)
    return fmt::format("{} ns", ns);
  // 999,950 ns is "1 ms", not "1e+03 us": a value that rounds up to 1000 moves up a unit.
  if (a < 999.5e3)
    return fmt::format("{:.3g} us", v / 1e3);
  if (a < 999.5e6)
    return fmt::format("{:.3g} ms", v / 1e6);
  if (a < 9999.5e9)
    return fmt::format("{:.4g} s", v / 1e9);
  return fmt::format("{:.0f} s", v / 1e9);
}

std::string bad_time_message(std::string_view text) {
  return fmt::format("'{}' is not a time like {}, or 40% of the span", text, duration_examples);
}

std::optional<std::int64_t> parse_duration(std::string_view text) {
  const auto number = split_number(text);
  if (!number)
    return std::nullopt;
  for (const auto& unit : duration_units)
    if (number->second == unit.suffix)
      return to_ns(number->first * unit.ns);
  return std::nullopt;
}

std::optional<std::int64_t> parse_time_offset(std::string_view text, std::int64_t span_ns) {
  const auto number = split_number(text);
  if (number && number->second == "%")
    return to_ns(number->first * static_cast<double>(span_ns) / 100.0);
  return parse_duration(text);
}

} // namespace tdiag::trace
