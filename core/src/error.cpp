// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/printable.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace tdiag {
namespace {
// An error's message is one line whatever outside text it quotes (a file name with a newline, a
// 10 MB value): escaped and cut here, the one place every thrown diagnostic passes.
tdiag::report one_line_messages(tdiag::report r) {
  for (auto& d : r.diagnostics) {
    d.message = printable(d.message, error_message_max_bytes);
    d.location.file = printable(d.location.file);
  }
  return r;
}

std::string first_message(const tdiag::report& r) {
  if (r.diagnostics.empty())
    return "tensordiag error (empty report)";
  const auto& d = r.diagnostics.front();
  return d.message.empty() ? d.title : d.message;
}
} // namespace

error::error(tdiag::report r)
    : std::runtime_error(first_message(r = one_line_messages(std::move(r)))),
      report_(std::move(r)) {}

error::error(diagnostic d)
    : error([&] {
        tdiag::report r;
        r.metadata = make_report_metadata();
        r.diagnostics.push_back(std::move(d));
        return r;
      }()) {}

namespace detail {
void assert_fail(const char* condition, const char* message, const char* file, int line) {
  // An internal invariant broke: a tensordiag bug, not the user's. Say so plainly and stop.
  fmt::print(stderr, "tensordiag internal error: {} ({}) at {}:{}\n", message, condition, file,
             line);
  std::fflush(stderr);
  std::abort();
}
} // namespace detail

void throw_input_error(std::string_view code, std::string title, std::string message,
                       std::string hint, std::vector<field> fields) {
  diagnostic d;
  d.code = std::string(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.fields = std::move(fields);
  d.hint = std::move(hint);
  throw input_error(std::move(d));
}

} // namespace tdiag
