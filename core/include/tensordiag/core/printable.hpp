// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Outside text (file names, op names, values) shown in a one-line message: the one place that
// escapes control characters and cuts long values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tdiag {

/// Default longest printable() result before the middle is cut.
inline constexpr std::size_t printable_max_bytes = 512;
/// Longest message of a thrown tdiag::error (its diagnostics' messages pass through printable()).
inline constexpr std::size_t error_message_max_bytes = 1024;

/// `text` safe for one line of a terminal or a CI log: every control character (C0, DEL, also
/// newline and tab) becomes `\xNN`; when longer than `max_bytes` the middle is replaced by
/// "...[N bytes cut]..." so both the start (a file name) and the end (what went wrong) stay.
[[nodiscard]] std::string printable(std::string_view text,
                                    std::size_t max_bytes = printable_max_bytes);

/// Longest text (a message, a field's value, a file name) the human-readable report formats (text,
/// GitHub workflow commands) show before its middle is cut: a 10 MB op name is not echoed whole.
inline constexpr std::size_t report_text_max_bytes = 4096;

/// printable() for text that may span lines (a message, a hint): newline and tab are kept, every
/// other control character escaped, the middle cut past `max_bytes`.
[[nodiscard]] std::string printable_lines(std::string_view text,
                                          std::size_t max_bytes = report_text_max_bytes);

/// Escapes control characters as printable() does, except newline and tab when `keep_lines`;
/// never cuts.
[[nodiscard]] std::string escape_controls(std::string_view text, bool keep_lines = false);

} // namespace tdiag
