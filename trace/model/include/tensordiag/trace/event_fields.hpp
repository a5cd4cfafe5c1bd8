// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Every field of every event record, described once: its name, type, unit, .tdtrace column
// coding, Chrome argument and documentation. The .tdtrace codec (both layouts), the Chrome
// export, the Python columns and the tables of docs/trace-format.md all read these tables, so a
// field added to a record and not here fails the static_asserts below, and one added here reaches
// every consumer. The order of each table is the .tdtrace column order: append only.
#pragma once

#include <tensordiag/trace/events.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tdiag::trace {

/// The stored type of one field (of each element, for an array field).
enum class field_type : std::uint8_t { u8, u16, u32, u64, i8, i16, i32, i64, f32, f64 };

/// What a field's number means.
enum class field_unit : std::uint8_t {
  none,       ///< a count, a code, an enumeration, an id of the source
  ns,         ///< a time on the trace's axis, in nanoseconds
  bytes,      ///< a byte count or address
  gbps,       ///< GB/s
  string_ref, ///< an id into trace::strings
  stack_ref,  ///< an id into trace::stacks
  lane_ref,   ///< an id into trace::lanes
};

/// How a .tdtrace chunk codes a field's column (docs/trace-format.md, "Event sections").
enum class field_coding : std::uint8_t {
  plain,    ///< varint (zigzag when signed)
  delta,    ///< zigzag varint of the difference from the previous record's value
  relative, ///< zigzag varint of the difference from field `relative_to` of the same record
  raw8,     ///< 8 little-endian bytes
};

/// Whether the Chrome export writes a field as an argument of its event.
enum class chrome_arg : std::uint8_t {
  none,     ///< not an argument (the event's own ts, dur, pid, tid or name, or not exported)
  always,   ///< always written
  nonzero,  ///< written when not 0 (no_string for a string id)
  positive, ///< written when finite and above 0 (a float)
};

/// One field of an event record. `count` > 1 is an array field (grid x, y, z): `count` elements
/// of `width` bytes from `offset`, a column each in the .tdtrace file and in Python. Tables build
/// entries with TDIAG_DETAIL_EVENT_FIELD(record, member) and the setters below.
struct field_info {
  std::string_view name;
  std::uint16_t offset = 0;
  std::uint8_t width = 0; ///< bytes of one element
  std::uint8_t count = 1;
  field_type type = field_type::u64;
  field_unit unit = field_unit::none;
  field_coding coding = field_coding::plain;
  std::uint8_t relative_to = 0; ///< coding::relative: the index (in this table) subtracted
  chrome_arg chrome = chrome_arg::none;
  std::string_view chrome_name; ///< the Chrome (Kineto) argument name
  std::string_view doc;         ///< what the docs add, e.g. the enumerators' values

  [[nodiscard]] constexpr bool is_signed() const noexcept {
    return type >= field_type::i8 && type <= field_type::i64;
  }
  [[nodiscard]] constexpr bool is_float() const noexcept {
    return type == field_type::f32 || type == field_type::f64;
  }
  [[nodiscard]] constexpr field_info in(field_unit u) const noexcept {
    auto f = *this;
    f.unit = u;
    return f;
  }
  [[nodiscard]] constexpr field_info coded(field_coding c, std::uint8_t ref = 0) const noexcept {
    auto f = *this;
    f.coding = c;
    f.relative_to = ref;
    return f;
  }
  [[nodiscard]] constexpr field_info arg(chrome_arg when,
                                         std::string_view arg_name) const noexcept {
    auto f = *this;
    f.chrome = when;
    f.chrome_name = arg_name;
    return f;
  }
  [[nodiscard]] constexpr field_info documented(std::string_view text) const noexcept {
    auto f = *this;
    f.doc = text;
    return f;
  }
};

