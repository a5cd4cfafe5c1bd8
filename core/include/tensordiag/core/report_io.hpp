// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Rendering reports (human text, JSON `tensordiag.report/v1`, GitHub Actions workflow commands,
// JUnit XML, SARIF 2.1.0) and reading JSON reports back. All text is built with fmt.
#pragma once

#include <tensordiag/core/report.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tdiag {

enum class report_format : std::uint8_t { text, json, github, junit, sarif };

/// "text", "json", "github", "junit" or "sarif".
[[nodiscard]] std::string_view to_string(report_format format) noexcept;
[[nodiscard]] std::optional<report_format> parse_report_format(std::string_view text) noexcept;

struct text_options {
  bool color = false; ///< ANSI colour; see colour_wanted()
};

/// True when `fd` is a terminal and NO_COLOR is unset or empty.
[[nodiscard]] bool colour_wanted(int fd) noexcept;

/// Human text: per diagnostic the location and message first, then fields, notes, hint, related
/// locations and stack; a one-line summary at the end. Control characters other than newline and
/// tab are shown escaped (\x1b), so a report cannot drive the terminal.
[[nodiscard]] std::string to_text(const report& r, const text_options& options = {});
/// One diagnostic as to_text() shows it, without the summary line.
[[nodiscard]] std::string to_text(const diagnostic& d, const text_options& options = {});
/// A field value as people read it: 17, 2.5, gather<float>, [3, 0, 0], ["a", "b"].
[[nodiscard]] std::string to_text(const field_value& value);
/// JSON, schema `tensordiag.report/v1` (docs/report-format.md); parse_report_json() reads it back
/// so that to_json(parse_report_json(to_json(r))) is byte-for-byte to_json(r).
[[nodiscard]] std::string to_json(const report& r);
[[nodiscard]] std::string to_github(const report& r);
[[nodiscard]] std::string to_junit(const report& r);
[[nodiscard]] std::string to_sarif(const report& r);
[[nodiscard]] std::string render(const report& r, report_format format,
                                 const text_options& options = {});

/// Parses a `tensordiag.report/v1` document. Throws tdiag::input_error whose message names
/// `source_name` and the line:column (and byte offset) of the first problem.
[[nodiscard]] report parse_report_json(std::string_view json, std::string_view source_name);
/// Reads and parses a report file; throws tdiag::input_error on a missing or unreadable file.
[[nodiscard]] report read_report_file(const std::filesystem::path& path);
/// Writes `text` to `path` atomically enough for CI (temp file + rename); throws tdiag::error.
void write_text_file(const std::filesystem::path& path, std::string_view text);

} // namespace tdiag
