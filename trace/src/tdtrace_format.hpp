// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the byte layout of .tdtrace files (docs/trace-format.md is the reference; keep both
// in step), little-endian helpers, varints, and the chunk payload codec.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>

namespace tdiag::trace::detail {

inline constexpr char file_magic[8] = {'T', 'D', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr char trailer_magic[8] = {'T', 'D', 'T', 'R', 'E', 'N', 'D', '\0'};
inline constexpr std::uint32_t chunk_magic = 0x4B434454u;  // "TDCK"
inline constexpr std::uint32_t footer_magic = 0x54464454u; // "TDFT"
inline constexpr std::uint16_t version_major = 1;
inline constexpr std::uint16_t version_minor = 1; // 1: the sync waits section (kind 9)
inline constexpr std::size_t file_header_size = 32;
inline constexpr std::size_t chunk_header_size = 48;
inline constexpr std::size_t footer_entry_size = 32;
inline constexpr std::size_t trailer_size = 24;
/// Upper bound on one chunk's payload, compressed or not: a reader refuses larger claims
/// (protects against corrupted sizes asking for gigabytes).
inline constexpr std::uint32_t max_chunk_payload = 256u << 20;

// Section types inside a chunk payload.
enum section : std::uint8_t {
  section_strings = 1,
  section_frames = 2,
  section_stacks = 3,
  section_lanes = 4,
  section_metadata = 5,
  section_allocator_state = 6,
  section_events = 16, // + kind index (kernels 0 ... counters 8, trace::sync_waits 9)
};

struct chunk_header {
  std::uint32_t sequence = 0;
  std::uint32_t compressed_size = 0;
  std::uint32_t uncompressed_size = 0;
  std::uint32_t event_count = 0;
  std::uint32_t payload_crc = 0;
  std::int64_t t_min = 0;
  std::int64_t t_max = 0;
};

struct footer_entry {
  std::uint64_t offset = 0;
  std::uint32_t compressed_size = 0;
  std::uint32_t event_count = 0;
  std::int64_t t_min = 0;
  std::int64_t t_max = 0;
};

/// Thrown by the codec for a malformed payload; the reader turns it into a diagnostic.
struct malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// --- little-endian fixed-width -------------------------------------------------------------
template <typename T> void put_le(std::string& out, T v) {
  auto u = static_cast<std::uint64_t>(v);
  for (std::size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((u >> (8 * i)) & 0xFF));
}
template <typename T> [[nodiscard]] T get_le(const std::byte* p) noexcept {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i)
    u |= static_cast<std::uint64_t>(p[i]) << (8 * i);
  return static_cast<T>(u);
}

/// zlib's CRC-32 (ISO-HDLC polynomial) of `bytes`.
[[nodiscard]] std::uint32_t crc32_of(std::span<const std::byte> bytes) noexcept;

[[nodiscard]] std::string encode_chunk_header(const chunk_header& h);
/// Parses and checks magic and (when verify_crc) the header CRC; false when either is wrong.
[[nodiscard]] bool decode_chunk_header(std::span<const std::byte> bytes, chunk_header& h,
                                       bool verify_crc = true) noexcept;

// --- chunk payload ------------------------------------------------------------------------
/// Encodes every table, store, the allocator state and the metadata of `chunk` (whose tables
/// hold exactly what it references) as an uncompressed payload. Stores are written in their
/// current order; finalize() first for the best compression.
[[nodiscard]] std::string encode_chunk(const trace& chunk);

/// Decodes a payload and appends its content to `into`, re-interning ids. Throws `malformed`
/// without changing `into`'s events when the payload is inconsistent (it may leave unused
/// interned strings). The chunk's metadata, if any, replaces into.metadata's fields.
void decode_chunk(std::span<const std::byte> payload, trace& into);

} // namespace tdiag::trace::detail