namespace detail {
template <typename T> [[nodiscard]] constexpr field_type field_type_of() noexcept {
  using E = std::remove_extent_t<T>;
  using V = typename std::conditional_t<std::is_enum_v<E>, std::underlying_type<E>,
                                        std::type_identity<E>>::type;
  if constexpr (std::is_same_v<V, float>)
    return field_type::f32;
  else if constexpr (std::is_same_v<V, double>)
    return field_type::f64;
  else {
    static_assert(std::is_integral_v<V> && sizeof(V) <= 8);
    constexpr int log = sizeof(V) == 1 ? 0 : sizeof(V) == 2 ? 1 : sizeof(V) == 4 ? 2 : 3;
    return static_cast<field_type>((std::is_signed_v<V> ? 4 : 0) + log);
  }
}

// True when the table describes every byte of Record but `reserved` padding bytes, once each.
template <typename Record, std::size_t N>
[[nodiscard]] constexpr bool describes_all(const std::array<field_info, N>& fields,
                                           std::size_t reserved) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const std::size_t end_i = fields[i].offset + std::size_t{fields[i].width} * fields[i].count;
    if (end_i > sizeof(Record) || fields[i].width == 0)
      return false;
    bytes += end_i - fields[i].offset;
    for (std::size_t k = 0; k < i; ++k) {
      const std::size_t end_k = fields[k].offset + std::size_t{fields[k].width} * fields[k].count;
      if (fields[i].offset < end_k && fields[k].offset < end_i)
        return false; // two entries for one member
    }
    if (fields[i].coding == field_coding::relative && fields[i].relative_to >= i)
      return false; // a column is decoded from earlier ones only
  }
  return bytes + reserved == sizeof(Record);
}

template <typename Member>
[[nodiscard]] constexpr field_info make_field(std::string_view name, std::size_t offset) noexcept {
  field_info f;
  f.name = name;
  f.offset = static_cast<std::uint16_t>(offset);
  f.width = static_cast<std::uint8_t>(sizeof(std::remove_extent_t<Member>));
  f.count = static_cast<std::uint8_t>(std::is_array_v<Member> ? std::extent_v<Member> : 1);
  f.type = field_type_of<Member>();
  return f;
}
} // namespace detail

