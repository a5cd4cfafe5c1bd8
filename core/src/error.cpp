// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/config.hpp>
#include <tensordiag/core/error.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

namespace tdiag {
namespace {
std::string first_message(const tdiag::report& r) {
  if (r.diagnostics.empty())
    return "tensordiag error (empty report)";
  const auto& d = r.diagnostics.front();
  return d.message.empty() ? d.title : d.message;
}
} // namespace

error::error(tdiag::report r) : std::runtime_error(first_message(r)), report_(std::move(r)) {}

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

} // namespace tdiag
