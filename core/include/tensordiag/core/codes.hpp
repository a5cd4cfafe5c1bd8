// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The registry of core's stable diagnostic codes (TDIAG-CORE-NNN), and the shape every
// library's registry shares: `<lib>/include/tensordiag/<lib>/codes.hpp` holds one named
// constant per code and a constexpr table of (code, title), with retired codes as aliases of
// the code that replaced them. docs/error-codes.md lists every code; tests/core/codes_test.cpp
// checks that codes are unique across libraries, documented, and the only ones in the sources.
#pragma once

#include <cstddef>
#include <string_view>

namespace tdiag {

/// One stable code and its title; for a retired code, `alias_of` names the code that replaced
/// it (reports written before the change keep their old code, and readers map it).
struct code_entry {
  std::string_view code;
  std::string_view title;
  std::string_view alias_of = {};
};

/// The current code for `code` in `table`: the replacement of an alias, else `code` itself.
template <std::size_t N>
[[nodiscard]] constexpr std::string_view canonical_code(const code_entry (&table)[N],
                                                        std::string_view code) noexcept {
  for (const auto& e : table)
    if (e.code == code && !e.alias_of.empty())
      return e.alias_of;
  return code;
}

namespace codes {
inline constexpr std::string_view invalid_json = "TDIAG-CORE-001";
inline constexpr std::string_view unsupported_schema = "TDIAG-CORE-002";
inline constexpr std::string_view malformed_report = "TDIAG-CORE-003";
inline constexpr std::string_view cannot_read = "TDIAG-CORE-004";
inline constexpr std::string_view cannot_write = "TDIAG-CORE-005";
inline constexpr std::string_view over_memory_budget = "TDIAG-CORE-006";
inline constexpr std::string_view bad_memory_limit = "TDIAG-CORE-007";
inline constexpr std::string_view unknown_backend = "TDIAG-CORE-010";
inline constexpr std::string_view no_device_backend = "TDIAG-CORE-011";

/// Every code of core, current codes first.
inline constexpr code_entry table[] = {
    {invalid_json, "invalid JSON"},
    {unsupported_schema, "unsupported report schema"},
    {malformed_report, "malformed report"},
    {cannot_read, "cannot read the file"},
    {cannot_write, "cannot write the file"},
    {over_memory_budget, "input exceeds the memory budget"},
    {bad_memory_limit, "TDIAG_MEMORY_LIMIT is not a size"},
    {unknown_backend, "unknown back-end"},
    {no_device_backend, "no back-end with a device"},
    {"TDIAG-BE-001", "unknown back-end", unknown_backend},
    {"TDIAG-BE-002", "no back-end with a device", no_device_backend},
};
} // namespace codes

} // namespace tdiag
