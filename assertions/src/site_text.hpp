// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Host-side text of an assertion site: reading its descriptor out of the program image, splitting
// the macro arguments, formatting the captured values with fmt. Not API.
#pragma once

#include <tensordiag/assertions/record.hpp>
#include <tensordiag/core/backend.hpp>
#include <tensordiag/core/report.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::assertions::detail {

/// A site descriptor with its strings copied to the host.
struct site_text {
  site_kind kind = site_kind::assertion;
  std::uint32_t line = 0;
  std::uint32_t site_id = 0;
  std::uint32_t operand_count = 0;
  std::string file, expression, message, function;
};

/// Copies the descriptor at `address` (a device address on GPUs) and its strings. Throws
/// tdiag::error when it is not a descriptor of this layout version.
[[nodiscard]] site_text read_site(const backend& owner, int device, std::uint64_t address);

/// The copy a trapping thread saved of the site at `address` (record.hpp, trap_text_area), if
/// any: the only text left once a trap has killed the context. `area` is host memory.
[[nodiscard]] std::optional<site_text> saved_site(const trap_text_area* area,
                                                  std::uint64_t address);

struct named_value {
  std::string name;
  field_value value;
};

/// What a report says about one failure of a site.
struct assertion_text {
  std::string headline;  ///< "index 17 not below 16 (TDIAG_CHECK_INDEX(j, n))"
  std::string condition; ///< "j < n" or "TDIAG_CHECK_INDEX(j, n)"
  std::vector<named_value> values;
  std::string hint;
};

/// `record` may be null (no detailed record): the headline then has no values.
[[nodiscard]] assertion_text describe(const site_text& site, const failure_record* record);

/// Splits macro arguments at top-level commas (outside (), [], {} and string literals).
[[nodiscard]] std::vector<std::string> split_arguments(std::string_view text);

/// "void gather_kernel(const T*, int) [with T = float]" -> "gather_kernel<float>";
/// "void gather_kernel<float>(float const*, int)" -> "gather_kernel<float>".
[[nodiscard]] std::string short_function_name(std::string_view pretty);

/// "(pair<a, b>)" -> "pair<a, b>".
[[nodiscard]] std::string strip_parentheses(std::string_view text);

} // namespace tdiag::assertions::detail
