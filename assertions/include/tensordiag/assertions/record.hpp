// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The frozen layout shared by device code and the host: site descriptors (static, one per
// assertion, in the program image), failure records and the failure buffer header. Every struct
// is trivially copyable with fixed-width fields and checked sizes; changing one bumps
// `layout_version`. Dependency-free C++17, usable from .cu, .hip and plain C++.
#pragma once

#include <cstdint>
#include <type_traits>

namespace tdiag::assertions {

inline constexpr std::uint16_t layout_version = 1;
inline constexpr std::uint32_t buffer_magic = 0x54444641u; // "TDFA"
inline constexpr std::uint32_t max_operands = 8;

/// Type tag of one captured operand (8 raw bytes each).
enum class value_type : std::uint8_t {
  none = 0,
  i8,
  i16,
  i32,
  i64,
  u8,
  u16,
  u32,
  u64,
  f32,
  f64,
  boolean,
  pointer,
};

/// Which macro produced a site: decides how the host words the message.
enum class site_kind : std::uint8_t {
  assertion = 0, ///< TDIAG_ASSERT(cond [, fmt, values...])
  eq,
  ne,
  lt,
  le,
  gt,
  ge,    ///< TDIAG_ASSERT_EQ ... _GE(a, b)
  index, ///< TDIAG_CHECK_INDEX(i, n): 0 <= i < n
};

/// What a failing thread does after recording (also in the buffer header, set by the host).
enum class policy : std::uint32_t {
  record = 0, ///< record, stop the failing thread, keep the context usable (default)
  trap = 1,   ///< record, then trap: the launch fails
};

/// The static description of one assertion site. Lives in the program image (device global
/// memory for GPU code, .rodata for host code) and is never copied by the device: a record only
/// holds its address. The lengths let the host copy the strings out of device memory exactly.
struct site_descriptor {
  std::uint16_t version;
  site_kind kind;
  std::uint8_t operand_count; ///< values captured (after the message, if any)
  std::uint32_t line;
  std::uint32_t site_id; ///< compile-time FNV-1a of file:line:expression
  std::uint32_t reserved;
  const char* file;       ///< __FILE__
  const char* expression; ///< the macro's arguments as written: "j < n, \"bad {}\", j"
  const char* message;    ///< the format string, "" when none
  const char* function;   ///< __PRETTY_FUNCTION__ (template arguments included)
  std::uint32_t file_length;
  std::uint32_t expression_length;
  std::uint32_t message_length;
  std::uint32_t function_length;
};

/// One failure. Written by the failing thread into a claimed slot, published by storing
/// `sequence` (= claim index + 1) after a system-scope fence; 0 means empty or still in flight.
struct failure_record {
  std::uint64_t sequence;
  std::uint64_t site;         ///< address of the site_descriptor in the failing program
  std::uint64_t launch_id;    ///< 0 when the launch was not registered
  std::uint64_t timestamp_ns; ///< device clock (%globaltimer, s_memrealtime, steady_clock)
  std::uint32_t site_id;
  std::uint16_t version;
  std::uint8_t operand_count;
  std::uint8_t flags; ///< reserved for back-ends (e.g. launch id resolved by the host)
  std::uint32_t block[3];
  std::uint32_t thread[3];
  std::uint32_t sm;   ///< SM (CUDA), CU (HIP) or host CPU number
  std::uint32_t lane; ///< lane within the warp / wavefront
  value_type types[max_operands];
  std::uint64_t values[max_operands];
};

/// Exact hit count of one site since the buffer was created (monotonic; the host keeps the
/// acknowledged part). `site` is the descriptor address; 0 marks a free slot.
struct site_counter {
  std::uint64_t site;
  std::uint64_t count;
};

/// Header of a failure buffer: header, then `site_capacity` site counters, then
/// `record_capacity` records. Device code only adds (claimed, dropped, overflow, counts) and
/// compare-and-swaps (site slots); the host alone writes `acknowledged`, `policy` and `device`.
struct buffer_header {
  std::uint32_t magic;
  std::uint16_t version;
  std::uint16_t header_bytes;
  std::uint32_t record_capacity; ///< records in the ring
  std::uint32_t site_capacity;   ///< site counters (a power of two)
  std::uint32_t policy;          ///< tdiag::assertions::policy
  std::int32_t device;
  std::uint64_t claimed;        ///< failures ever recorded: the claim counter
  std::uint64_t acknowledged;   ///< claims below this were taken by the host
  std::uint64_t dropped;        ///< failures that found no free record slot
  std::uint64_t site_overflow;  ///< failures whose site found no counter slot
  std::uint64_t sites_offset;   ///< bytes from the header to the site counters
  std::uint64_t records_offset; ///< bytes from the header to the records
  std::uint64_t reserved[3];    ///< launch-slot table, trap text area (device, host): GPU back-ends
};

static_assert(std::is_trivially_copyable_v<site_descriptor>);
static_assert(std::is_trivially_copyable_v<failure_record>);
static_assert(std::is_trivially_copyable_v<buffer_header>);
static_assert(sizeof(site_descriptor) == 64, "site_descriptor layout is frozen");
static_assert(sizeof(failure_record) == 144, "failure_record layout is frozen");
static_assert(sizeof(site_counter) == 16, "site_counter layout is frozen");
static_assert(sizeof(buffer_header) == 96, "buffer_header layout is frozen");

/// The failure storage every GPU module defines for itself (assert.h: a constant-initialized
/// `__device__` variable, no host allocation). A failing thread records here when the host has not
/// bound a buffer into its module yet: a plain launch before any tensordiag call, a module loaded
/// since the last bind. The host reads it through the module's registration.
inline constexpr std::uint32_t module_fallback_records = 4;
inline constexpr std::uint32_t module_fallback_sites = 8; // a power of two
struct module_fallback {
  buffer_header header;
  site_counter sites[module_fallback_sites];
  failure_record records[module_fallback_records];
};
static_assert(std::is_trivially_copyable_v<module_fallback>);
static_assert(sizeof(module_fallback) == 800, "module_fallback layout is frozen");

/// Site text copied into host memory by a thread that is about to trap (the trap policy): after
/// the trap the context is dead and the descriptor's strings in device memory cannot be read.
/// `descriptor`'s lengths are those of the copies in `text` (file, expression, message, function,
/// each NUL-terminated, clipped to fit). `site` is stored last; 0 marks a free entry.
inline constexpr std::uint32_t trap_text_entries = 4;
inline constexpr std::uint32_t trap_text_bytes = 2048;
struct site_text_copy {
  std::uint64_t site;
  site_descriptor descriptor;
  char text[trap_text_bytes];
};
/// buffer_header::reserved[1] holds its device address, reserved[2] its host address.
struct trap_text_area {
  std::uint64_t claimed;
  std::uint64_t reserved;
  site_text_copy entries[trap_text_entries];
};
static_assert(std::is_trivially_copyable_v<trap_text_area>);
static_assert(sizeof(site_text_copy) == 2120, "site_text_copy layout is frozen");

/// Bytes of a buffer with the given capacities (site_capacity must be a power of two).
constexpr std::uint64_t buffer_bytes(std::uint32_t record_capacity, std::uint32_t site_capacity) {
  return sizeof(buffer_header) + std::uint64_t{site_capacity} * sizeof(site_counter) +
         std::uint64_t{record_capacity} * sizeof(failure_record);
}

} // namespace tdiag::assertions
