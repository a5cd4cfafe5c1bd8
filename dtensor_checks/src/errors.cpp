// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/errors.hpp>

namespace tdiag::dtensor {

std::string_view to_string(error_class c) noexcept {
  switch (c) {
  case error_class::user_error:
    return "user_error";
  case error_class::limitation:
    return "limitation";
  case error_class::unknown_op:
    return "unknown_op";
  }
  return "user_error";
}

diagnostic make_diagnostic(std::string_view code, std::string_view op, error_class cls,
                           std::string title, std::string message, std::string hint) {
  diagnostic d;
  d.level = severity::error;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.add_field("op", std::string(op));
  d.add_field("class", std::string(to_string(cls)));
  return d;
}

} // namespace tdiag::dtensor
