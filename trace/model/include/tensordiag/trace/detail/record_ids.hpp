// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: visits the interned-id fields of each event record, so one generic loop can remap
// (merge, writer) or validate (reader) them. Which fields are ids is event_fields.hpp's `unit`.
#pragma once

#include <tensordiag/trace/event_fields.hpp>

#include <cstddef>
#include <new>
#include <type_traits>

namespace tdiag::trace::detail {

/// visit_ids(record, on_string, on_stack, on_lane): each callback receives a reference to one id
/// field of that category, in event_fields<Record> order. Compiles to the direct field accesses.
template <typename Record, typename S, typename K, typename L>
void visit_ids(Record& r, S&& str, K&& stk, L&& ln) {
  for_each_event_field<Record>([&](const field_info&, auto index) {
    constexpr field_info f = event_fields<Record>[decltype(index)::value];
    if constexpr (f.unit == field_unit::string_ref || f.unit == field_unit::stack_ref ||
                  f.unit == field_unit::lane_ref) {
      static_assert(f.count == 1 && f.width == sizeof(std::uint32_t),
                    "string, stack and lane ids are 32-bit scalars");
      // The member at f.offset is an id of this type: the pointer names that very object.
      auto& id = *std::launder(
          reinterpret_cast<std::uint32_t*>(reinterpret_cast<std::byte*>(&r) + f.offset));
      if constexpr (f.unit == field_unit::string_ref)
        str(static_cast<string_id&>(id));
      else if constexpr (f.unit == field_unit::stack_ref)
        stk(static_cast<stack_id&>(id));
      else
        ln(static_cast<lane_id&>(id));
    }
  });
}

} // namespace tdiag::trace::detail
