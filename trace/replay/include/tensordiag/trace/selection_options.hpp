// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `--device N` and `--window A:B` (trace_select.hpp) for every program that opens traces with
// CLI11 (tdiag trace, tdiag-view): one spelling, one help text, one check. Header-only: the
// includer links CLI11, the trace library does not.
#pragma once

#include <tensordiag/trace/trace_select.hpp>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace tdiag::trace {

/// Adds both options to `app`; parsing fills `select`, which must outlive the parse. A malformed
/// window is a CLI11 validation error (one line, exit 2 through the program's usual path).
inline void add_selection_options(CLI::App& app, trace_selection& select) {
  app.add_option_function<std::int32_t>(
         "--device", [&select](std::int32_t device) { select.device = device; },
         std::string(device_option_help))
      // Not CLI::NonNegativeNumber: its message printed the largest double, all 309 digits.
      ->check(CLI::Validator(
          [](const std::string& text) {
            return text.starts_with('-') ? "expected a device number >= 0, got " + text
                                         : std::string();
          },
          "N >= 0"));
  app.add_option_function<std::string>(
      "--window",
      [&select](const std::string& text) {
        select.window = parse_time_window(text);
        if (!select.window)
          throw CLI::ValidationError("--window", bad_window_message(text));
      },
      std::string(window_option_help));
}

} // namespace tdiag::trace
