// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `--device N` and `--window A:B` (trace_select.hpp), and options naming an instant in a trace
// (`tdiag trace timeline --at`, `tdiag-view --time/--span`), for every program that opens traces
// with CLI11: one spelling, one grammar (units.hpp: a bare number is seconds), one check at parse
// time. Header-only: the includer links CLI11, the trace library does not.
#pragma once

#include <tensordiag/trace/trace_select.hpp>
#include <tensordiag/trace/units.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

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

/// Adds option `name` to `app`, read into `text` as written: a time since a trace's start or a
/// length of time, as parse_time_offset() reads it (1.5s, 250ms, 800us, 42ns, bare seconds, or
/// 40% of the span). Anything else is a CLI11 validation error at parse time.
inline CLI::Option* add_time_offset_option(CLI::App& app, const std::string& name,
                                           std::string& text, const std::string& help) {
  return app.add_option(name, text, help)
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            if (parse_time_offset(value, 1))
              return {};
            return fmt::format("'{}' is not a time like {}, or 40% of the span", value,
                               duration_examples);
          },
          "TIME"));
}

} // namespace tdiag::trace