// offsetof needs the member's name: the helper names it once per entry (no list macro).
#define TDIAG_DETAIL_EVENT_FIELD(T, member)                                                        \
  ::tdiag::trace::detail::make_field<decltype(T::member)>(#member, offsetof(T, member))

/// The fields of `Record` in .tdtrace column order; defined for each event kind and for the side
/// tables sync_wait and collective_info.
template <typename Record> inline constexpr std::array<field_info, 0> event_fields{};

namespace detail::fields {
using enum field_unit;
using enum field_coding;
constexpr auto always = chrome_arg::always;
constexpr auto nonzero = chrome_arg::nonzero;
constexpr auto positive = chrome_arg::positive;
constexpr std::string_view memory_kinds = "CUPTI memory kinds: 0 unknown, 1 pageable, 2 pinned, "
                                          "3 device, 4 array, 5 managed, 6 device_static, "
                                          "7 managed_static";
constexpr std::string_view memory_actions_doc =
    "0 alloc, 1 free_requested, 2 free_completed, 3 segment_alloc, 4 segment_free, 5 segment_map, "
    "6 segment_unmap, 7 pool_create, 8 pool_trim, 9 pool_destroy, 10 oom, 11 snapshot";
} // namespace detail::fields

#define TDIAG_DETAIL_F(member) TDIAG_DETAIL_EVENT_FIELD(T, member)

template <>
inline constexpr auto event_fields<kernel_event> = [] {
  using namespace detail::fields;
  using T = kernel_event;
  return std::array{
      TDIAG_DETAIL_F(start).in(ns).coded(delta),
      TDIAG_DETAIL_F(end).in(ns).coded(relative, 0),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(device).arg(always, "device"),
      TDIAG_DETAIL_F(context).arg(always, "context"),
      TDIAG_DETAIL_F(stream).arg(always, "stream"),
      TDIAG_DETAIL_F(grid).arg(always, "grid"),
      TDIAG_DETAIL_F(block).arg(always, "block"),
      TDIAG_DETAIL_F(shared_static).in(bytes).arg(always, "static shared memory"),
      TDIAG_DETAIL_F(shared_dynamic).in(bytes).arg(always, "dynamic shared memory"),
      TDIAG_DETAIL_F(registers).arg(always, "registers per thread").documented("per thread"),
      TDIAG_DETAIL_F(correlation).coded(delta).arg(always, "correlation"),
      TDIAG_DETAIL_F(launch_id).coded(delta).arg(nonzero, "tensordiag launch id"),
  };
}();

template <>
inline constexpr auto event_fields<copy_event> = [] {
  using namespace detail::fields;
  using T = copy_event;
  return std::array{
      TDIAG_DETAIL_F(start).in(ns).coded(delta),
      TDIAG_DETAIL_F(end).in(ns).coded(relative, 0),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(bytes).in(field_unit::bytes).arg(always, "bytes"),
      TDIAG_DETAIL_F(device).arg(always, "device"),
      TDIAG_DETAIL_F(context).arg(always, "context"),
      TDIAG_DETAIL_F(stream).arg(always, "stream"),
      TDIAG_DETAIL_F(kind).documented("0 unknown, 1 HtoD, 2 DtoH, 3 DtoD, 4 HtoH, 5 PtoP, "
                                      "6 memset"),
      TDIAG_DETAIL_F(src_kind).documented(memory_kinds),
      TDIAG_DETAIL_F(dst_kind).documented(memory_kinds),
      TDIAG_DETAIL_F(correlation).coded(delta).arg(always, "correlation"),
      TDIAG_DETAIL_F(value).documented("memset value"),
      TDIAG_DETAIL_F(bandwidth_gbps)
          .in(gbps)
          .arg(positive, "memory bandwidth (GB/s)")
          .documented("the source's own; 0 = not given"),
  };
}();

template <>
inline constexpr auto event_fields<api_event> = [] {
  using namespace detail::fields;
  using T = api_event;
  return std::array{
      TDIAG_DETAIL_F(start).in(ns).coded(delta),
      TDIAG_DETAIL_F(end).in(ns).coded(relative, 0),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(process),
      TDIAG_DETAIL_F(thread),
      TDIAG_DETAIL_F(correlation).coded(delta).arg(nonzero, "correlation"),
      TDIAG_DETAIL_F(stack).in(stack_ref),
      TDIAG_DETAIL_F(kind).documented("0 runtime, 1 driver, 2 cpu_op, 3 python, 4 other"),
      TDIAG_DETAIL_F(cbid).arg(nonzero, "cbid").documented("CUPTI callback id; 0 = unknown"),
  };
}();

template <>
inline constexpr auto event_fields<range_event> = [] {
  using namespace detail::fields;
  using T = range_event;
  return std::array{
      TDIAG_DETAIL_F(start).in(ns).coded(delta),
      TDIAG_DETAIL_F(end).in(ns).coded(relative, 0),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(kind).documented(
          "0 user_annotation, 1 gpu_annotation, 2 step, 3 external, 4 other, 5 gpu_sync"),
      TDIAG_DETAIL_F(correlation).coded(delta),
  };
}();

template <>
inline constexpr auto event_fields<marker_event> = [] {
  using namespace detail::fields;
  using T = marker_event;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(category).in(string_ref).arg(nonzero, "category"),
  };
}();

/// A memory event as it is held: what every event has, and the index of its detail.
template <>
inline constexpr auto event_fields<memory_event> = [] {
  using namespace detail::fields;
  using T = memory_event;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(action).documented(memory_actions_doc),
      TDIAG_DETAIL_F(device).documented("-1 = host"),
      TDIAG_DETAIL_F(stack).in(stack_ref),
      TDIAG_DETAIL_F(detail).documented("1 + index into the memory details; 0 = none"),
      TDIAG_DETAIL_F(address).in(bytes).coded(delta),
      TDIAG_DETAIL_F(size).in(bytes).documented("for oom the requested size"),
      TDIAG_DETAIL_F(stream),
  };
}();

