// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Numbers as the views print them: durations with a unit that keeps three significant
// digits, byte counts in binary units, and the ruler's tick spacing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag::view {

/// "850 ns", "12.3 µs", "4.56 ms", "1.23 s".
[[nodiscard]] std::string format_duration(double ns);
/// A ruler label for time `ns` on ticks `step_ns` apart: enough decimals to tell ticks apart.
[[nodiscard]] std::string format_time_tick(double ns, double step_ns);
/// "512 B", "1.5 KiB", "3.00 GiB".
[[nodiscard]] std::string format_bytes(double bytes);
/// A tick step (1, 2 or 5 times a power of ten ns) so ticks are at least `min_px` apart.
[[nodiscard]] double tick_step(double ns_per_px, double min_px) noexcept;
/// Parses "12.5ms", "3s", "1500us", "800ns", "40%" (of `span_ns`), or a bare number (ms).
/// Returns ns from the trace's start, or nullopt for malformed text.
[[nodiscard]] std::optional<std::int64_t> parse_time_offset(std::string_view text,
                                                            std::int64_t span_ns);

} // namespace tdiag::view
