// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// A reference to one event of a trace, whatever its kind: the selection, hover and table rows
// all carry one. The index is into the kind's event_store::all() of a finalized trace.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstdint>
#include <string_view>

namespace tdiag::view {

enum class event_kind : std::uint8_t { none, kernel, copy, api, range, marker, memory, assertion };

struct event_ref {
  event_kind kind = event_kind::none;
  std::uint32_t index = 0;
  [[nodiscard]] bool valid() const noexcept { return kind != event_kind::none; }
  friend bool operator==(const event_ref&, const event_ref&) = default;
};

/// Begin and end (ns) of the event; {0, 0} for none or an index out of range.
struct event_times {
  std::int64_t begin = 0;
  std::int64_t end = 0;
};
[[nodiscard]] event_times times_of(const trace::trace& t, event_ref e) noexcept;
/// The lane of the event (0 for none or out of range).
[[nodiscard]] trace::lane_id lane_of(const trace::trace& t, event_ref e) noexcept;
/// Display name: kernel or op name, assertion site, memory action; "" when unknown.
[[nodiscard]] std::string_view name_of(const trace::trace& t, event_ref e) noexcept;
/// The interned stack of the event (api calls, memory events), or no_stack.
[[nodiscard]] trace::stack_id stack_of(const trace::trace& t, event_ref e) noexcept;
/// "kernel", "memcpy", "runtime", "cpu op", "range", "marker", "memory", "assertion".
[[nodiscard]] std::string_view kind_label(const trace::trace& t, event_ref e) noexcept;
/// "alloc", "free_requested", ... as PyTorch spells the action.
[[nodiscard]] std::string_view to_string(trace::memory_action a) noexcept;

} // namespace tdiag::view
