// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Human-readable byte counts and durations for analysis messages ("3.00 GiB", "1.25 ms"), and
// the parser for durations given on the command line ("1.5s", "250ms", "1200us", "42ns").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag::trace {

/// Binary units: "512 B", "1.50 KiB", "3.00 GiB".
[[nodiscard]] std::string format_bytes(std::uint64_t bytes);
/// Signed byte deltas: "+1.50 MiB", "-512 B".
[[nodiscard]] std::string format_byte_delta(std::int64_t bytes);
/// "950 ns", "12.5 us", "3.20 ms", "1.234 s".
[[nodiscard]] std::string format_duration(std::int64_t ns);
/// Parses "1.5s", "250ms", "1200us", "42ns" or a bare number of seconds; nullopt if malformed.
[[nodiscard]] std::optional<std::int64_t> parse_duration(std::string_view text);

} // namespace tdiag::trace
