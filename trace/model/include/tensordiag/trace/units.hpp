// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The one units module: how byte counts and durations print ("3.00 GiB", "1.25 ms") and how
// durations given on a command line parse, for the CLI, the viewer and the analyses' messages
// alike. A bare number is seconds everywhere (`tdiag trace timeline --at 2` and
// `tdiag-view --time 2` mean the same instant); a suffix says otherwise: "1.5s", "250ms",
// "800us" (or "µs"), "42ns", and for a time offset "40%" of the trace's span.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag::trace {

/// Binary units, two decimals past bytes: "512 B", "1.50 KiB", "3.00 GiB".
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
/// format_bytes(), or "unknown" for a figure below 0 (the analyses' "not known").
[[nodiscard]] std::string format_bytes_or_unknown(std::int64_t bytes);
/// Signed byte deltas: "+1.50 MiB", "-512 B".
[[nodiscard]] std::string format_byte_delta(std::int64_t bytes);
/// Three significant digits in the largest unit below the value ("950 ns", "12.5 us",
/// "3.2 ms"), four for seconds ("1.234 s"); never an exponent.
[[nodiscard]] std::string format_duration(std::int64_t ns);
/// Parses a duration: a number with an optional unit suffix (s, ms, us, µs, ns; none means
/// seconds), surrounding spaces allowed. Returns ns, or nullopt if malformed or beyond int64.
[[nodiscard]] std::optional<std::int64_t> parse_duration(std::string_view text);
/// parse_duration(), and also "P%" for P percent of `span_ns` (a time offset into a trace).
[[nodiscard]] std::optional<std::int64_t> parse_time_offset(std::string_view text,
                                                            std::int64_t span_ns);
/// The accepted forms, for help texts and error messages: "1.5s, 250ms, 800us, 42ns".
inline constexpr std::string_view duration_examples = "1.5s, 250ms, 800us, 42ns (bare: seconds)";
/// What every front end says of `text` that parse_time_offset() refuses: "'1h' is not a time
/// like 1.5s, 250ms, 800us, 42ns (bare: seconds), or 40% of the span".
[[nodiscard]] std::string bad_time_message(std::string_view text);

} // namespace tdiag::trace
