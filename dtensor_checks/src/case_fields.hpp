// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The typed field readers of the case format (case_io.cpp): each throws tdiag::input_error
// (TDIAG-DT-020) naming the field when a value has the wrong type or range. Internal.
#pragma once

#include <tensordiag/dtensor_checks/case_io.hpp>

#include <fmt/format.h>
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor::case_json {

namespace od = simdjson::ondemand;

/// Bounds that keep every later computation (numel, local views) far from overflow.
inline constexpr std::int64_t max_dim_size = std::int64_t{1} << 40;
inline constexpr std::size_t max_list = 4096;

[[noreturn]] void malformed(std::string message);

/// True for JSON null: an optional field written as null (Python's None) is absent.
[[nodiscard]] inline bool is_null(od::value& v) {
  bool null = false;
  return v.is_null().get(null) == simdjson::SUCCESS && null;
}

/// Calls `on(key, value)` for every member of the object `v` named `what`.
template <typename OnField> void for_each_field(od::value v, std::string_view what, OnField on) {
  od::object obj;
  if (v.get_object().get(obj) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be an object", what));
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS)
      malformed(fmt::format("{} has a bad key", what));
    od::value val;
    if (field.value().get(val) != simdjson::SUCCESS)
      malformed(fmt::format("{}.{} is not valid JSON", what, key));
    on(key, val);
  }
}

/// Calls `on(value)` for every element of the array `v` named `what`, which must be `expected`
/// (`a list of integers`).
template <typename OnItem>
void for_each_item(od::value v, std::string_view what, std::string_view expected, OnItem on) {
  od::array arr;
  if (v.get_array().get(arr) != simdjson::SUCCESS)
    malformed(fmt::format("{} must be {}", what, expected));
  for (auto item : arr) {
    od::value x;
    if (item.get(x) != simdjson::SUCCESS)
      malformed(fmt::format("{} is not valid JSON", what));
    on(x);
  }
}

[[nodiscard]] std::int64_t get_int(od::value v, std::string_view what);
/// A list of integers within ±max_dim_size (non-negative when `sizes`).
[[nodiscard]] std::vector<std::int64_t> get_ints(od::value v, std::string_view what, bool sizes);
[[nodiscard]] std::string_view get_string(od::value v, std::string_view what);
[[nodiscard]] placement get_placement(od::value v, std::string_view what);
[[nodiscard]] placement_list get_placements(od::value v, std::string_view what);
[[nodiscard]] std::vector<std::string> get_strings(od::value v, std::string_view what);

/// `source`: {"file", "line", "function", "code"}.
[[nodiscard]] source_frame get_source(od::value v);
/// `redistributions`: a list of {"arg", "item"?, "mesh_dim", "from", "to", "collective",
/// "bytes_per_rank"}; indices are checked against the call by check_recording().
[[nodiscard]] std::vector<recorded_redistribution> get_redistributions(od::value v);

/// `collective` (one object) or `collectives` (a list of them): {"kind", "bytes_per_rank"?,
/// "op"?, ...}; other members (group, mesh, dtype) are skipped.
[[nodiscard]] issued_collective get_collective(od::value v, std::string_view what);
[[nodiscard]] std::vector<issued_collective> get_collectives(od::value v);

/// Checks what only the whole line can tell: mesh dim names and redistribution indices fit the
/// call, `calls` is positive.
void check_recording(const dtensor_case& c);

} // namespace tdiag::dtensor::case_json
