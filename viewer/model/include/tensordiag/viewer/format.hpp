// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Numbers as the views print them: durations and byte counts as every front end prints them
// (tensordiag/trace/units.hpp), from the doubles the views compute in; and the ruler's ticks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tdiag::view {

/// trace::format_duration() of `ns` rounded: "850 ns", "12.3 us", "4.56 ms", "1.234 s".
[[nodiscard]] std::string format_duration(double ns);
/// A ruler label for time `ns` on ticks `step_ns` apart: enough decimals to tell ticks apart.
[[nodiscard]] std::string format_time_tick(double ns, double step_ns);
/// trace::format_bytes() of `bytes` rounded, "-" before a negative count: "512 B", "3.00 GiB".
[[nodiscard]] std::string format_bytes(double bytes);
/// A tick step (1, 2 or 5 times a power of ten ns) so ticks are at least `min_px` apart.
[[nodiscard]] double tick_step(double ns_per_px, double min_px) noexcept;

} // namespace tdiag::view
