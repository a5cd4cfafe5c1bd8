// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include "import_budget.hpp"

#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/trace_select.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tdiag::trace::detail {
namespace {

// Nothing read yet (or unknown): the counts are all there is to go by.
double share(const import_progress& p) noexcept {
  return p.share_read > 0 ? std::min(p.share_read, 1.0) : 1.0;
}

std::string size_text(std::uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  return b < double(std::uint64_t{1} << 30) ? fmt::format("{:.1f} MiB", b / double(1 << 20))
                                            : fmt::format("{:.1f} GiB", b / double(1 << 30));
}

} // namespace

std::uint64_t estimated_events(const import_progress& p) noexcept {
  return static_cast<std::uint64_t>(static_cast<double>(p.events_counted) / share(p));
}

std::uint64_t estimated_bytes(const import_progress& p) noexcept {
  return static_cast<std::uint64_t>(static_cast<double>(p.bytes_so_far) / share(p));
}

void check_import_budget(const import_progress& p) {
  // A budget the user set bounds the whole import; the default one (half the memory available
  // now, which the bytes already held have left) bounds what is still to come.
  const bool from_env = std::getenv("TDIAG_MEMORY_LIMIT") != nullptr;
  const auto total = estimated_bytes(p);
  if ((from_env ? total : total - std::min(total, p.bytes_so_far)) > memory_budget())
    refuse_import(p, false);
}

void refuse_import(const import_progress& p, bool from_bad_alloc) {
  const std::uint64_t budget = memory_budget();
  const bool from_env = std::getenv("TDIAG_MEMORY_LIMIT") != nullptr;
  const auto events = std::max(estimated_events(p), p.events_counted);
  const auto bytes = std::max(estimated_bytes(p), p.bytes_so_far);
  diagnostic d;
  d.code = std::string(p.code);
  d.title = std::string(p.title);
  d.message = fmt::format(
      "{}: about {} events ({} counted in the first {:.0f}% of the file) need about {}; {} {} "
      "({}); {}",
      p.file, events, p.events_counted, share(p) * 100.0, size_text(bytes),
      from_bad_alloc ? "the allocator refused more; the budget is" : "the memory budget is",
      size_text(budget), from_env ? "TDIAG_MEMORY_LIMIT" : "half the available memory",
      over_budget_advice);
  d.add_field("file", std::string(p.file));
  d.add_field("events_counted", static_cast<std::int64_t>(p.events_counted));
  d.add_field("events_estimated", static_cast<std::int64_t>(events));
  d.add_field("bytes_needed", static_cast<std::int64_t>(bytes));
  d.add_field("budget_bytes", static_cast<std::int64_t>(budget));
  d.hint = "a .tdtrace file reopens without re-parsing and maps its rows; --device N and "
           "--window A:B open part of it";
  throw input_error(std::move(d));
}

} // namespace tdiag::trace::detail
