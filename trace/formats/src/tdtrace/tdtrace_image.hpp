// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the row image, the .tdtrace layout a reopen maps instead of decoding
// (docs/trace-format.md, "Row image"). Each event kind's finalized rows are stored raw, page
// aligned, with their lane index; one zstd chunk after them holds the tables and the directory
// that says where each block is.
#pragma once

#include <tensordiag/trace/tdtrace_writer.hpp>
#include <tensordiag/trace/trace.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tdtrace_schema.hpp"

namespace tdiag::trace::detail {

/// One event kind's rows in the file.
struct row_block {
  std::uint8_t kind = 0; ///< event kind index (kernels 0 ... counters 8), as in section 16 + k
  std::uint32_t record_size = 0; ///< sizeof the record in the writing build
  std::uint64_t layout = 0;      ///< row_layout<Record>() of the writing build
  std::uint64_t count = 0;
  std::uint64_t offset = 0;                    ///< file offset, a multiple of row_alignment
  std::vector<std::size_t> lane_offsets;       ///< lane_count + 1 entries
  std::vector<std::int64_t> lane_max_duration; ///< lane_count entries
  std::optional<std::uint64_t> checksum;       ///< row_checksum of its rows (minor 2 on)
};

/// A 64-bit checksum of a row block's bytes, fed in pieces of any size: four lanes of 8-byte
/// words, multiply-rotate rounds (as xxHash64's), so a reopen checks rows at memory speed and
/// a flipped bit in any row is found. Not cryptographic: it finds damage, not forgery.
class row_checksum {
public:
  void update(std::span<const std::byte> bytes) noexcept;
  [[nodiscard]] std::uint64_t digest() const noexcept;

private:
  std::uint64_t lanes_[4] = {0x9E3779B185EBCA87u, 0xC2B2AE3D27D4EB4Fu, 0x165667B19E3779F9u,
                             0x85EBCA77C2B2AE63u};
  std::byte pending_[32] = {};
  std::size_t pending_size_ = 0;
  std::uint64_t total_ = 0;
};

/// The body of section 7 in the row image's table chunk.
struct row_directory {
  std::vector<row_block> blocks;
  std::vector<sync_wait> sync_waits;         ///< trace::sync_waits, indexes into the range rows
  std::vector<collective_info> collectives;  ///< trace::collectives, in correlation order
  std::vector<memory_detail> memory_details; ///< trace::memory_details (minor 3 on)
};

[[nodiscard]] std::string encode_row_directory(const row_directory& directory);
/// Throws `malformed`. `newer_minor`: the file's minor version is above image_version_minor,
/// so what follows the parts this build knows is a newer writer's and is skipped, as unknown
/// chunk sections are.
[[nodiscard]] row_directory decode_row_directory(std::span<const std::byte> body,
                                                 bool newer_minor = false);

/// A fingerprint of a record's in-memory layout (its size and every schema field's offset, width
/// and signedness): rows written by a build with another layout are refused, never misread.
template <typename Record> [[nodiscard]] constexpr std::uint64_t row_layout() noexcept {
  std::uint64_t h = 0xcbf29ce484222325u; // FNV-1a
  auto mix = [&](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 0x100000001b3u;
    }
  };
  mix(sizeof(Record));
  for (const auto& f : schema<Record>()) {
    mix(f.offset);
    mix(f.width);
    mix(f.is_signed ? 1 : 0);
  }
  return h;
}

class guarded_map;

/// Bytes of the file, kept alive by `keeper` (a mapping, or a copy); `mapping` is the mapping,
/// whose changed() says the file shrank under it (its bytes from there read as zeros).
struct row_bytes {
  std::span<const std::byte> bytes;
  std::shared_ptr<const void> keeper;
  const guarded_map* mapping = nullptr;
};
/// Hands out `size` bytes at `offset` (in range: the caller checked). Throws `malformed`.
using row_source = std::function<row_bytes(std::uint64_t offset, std::uint64_t size)>;
/// The rows of the regular file `path` ("-" is standard input, never a file of that name),
/// `file_size` bytes, opened now: read into memory on first use when the file is smaller than
/// copied_rows_below (a copy cannot fault when another process truncates the file), else mapped
/// once, read-only and private, its size checked again after mapping and before any page is
/// touched. A file that is not `file_size` bytes any more is refused ("it changed size"); one
/// truncated later reads as zeros past its new end, never SIGBUS (guarded_map.hpp).
[[nodiscard]] row_source mapped_rows(const std::filesystem::path& path, std::uint64_t file_size);
/// Below this size a row image's rows are copied, not mapped (see mapped_rows).
inline constexpr std::uint64_t copied_rows_below = std::uint64_t{64} << 20;
/// Copies out of `bytes` (bytes in memory have no lifetime the trace could share).
[[nodiscard]] row_source copied_rows(std::span<const std::byte> bytes);

/// Makes `into`'s stores views of the rows `directory` describes, and sets its sync waits;
/// `into` holds the table chunk's tables and no events. Every block must end by `rows_end`, and
/// match its checksum where it has one and `verify_checksums` (salvage reads turn it off).
/// Throws `malformed` saying what is wrong, leaving `into`'s stores empty.
void adopt_row_image(std::span<const std::byte> directory, const row_source& rows,
                     std::uint64_t rows_end, bool verify_checksums, trace& into,
                     bool newer_minor = false);

/// Writes `t` (finalized first on a copy when it is not) as a row image. Throws like
/// write_tdtrace(). `options.compression_level` applies to the table chunk.
void write_row_image(const std::filesystem::path& path, const trace& t,
                     const tdtrace_writer_options& options);

} // namespace tdiag::trace::detail
