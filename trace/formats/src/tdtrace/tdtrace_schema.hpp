// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the column schema of each event kind in a .tdtrace chunk (docs/trace-format.md,
// "Event sections"), derived from event_fields.hpp: which bytes of the record each column holds
// and how it is coded. The column order is part of the file format: append new fields only.
#pragma once

#include <tensordiag/trace/event_fields.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tdiag::trace::detail {

using mode = field_coding;
struct field_desc {
  std::uint16_t offset;
  std::uint8_t width;
  bool is_signed;
  mode how;
  std::uint8_t ref; // relative: index of the earlier column subtracted
};

/// The columns of `Record` in a chunk: one per field of event_fields<Record>, one per element of
/// an array field, in table order.
template <typename Record> constexpr std::size_t column_count() {
  std::size_t n = 0;
  for (const auto& f : event_fields<Record>)
    n += f.count;
  return n;
}
template <typename Record> constexpr auto schema() {
  constexpr auto& fields = event_fields<Record>;
  std::array<field_desc, column_count<Record>()> columns{};
  std::array<std::uint8_t, fields.size()> first_column{};
  std::size_t c = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const field_info& f = fields[i];
    first_column[i] = static_cast<std::uint8_t>(c);
    for (std::size_t e = 0; e < f.count; ++e)
      // Signed as std::is_signed_v, which the format was defined with: a float's bits are
      // sign-extended like an integer's.
      columns[c++] = {static_cast<std::uint16_t>(f.offset + e * f.width), f.width,
                      f.is_signed() || f.is_float(), f.coding,
                      f.coding == mode::relative ? first_column[f.relative_to] : std::uint8_t{0}};
  }
  return columns;
}

// Fixed-size memcpy per width: a variable-size memcpy is a library call per field.
inline std::uint64_t load_field(const std::byte* record, const field_desc& f) noexcept {
  const std::byte* p = record + f.offset;
  switch (f.width) {
  case 1: {
    std::uint8_t v;
    std::memcpy(&v, p, 1);
    return f.is_signed ? static_cast<std::uint64_t>(static_cast<std::int8_t>(v)) : v;
  }
  case 2: {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return f.is_signed ? static_cast<std::uint64_t>(static_cast<std::int16_t>(v)) : v;
  }
  case 4: {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return f.is_signed ? static_cast<std::uint64_t>(static_cast<std::int32_t>(v)) : v;
  }
  default: {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}
inline void store_field(std::byte* record, const field_desc& f, std::uint64_t v) noexcept {
  std::byte* p = record + f.offset;
  switch (f.width) {
  case 1: {
    const auto n = static_cast<std::uint8_t>(v);
    std::memcpy(p, &n, 1);
    break;
  }
  case 2: {
    const auto n = static_cast<std::uint16_t>(v);
    std::memcpy(p, &n, 2);
    break;
  }
  case 4: {
    const auto n = static_cast<std::uint32_t>(v);
    std::memcpy(p, &n, 4);
    break;
  }
  default:
    std::memcpy(p, &v, 8);
    break;
  }
}

} // namespace tdiag::trace::detail
