// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Internal: throwing the validation layer's input errors in one line.
#pragma once

#include <tensordiag/core/error.hpp>

#include <string>
#include <string_view>

namespace tdiag::dtensor::detail {

/// Throws tdiag::input_error with `code`, `title`, `message` and `hint`.
[[noreturn]] inline void throw_input(std::string_view code, std::string title, std::string message,
                                     std::string hint = {}) {
  diagnostic d;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.hint = std::move(hint);
  throw input_error(std::move(d));
}

} // namespace tdiag::dtensor::detail