/// A memory event with its detail: the columns of a chunk's memory events, and Python's.
template <>
inline constexpr auto event_fields<memory_record> = [] {
  using namespace detail::fields;
  using T = memory_record;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(action).documented(memory_actions_doc),
      TDIAG_DETAIL_F(device).documented("-1 = host"),
      TDIAG_DETAIL_F(stack).in(stack_ref),
      TDIAG_DETAIL_F(address).in(bytes).coded(delta),
      TDIAG_DETAIL_F(size).in(bytes).documented("for oom the requested size"),
      TDIAG_DETAIL_F(stream),
      TDIAG_DETAIL_F(pool),
      TDIAG_DETAIL_F(device_free).in(bytes).documented("oom only"),
      TDIAG_DETAIL_F(total_allocated).in(bytes).coded(delta).documented("-1 = unknown"),
      TDIAG_DETAIL_F(total_reserved).in(bytes).coded(delta).documented("-1 = unknown"),
      TDIAG_DETAIL_F(correlation).coded(delta),
      TDIAG_DETAIL_F(user_metadata).in(string_ref),
  };
}();

/// trace::memory_details, not an event: what some memory events carry besides the common fields.
template <>
inline constexpr auto event_fields<memory_detail> = [] {
  using namespace detail::fields;
  using T = memory_detail;
  return std::array{
      TDIAG_DETAIL_F(pool),
      TDIAG_DETAIL_F(device_free).in(bytes).documented("oom only"),
      TDIAG_DETAIL_F(total_allocated).in(bytes).documented("-1 = unknown"),
      TDIAG_DETAIL_F(total_reserved).in(bytes).documented("-1 = unknown"),
      TDIAG_DETAIL_F(correlation),
      TDIAG_DETAIL_F(user_metadata).in(string_ref),
  };
}();

template <>
inline constexpr auto event_fields<assertion_event> = [] {
  using namespace detail::fields;
  using T = assertion_event;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(site).in(string_ref).arg(always, "site"),
      TDIAG_DETAIL_F(message).in(string_ref).arg(nonzero, "message"),
      TDIAG_DETAIL_F(device).arg(always, "device"),
      TDIAG_DETAIL_F(block).arg(always, "block"),
      TDIAG_DETAIL_F(thread).arg(always, "thread"),
      TDIAG_DETAIL_F(launch_id).coded(delta).arg(always, "launch id"),
  };
}();

template <>
inline constexpr auto event_fields<flow_event> = [] {
  using namespace detail::fields;
  using T = flow_event;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(target_time).in(ns).coded(relative, 0),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(target_lane).in(lane_ref),
      TDIAG_DETAIL_F(correlation).coded(delta).documented("the flow id"),
      TDIAG_DETAIL_F(kind).documented("0 launch, 1 other"),
  };
}();

template <>
inline constexpr auto event_fields<counter_event> = [] {
  using namespace detail::fields;
  using T = counter_event;
  return std::array{
      TDIAG_DETAIL_F(time).in(ns).coded(delta),
      TDIAG_DETAIL_F(lane).in(lane_ref).coded(delta),
      TDIAG_DETAIL_F(name).in(string_ref),
      TDIAG_DETAIL_F(value).coded(raw8),
  };
}();

/// trace::sync_waits, not an event: range_index is local to a chunk.
template <>
inline constexpr auto event_fields<sync_wait> = [] {
  using namespace detail::fields;
  using T = sync_wait;
  return std::array{
      TDIAG_DETAIL_F(range_index)
          .coded(delta)
          .documented("the index of a `gpu_sync` range among the chunk's range records"),
      TDIAG_DETAIL_F(record_correlation)
          .documented("Kineto's `wait_on_cuda_event_record_corr_id`; 0 = none"),
      TDIAG_DETAIL_F(stream).documented("`wait_on_stream`; -1 = none"),
  };
}();

/// trace::collectives, not an event: the process group of an NCCL kernel, by its correlation id.
template <>
inline constexpr auto event_fields<collective_info> = [] {
  using namespace detail::fields;
  using T = collective_info;
  return std::array{
      TDIAG_DETAIL_F(correlation).coded(delta),
      TDIAG_DETAIL_F(group).in(string_ref).documented("Kineto's `Process Group Name`"),
      TDIAG_DETAIL_F(group_ranks).in(string_ref).documented("`Process Group Ranks` as written"),
      TDIAG_DETAIL_F(collective).in(string_ref).documented("`Collective name`"),
      TDIAG_DETAIL_F(group_size).documented("-1 = not given"),
      TDIAG_DETAIL_F(seq).documented("`Seq`; -1 = none"),
  };
}();

