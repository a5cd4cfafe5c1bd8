// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the byte layout of .tdtrace files (docs/trace-format.md is the reference; keep both
// in step), little-endian helpers, varints, and the chunk payload codec.
#pragma once

#include <tensordiag/trace/trace.hpp>

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::trace::detail {

inline constexpr char file_magic[8] = {'T', 'D', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr char trailer_magic[8] = {'T', 'D', 'T', 'R', 'E', 'N', 'D', '\0'};
inline constexpr std::uint32_t chunk_magic = 0x4B434454u;  // "TDCK"
inline constexpr std::uint32_t footer_magic = 0x54464454u; // "TDFT"
inline constexpr std::uint16_t version_major = 1;
inline constexpr std::uint16_t version_minor = 2; // 1: sync waits (kind 9); 2: collectives (10)
/// A row-image file (docs/trace-format.md, "Row image"): major 2, header flag bit 0; its rows
/// cannot be read by a 1.x reader, which then refuses the file by its major version.
inline constexpr std::uint16_t image_version_major = 2;
inline constexpr std::uint16_t image_version_minor = 3; // 1: collectives; 2: row checksums;
                                                        // 3: memory details
inline constexpr std::uint32_t header_flag_row_image = 1;
/// Row blocks of a row image start at multiples of this (the largest common page size), so a
/// reader maps them in place.
inline constexpr std::uint64_t row_alignment = 4096;
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
  section_row_image = 7, // the row-image directory (major 2 only)
  section_events = 16,   // + kind index (kernels 0 ... counters 8, trace::sync_waits 9,
                         // trace::collectives 10)
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
/// A chunk payload inflates to at most max(inflate_floor, compressed x inflate_ratio_cap)
/// bytes; a larger one is a damaged chunk, skipped before anything is allocated for it.
inline constexpr std::uint64_t inflate_floor = std::uint64_t{16} << 20;
inline constexpr std::uint64_t inflate_ratio_cap = 1024;

struct malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Bytes that do not match their stored checksum.
struct checksum_mismatch : malformed {
  using malformed::malformed;
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

// --- writing (tdtrace_writer.cpp) ---------------------------------------------------------
/// Throw tdiag::error TDIAG-TR-321 / TDIAG-TR-320 naming `path` (and strerror(err) when set).
[[noreturn]] void throw_write_error(const std::filesystem::path& path, std::string_view what,
                                    int err);
[[noreturn]] void throw_create_error(const std::filesystem::path& path, int err);
/// A zstd context at `level` with frame checksums on (free it with ZSTD_freeCCtx).
[[nodiscard]] ZSTD_CCtx* make_chunk_compressor(int level);
/// Compresses `payload` into a chunk: the chunk header (h's sizes and CRC filled in) followed by
/// the zstd frame. Throws TDIAG-TR-321 when zstd fails or the chunk exceeds max_chunk_payload.
[[nodiscard]] std::string frame_chunk(ZSTD_CCtx* cctx, std::string_view payload, chunk_header& h,
                                      const std::filesystem::path& path);

/// The 32-byte file header.
[[nodiscard]] std::string encode_file_header(std::uint16_t major, std::uint16_t minor,
                                             std::uint32_t flags, std::uint32_t chunk_target);
/// The footer listing `index` followed by the trailer; `footer_offset` is where it will start.
[[nodiscard]] std::string encode_footer(const std::vector<footer_entry>& index,
                                        std::uint64_t footer_offset);
[[nodiscard]] std::string encode_chunk_header(const chunk_header& h);
/// Parses and checks magic and (when verify_crc) the header CRC; false when either is wrong.
[[nodiscard]] bool decode_chunk_header(std::span<const std::byte> bytes, chunk_header& h,
                                       bool verify_crc = true) noexcept;

// --- chunk payload ------------------------------------------------------------------------
/// Encodes every table, store, the allocator state and the metadata of `chunk` (whose tables
/// hold exactly what it references) as an uncompressed payload. Stores are written in their
/// current order; finalize() first for the best compression.
[[nodiscard]] std::string encode_chunk(const trace& chunk);
/// The table sections of encode_chunk() alone: strings, frames, stacks, lanes, metadata and
/// the allocator state, no events.
[[nodiscard]] std::string encode_chunk_tables(const trace& chunk);

/// Decodes a payload and appends its content to `into`, re-interning ids. Throws `malformed`
/// without changing `into`'s events when the payload is inconsistent (it may leave unused
/// interned strings). The chunk's metadata, if any, replaces into.metadata's fields. A row-image
/// directory section (7) is handed back through `row_image` (pointing into `payload`) when set,
/// and skipped otherwise.
void decode_chunk(std::span<const std::byte> payload, trace& into,
                  std::span<const std::byte>* row_image = nullptr);

} // namespace tdiag::trace::detail
