// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <tensordiag/core/report.hpp>

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag {

/// The exception every host API of tensordiag throws. It carries the structured report, so a
/// caller can render it in any format; what() is the first diagnostic's message.
class error : public std::runtime_error {
public:
  explicit error(tdiag::report r);
  explicit error(diagnostic d);
  [[nodiscard]] const tdiag::report& report() const noexcept { return report_; }

private:
  tdiag::report report_;
};

/// Thrown for bad input from outside (a malformed file, an unreadable path): the CLI maps it to
/// exit status 2 and prints what() as one line.
class input_error : public error {
public:
  using error::error;
};

/// Throws input_error with one error diagnostic: `code`, `title`, `message`, `fields` (in this
/// order) and `hint`. Every "bad input" helper of the libraries and front ends goes through it.
[[noreturn]] void throw_input_error(std::string_view code, std::string title, std::string message,
                                    std::string hint = {}, std::vector<field> fields = {});

} // namespace tdiag