#undef TDIAG_DETAIL_F

/// Padding bytes of `Record` (its reserved members), which no table describes.
template <typename Record> inline constexpr std::size_t reserved_bytes = 0;
template <> inline constexpr std::size_t reserved_bytes<copy_event> = sizeof(copy_event::reserved0);
template <> inline constexpr std::size_t reserved_bytes<api_event> = sizeof(api_event::reserved0);
template <>
inline constexpr std::size_t reserved_bytes<range_event> = sizeof(range_event::reserved0);
template <>
inline constexpr std::size_t reserved_bytes<marker_event> = sizeof(marker_event::reserved0);
template <>
inline constexpr std::size_t reserved_bytes<memory_event> = sizeof(memory_event::reserved0) +
                                                            sizeof(memory_event::reserved1) +
                                                            sizeof(memory_event::reserved2);
template <>
inline constexpr std::size_t reserved_bytes<memory_record> = sizeof(memory_record::reserved0) +
                                                             sizeof(memory_record::reserved1);
template <> inline constexpr std::size_t reserved_bytes<flow_event> = sizeof(flow_event::reserved0);

// A member added to a record and not to its table (or described twice) stops the build here.
#define TDIAG_DETAIL_DESCRIBED(R)                                                                  \
  static_assert(detail::describes_all<R>(event_fields<R>, reserved_bytes<R>),                      \
                #R ": every member is in event_fields<" #R "> once, or in reserved_bytes")
TDIAG_DETAIL_DESCRIBED(kernel_event);
TDIAG_DETAIL_DESCRIBED(copy_event);
TDIAG_DETAIL_DESCRIBED(api_event);
TDIAG_DETAIL_DESCRIBED(range_event);
TDIAG_DETAIL_DESCRIBED(marker_event);
TDIAG_DETAIL_DESCRIBED(memory_event);
TDIAG_DETAIL_DESCRIBED(memory_record);
TDIAG_DETAIL_DESCRIBED(memory_detail);
TDIAG_DETAIL_DESCRIBED(assertion_event);
TDIAG_DETAIL_DESCRIBED(flow_event);
TDIAG_DETAIL_DESCRIBED(counter_event);
TDIAG_DETAIL_DESCRIBED(sync_wait);
TDIAG_DETAIL_DESCRIBED(collective_info);
#undef TDIAG_DETAIL_DESCRIBED

/// Calls `f(event_fields<Record>[I], std::integral_constant<std::size_t, I>{})` for each field
/// in table order, with I a compile-time index (so a consumer's code per field is specialised).
template <typename Record, typename F> constexpr void for_each_event_field(F&& f) {
  constexpr auto& fields = event_fields<Record>;
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (f(fields[I], std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<fields.size()>{});
}

/// The C++ type a field is stored as (one element of an array field).
template <field_type T> struct field_cpp_type;
template <> struct field_cpp_type<field_type::u8> { using type = std::uint8_t; };
template <> struct field_cpp_type<field_type::u16> { using type = std::uint16_t; };
template <> struct field_cpp_type<field_type::u32> { using type = std::uint32_t; };
template <> struct field_cpp_type<field_type::u64> { using type = std::uint64_t; };
template <> struct field_cpp_type<field_type::i8> { using type = std::int8_t; };
template <> struct field_cpp_type<field_type::i16> { using type = std::int16_t; };
template <> struct field_cpp_type<field_type::i32> { using type = std::int32_t; };
template <> struct field_cpp_type<field_type::i64> { using type = std::int64_t; };
template <> struct field_cpp_type<field_type::f32> { using type = float; };
template <> struct field_cpp_type<field_type::f64> { using type = double; };

/// Element `element` of field I of `r`, as its stored type (an enum as its underlying type).
template <typename Record, std::size_t I>
[[nodiscard]] auto read_field(const Record& r, std::size_t element = 0) noexcept {
  constexpr const field_info& f = event_fields<Record>[I];
  using value = typename field_cpp_type<f.type>::type;
  value v;
  std::memcpy(&v, reinterpret_cast<const std::byte*>(&r) + f.offset + element * sizeof(value),
              sizeof(value));
  return v;
}

} // namespace tdiag::trace
