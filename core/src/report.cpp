// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report.hpp>
#include <tensordiag/core/version.hpp>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace tdiag {

std::string_view to_string(severity level) noexcept {
  switch (level) {
  case severity::note:
    return "note";
  case severity::warning:
    return "warning";
  case severity::error:
    return "error";
  }
  return "error";
}

std::optional<severity> parse_severity(std::string_view text) noexcept {
  if (text == "note")
    return severity::note;
  if (text == "warning")
    return severity::warning;
  if (text == "error")
    return severity::error;
  return std::nullopt;
}

const field_value* diagnostic::find_field(std::string_view name) const noexcept {
  const auto it =
      std::find_if(fields.begin(), fields.end(), [&](const field& f) { return f.name == name; });
  return it == fields.end() ? nullptr : &it->value;
}

namespace {
// The process's rank as its launcher sets it: ours, then torchrun, Open MPI, MPICH/PMI, Slurm.
std::optional<std::int64_t> rank_from_environment() {
  for (const char* name :
       {"TDIAG_RANK", "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == 0)
      continue;
    std::int64_t rank = 0;
    const char* end = value + std::strlen(value);
    const auto [ptr, ec] = std::from_chars(value, end, rank);
    if (ec == std::errc{} && ptr == end && rank >= 0)
      return rank;
  }
  return std::nullopt;
}
} // namespace

report_metadata make_report_metadata(std::string tool) {
  report_metadata meta;
  meta.tool = std::move(tool);
  meta.version = TDIAG_VERSION_STRING;
  const auto now = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now());
  meta.time = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", now);
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0)
    meta.host = host;
  meta.pid = static_cast<std::int64_t>(getpid());
  meta.rank = rank_from_environment();
  return meta;
}

std::size_t report::count(severity level) const noexcept {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [&](const diagnostic& d) { return d.level == level; }));
}

} // namespace tdiag
