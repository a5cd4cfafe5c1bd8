// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>

namespace tdiag {

std::string_view to_string(report_format format) noexcept {
  switch (format) {
  case report_format::text:
    return "text";
  case report_format::json:
    return "json";
  case report_format::github:
    return "github";
  case report_format::junit:
    return "junit";
  case report_format::sarif:
    return "sarif";
  }
  return "text";
}

std::optional<report_format> parse_report_format(std::string_view text) noexcept {
  for (const auto format : {report_format::text, report_format::json, report_format::github,
                            report_format::junit, report_format::sarif}) {
    if (text == to_string(format))
      return format;
  }
  return std::nullopt;
}

std::string render(const report& r, report_format format, const text_options& options) {
  switch (format) {
  case report_format::text:
    return to_text(r, options);
  case report_format::json:
    return to_json(r);
  case report_format::github:
    return to_github(r);
  case report_format::junit:
    return to_junit(r);
  case report_format::sarif:
    return to_sarif(r);
  }
  return to_text(r, options);
}

} // namespace tdiag
