// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/event_ref.hpp>

namespace tdiag::view {
namespace {

// Calls fn(record) for the record `e` names, or returns `fallback` when there is none.
template <typename Result, typename Fn>
Result visit(const trace::trace& t, event_ref e, Result fallback, Fn&& fn) {
  auto pick = [&](const auto& store) -> Result {
    if (e.index >= store.size())
      return fallback;
    return fn(store[e.index]);
  };
  switch (e.kind) {
  case event_kind::kernel:
    return pick(t.kernels);
  case event_kind::copy:
    return pick(t.copies);
  case event_kind::api:
    return pick(t.api_calls);
  case event_kind::range:
    return pick(t.ranges);
  case event_kind::marker:
    return pick(t.markers);
  case event_kind::memory:
    return pick(t.memory);
  case event_kind::assertion:
    return pick(t.assertions);
  case event_kind::none:
    break;
  }
  return fallback;
}

} // namespace

event_times times_of(const trace::trace& t, event_ref e) noexcept {
  return visit(t, e, event_times{}, [](const auto& r) {
    return event_times{trace::begin_time(r), trace::end_time(r)};
  });
}

trace::lane_id lane_of(const trace::trace& t, event_ref e) noexcept {
  return visit(t, e, trace::lane_id{0}, [](const auto& r) { return r.lane; });
}

std::string_view to_string(trace::memory_action a) noexcept {
  using trace::memory_action;
  switch (a) {
  case memory_action::alloc:
    return "alloc";
  case memory_action::free_requested:
    return "free_requested";
  case memory_action::free_completed:
    return "free_completed";
  case memory_action::segment_alloc:
    return "segment_alloc";
  case memory_action::segment_free:
    return "segment_free";
  case memory_action::segment_map:
    return "segment_map";
  case memory_action::segment_unmap:
    return "segment_unmap";
  case memory_action::pool_create:
    return "pool_create";
  case memory_action::pool_trim:
    return "pool_trim";
  case memory_action::pool_destroy:
    return "pool_destroy";
  case memory_action::oom:
    return "oom";
  case memory_action::snapshot:
    return "snapshot";
  }
  return "memory";
}

std::string_view name_of(const trace::trace& t, event_ref e) noexcept {
  switch (e.kind) {
  case event_kind::kernel:
    return e.index < t.kernels.size() ? t.name(t.kernels[e.index].name) : "";
  case event_kind::copy: {
    if (e.index >= t.copies.size())
      return "";
    const auto& c = t.copies[e.index];
    if (c.name != trace::no_string)
      return t.name(c.name);
    return c.kind == trace::copy_kind::memset ? "Memset" : "Memcpy";
  }
  case event_kind::api:
    return e.index < t.api_calls.size() ? t.name(t.api_calls[e.index].name) : "";
  case event_kind::range:
    return e.index < t.ranges.size() ? t.name(t.ranges[e.index].name) : "";
  case event_kind::marker:
    return e.index < t.markers.size() ? t.name(t.markers[e.index].name) : "";
  case event_kind::memory:
    return e.index < t.memory.size() ? to_string(t.memory[e.index].action) : "";
  case event_kind::assertion:
    return e.index < t.assertions.size() ? t.name(t.assertions[e.index].site) : "";
  case event_kind::none:
    break;
  }
  return "";
}

trace::stack_id stack_of(const trace::trace& t, event_ref e) noexcept {
  if (e.kind == event_kind::api && e.index < t.api_calls.size())
    return t.api_calls[e.index].stack;
  if (e.kind == event_kind::memory && e.index < t.memory.size())
    return t.memory[e.index].stack;
  return trace::no_stack;
}

std::string_view kind_label(const trace::trace& t, event_ref e) noexcept {
  switch (e.kind) {
  case event_kind::kernel:
    return "kernel";
  case event_kind::copy:
    return e.index < t.copies.size() && t.copies[e.index].kind == trace::copy_kind::memset
               ? "memset"
               : "memcpy";
  case event_kind::api:
    if (e.index >= t.api_calls.size())
      return "api";
    switch (t.api_calls[e.index].kind) {
    case trace::api_kind::runtime:
      return "runtime call";
    case trace::api_kind::driver:
      return "driver call";
    case trace::api_kind::cpu_op:
      return "cpu op";
    case trace::api_kind::python:
      return "python";
    case trace::api_kind::other:
      return "host range";
    }
    return "api";
  case event_kind::range:
    return "range";
  case event_kind::marker:
    return "marker";
  case event_kind::memory:
    return "memory";
  case event_kind::assertion:
    return "assertion failure";
  case event_kind::none:
    break;
  }
  return "";
}

} // namespace tdiag::view
