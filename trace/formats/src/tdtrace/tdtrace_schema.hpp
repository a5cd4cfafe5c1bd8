// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the column schema of each event kind in a .tdtrace chunk (docs/trace-format.md,
// "Event sections"): which record field each column holds and how it is encoded. The column
// order is part of the file format: append new fields at the end only.
#pragma once

#include <tensordiag/trace/events.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace tdiag::trace::detail {

enum class mode : std::uint8_t { plain, delta, relative, raw8 };
struct field_desc {
  std::uint16_t offset;
  std::uint8_t width;
  bool is_signed;
  mode how;
  std::uint8_t ref; // relative: index of the earlier field subtracted
};

#define TDIAG_DETAIL_FIELD(T, m, how, ref)                                                         \
  field_desc {                                                                                     \
    static_cast<std::uint16_t>(offsetof(T, m)), static_cast<std::uint8_t>(sizeof(T::m)),           \
        std::is_signed_v<decltype(T::m)>, mode::how, ref                                           \
  }
#define TDIAG_DETAIL_ELEM(T, m, i)                                                                 \
  field_desc {                                                                                     \
    static_cast<std::uint16_t>(offsetof(T, m) + (i) * sizeof(T::m[0])),                            \
        static_cast<std::uint8_t>(sizeof(T::m[0])), false, mode::plain, 0                          \
  }

// Field order is part of the format: append new fields at the end only.
template <typename T> constexpr auto schema();

