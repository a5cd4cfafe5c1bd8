// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The report model: every finding of the toolkit (a failed device assertion, a bad sharding, a
// leak) is a tdiag::diagnostic in a tdiag::report. Emitters and the JSON reader live in
// report_io.hpp; this header is the plain data model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

// Memberwise equality in C++20 builds. Device-facing translation units (nvcc and hipcc default to
// C++17, and so do PyTorch extensions) include this header through error.hpp and stacktrace.hpp;
// they never compare reports, so there the operators are left out.
#if __cplusplus >= 202002L
#  define TDIAG_DETAIL_DEFAULTED_EQ(type)                                                          \
    friend bool operator==(const type&, const type&) = default;
#else
#  define TDIAG_DETAIL_DEFAULTED_EQ(type)
#endif

namespace tdiag {

enum class severity : std::uint8_t { note, warning, error };

/// "note", "warning" or "error".
[[nodiscard]] std::string_view to_string(severity level) noexcept;
/// The inverse of to_string(); std::nullopt for any other text.
[[nodiscard]] std::optional<severity> parse_severity(std::string_view text) noexcept;

/// A typed value of a diagnostic field: `index=17`, `block=[3,0,0]`, `kernel="gather<float>"`.
/// Integers and floating-point numbers stay distinct through JSON (floats always carry a
/// decimal point or exponent; NaN and infinities are written as the strings "nan", "inf",
/// "-inf" inside a {"float": ...} wrapper).
struct field_value {
  using list = std::vector<field_value>;
  std::variant<bool, std::int64_t, double, std::string, list> value;

  field_value() : value(std::int64_t{0}) {}
  field_value(bool v) : value(v) {}
  field_value(int v) : value(std::int64_t{v}) {}
  field_value(long v) : value(std::int64_t{v}) {}
  field_value(long long v) : value(std::int64_t{v}) {}
  field_value(unsigned v) : value(std::int64_t{v}) {}
  field_value(unsigned long v) : value(static_cast<std::int64_t>(v)) {}
  field_value(unsigned long long v) : value(static_cast<std::int64_t>(v)) {}
  field_value(double v) : value(v) {}
  field_value(float v) : value(double{v}) {}
  field_value(std::string v) : value(std::move(v)) {}
  field_value(std::string_view v) : value(std::string(v)) {}
  field_value(const char* v) : value(std::string(v)) {}
  field_value(list v) : value(std::move(v)) {}

  TDIAG_DETAIL_DEFAULTED_EQ(field_value)
};

struct field {
  std::string name;
  field_value value;
  TDIAG_DETAIL_DEFAULTED_EQ(field)
};

struct source_location {
  std::string file;         ///< empty when unknown
  std::uint32_t line = 0;   ///< 1-based; 0 when unknown
  std::uint32_t column = 0; ///< 1-based; 0 when unknown
  std::string function;
  [[nodiscard]] bool known() const noexcept { return !file.empty(); }
  TDIAG_DETAIL_DEFAULTED_EQ(source_location)
};

struct stack_frame {
  std::string function;
  std::string file;
  std::uint32_t line = 0;
  std::string module;
  std::uint64_t address = 0;
  TDIAG_DETAIL_DEFAULTED_EQ(stack_frame)
};

struct related_location {
  source_location location;
  std::string message;
  TDIAG_DETAIL_DEFAULTED_EQ(related_location)
};

/// One finding. `code` is stable across releases (TDIAG-DSA-001, TDIAG-DT-012, ...): CI systems
/// and suppressions key on it; `title` is a short summary and `message` the full sentence.
struct diagnostic {
  severity level = severity::error;
  std::string code;
  std::string title;
  std::string message;
  source_location location;
  std::vector<field> fields;
  std::vector<std::string> notes;
  std::string hint; ///< how to fix it; empty when there is nothing useful to say
  std::vector<related_location> related;
  std::vector<stack_frame> stack;

  /// Appends a field (fields keep their insertion order through every format).
  diagnostic& add_field(std::string name, field_value value) {
    fields.push_back({std::move(name), std::move(value)});
    return *this;
  }
  /// The first field called `name`, or nullptr.
  [[nodiscard]] const field_value* find_field(std::string_view name) const noexcept;

  TDIAG_DETAIL_DEFAULTED_EQ(diagnostic)
};

struct report_metadata {
  std::string tool = "tensordiag";
  std::string version; ///< the toolkit's version; filled by make_report_metadata()
  std::string time;    ///< RFC 3339 UTC, e.g. 2026-12-02T13:14:15Z
  std::string host;
  std::int64_t pid = 0;
  std::optional<std::int64_t> rank;   ///< distributed rank, when known
  std::optional<std::int64_t> device; ///< GPU ordinal, when the report is about one device
  TDIAG_DETAIL_DEFAULTED_EQ(report_metadata)
};

/// Metadata for a report made by this process now: version, time, host name, pid, and the rank
/// its launcher set (TDIAG_RANK, then RANK, OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID).
[[nodiscard]] report_metadata make_report_metadata(std::string tool = "tensordiag");

struct report {
  report_metadata metadata;
  std::vector<diagnostic> diagnostics;

  [[nodiscard]] std::size_t count(severity level) const noexcept;
  [[nodiscard]] bool has_errors() const noexcept { return count(severity::error) != 0; }

  TDIAG_DETAIL_DEFAULTED_EQ(report)
};

} // namespace tdiag

#undef TDIAG_DETAIL_DEFAULTED_EQ