template <> constexpr auto schema<kernel_event>() {
  using T = kernel_event;
  return std::array{TDIAG_DETAIL_FIELD(T, start, delta, 0),
                    TDIAG_DETAIL_FIELD(T, end, relative, 0),
                    TDIAG_DETAIL_FIELD(T, lane, delta, 0),
                    TDIAG_DETAIL_FIELD(T, name, plain, 0),
                    TDIAG_DETAIL_FIELD(T, device, plain, 0),
                    TDIAG_DETAIL_FIELD(T, context, plain, 0),
                    TDIAG_DETAIL_FIELD(T, stream, plain, 0),
                    TDIAG_DETAIL_ELEM(T, grid, 0),
                    TDIAG_DETAIL_ELEM(T, grid, 1),
                    TDIAG_DETAIL_ELEM(T, grid, 2),
                    TDIAG_DETAIL_ELEM(T, block, 0),
                    TDIAG_DETAIL_ELEM(T, block, 1),
                    TDIAG_DETAIL_ELEM(T, block, 2),
                    TDIAG_DETAIL_FIELD(T, shared_static, plain, 0),
                    TDIAG_DETAIL_FIELD(T, shared_dynamic, plain, 0),
                    TDIAG_DETAIL_FIELD(T, registers, plain, 0),
                    TDIAG_DETAIL_FIELD(T, correlation, delta, 0),
                    TDIAG_DETAIL_FIELD(T, launch_id, delta, 0)};
}
template <> constexpr auto schema<copy_event>() {
  using T = copy_event;
  return std::array{
      TDIAG_DETAIL_FIELD(T, start, delta, 0),    TDIAG_DETAIL_FIELD(T, end, relative, 0),
      TDIAG_DETAIL_FIELD(T, lane, delta, 0),     TDIAG_DETAIL_FIELD(T, name, plain, 0),
      TDIAG_DETAIL_FIELD(T, bytes, plain, 0),    TDIAG_DETAIL_FIELD(T, device, plain, 0),
      TDIAG_DETAIL_FIELD(T, context, plain, 0),  TDIAG_DETAIL_FIELD(T, stream, plain, 0),
      TDIAG_DETAIL_FIELD(T, kind, plain, 0),     TDIAG_DETAIL_FIELD(T, src_kind, plain, 0),
      TDIAG_DETAIL_FIELD(T, dst_kind, plain, 0), TDIAG_DETAIL_FIELD(T, correlation, delta, 0),
      TDIAG_DETAIL_FIELD(T, value, plain, 0),    TDIAG_DETAIL_FIELD(T, bandwidth_gbps, plain, 0)};
}
template <> constexpr auto schema<api_event>() {
  using T = api_event;
  return std::array{
      TDIAG_DETAIL_FIELD(T, start, delta, 0),       TDIAG_DETAIL_FIELD(T, end, relative, 0),
      TDIAG_DETAIL_FIELD(T, lane, delta, 0),        TDIAG_DETAIL_FIELD(T, name, plain, 0),
      TDIAG_DETAIL_FIELD(T, process, plain, 0),     TDIAG_DETAIL_FIELD(T, thread, plain, 0),
      TDIAG_DETAIL_FIELD(T, correlation, delta, 0), TDIAG_DETAIL_FIELD(T, stack, plain, 0),
      TDIAG_DETAIL_FIELD(T, kind, plain, 0),        TDIAG_DETAIL_FIELD(T, cbid, plain, 0)};
}
template <> constexpr auto schema<range_event>() {
  using T = range_event;
  return std::array{
      TDIAG_DETAIL_FIELD(T, start, delta, 0), TDIAG_DETAIL_FIELD(T, end, relative, 0),
      TDIAG_DETAIL_FIELD(T, lane, delta, 0),  TDIAG_DETAIL_FIELD(T, name, plain, 0),
      TDIAG_DETAIL_FIELD(T, kind, plain, 0),  TDIAG_DETAIL_FIELD(T, correlation, delta, 0)};
}
template <> constexpr auto schema<marker_event>() {
  using T = marker_event;
  return std::array{TDIAG_DETAIL_FIELD(T, time, delta, 0), TDIAG_DETAIL_FIELD(T, lane, delta, 0),
                    TDIAG_DETAIL_FIELD(T, name, plain, 0),
                    TDIAG_DETAIL_FIELD(T, category, plain, 0)};
}
template <> constexpr auto schema<memory_event>() {
  using T = memory_event;
  return std::array{TDIAG_DETAIL_FIELD(T, time, delta, 0),
                    TDIAG_DETAIL_FIELD(T, lane, delta, 0),
                    TDIAG_DETAIL_FIELD(T, action, plain, 0),
                    TDIAG_DETAIL_FIELD(T, device, plain, 0),
                    TDIAG_DETAIL_FIELD(T, stack, plain, 0),
                    TDIAG_DETAIL_FIELD(T, address, delta, 0),
                    TDIAG_DETAIL_FIELD(T, size, plain, 0),
                    TDIAG_DETAIL_FIELD(T, stream, plain, 0),
                    TDIAG_DETAIL_FIELD(T, pool, plain, 0),
                    TDIAG_DETAIL_FIELD(T, device_free, plain, 0),
                    TDIAG_DETAIL_FIELD(T, total_allocated, delta, 0),
                    TDIAG_DETAIL_FIELD(T, total_reserved, delta, 0),
                    TDIAG_DETAIL_FIELD(T, correlation, delta, 0),
                    TDIAG_DETAIL_FIELD(T, user_metadata, plain, 0)};
}
template <> constexpr auto schema<assertion_event>() {
  using T = assertion_event;
  return std::array{
      TDIAG_DETAIL_FIELD(T, time, delta, 0),   TDIAG_DETAIL_FIELD(T, lane, delta, 0),
      TDIAG_DETAIL_FIELD(T, site, plain, 0),   TDIAG_DETAIL_FIELD(T, message, plain, 0),
      TDIAG_DETAIL_FIELD(T, device, plain, 0), TDIAG_DETAIL_ELEM(T, block, 0),
      TDIAG_DETAIL_ELEM(T, block, 1),          TDIAG_DETAIL_ELEM(T, block, 2),
      TDIAG_DETAIL_ELEM(T, thread, 0),         TDIAG_DETAIL_ELEM(T, thread, 1),
      TDIAG_DETAIL_ELEM(T, thread, 2),         TDIAG_DETAIL_FIELD(T, launch_id, delta, 0)};
}
template <> constexpr auto schema<flow_event>() {
  using T = flow_event;
  return std::array{
      TDIAG_DETAIL_FIELD(T, time, delta, 0),        TDIAG_DETAIL_FIELD(T, target_time, relative, 0),
      TDIAG_DETAIL_FIELD(T, lane, delta, 0),        TDIAG_DETAIL_FIELD(T, target_lane, plain, 0),
      TDIAG_DETAIL_FIELD(T, correlation, delta, 0), TDIAG_DETAIL_FIELD(T, kind, plain, 0)};
}
template <> constexpr auto schema<counter_event>() {
  using T = counter_event;
  return std::array{TDIAG_DETAIL_FIELD(T, time, delta, 0), TDIAG_DETAIL_FIELD(T, lane, delta, 0),
                    TDIAG_DETAIL_FIELD(T, name, plain, 0), TDIAG_DETAIL_FIELD(T, value, raw8, 0)};
}
// Not an event store: trace::sync_waits, its range_index local to the chunk.
template <> constexpr auto schema<sync_wait>() {
  using T = sync_wait;
  return std::array{TDIAG_DETAIL_FIELD(T, range_index, delta, 0),
                    TDIAG_DETAIL_FIELD(T, record_correlation, plain, 0),
                    TDIAG_DETAIL_FIELD(T, stream, plain, 0)};
}
// Not an event store: trace::collectives, keyed by the kernel's correlation id.
template <> constexpr auto schema<collective_info>() {
  using T = collective_info;
  return std::array{
      TDIAG_DETAIL_FIELD(T, correlation, delta, 0), TDIAG_DETAIL_FIELD(T, group, plain, 0),
      TDIAG_DETAIL_FIELD(T, group_ranks, plain, 0), TDIAG_DETAIL_FIELD(T, collective, plain, 0),
      TDIAG_DETAIL_FIELD(T, group_size, plain, 0),  TDIAG_DETAIL_FIELD(T, seq, plain, 0)};
}
#undef TDIAG_DETAIL_FIELD
#undef TDIAG_DETAIL_ELEM

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
