// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Reads .tdtrace files (docs/trace-format.md). Every complete chunk whose checksum holds is
// loaded; a file without a footer (its writer crashed or is still running), a truncated tail or
// corrupted chunks give warnings that say what was lost, never a failed load.
#pragma once

#include <tensordiag/trace/load.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace tdiag::trace {

struct tdtrace_read_options {
  /// Load only chunks whose events overlap [range->begin, range->end] (whole chunks: events just
  /// outside the range may come too). With a footer, other chunks are not even read.
  std::optional<time_span> range; ///< ignored by a row image: its rows are all mapped anyway
  bool finalize = true;
  /// Check the header and payload CRCs (off only to salvage a damaged file, or when fuzzing
  /// the decoders behind them; zstd and the decoder still validate everything).
  bool verify_checksums = true;
};

/// What the reader found in the file.
struct tdtrace_file_info {
  std::uint16_t version_major = 0;
  std::uint16_t version_minor = 0;
  bool has_footer = false;
  std::uint64_t file_bytes = 0;
  std::uint32_t chunks_loaded = 0;
  std::uint32_t chunks_corrupted = 0;    ///< skipped: bad checksum, bad header or undecodable
  std::uint32_t chunks_out_of_range = 0; ///< not loaded because of options.range
  std::uint32_t chunks_in_footer = 0;    ///< 0 without a footer
  std::uint64_t bytes_lost = 0; ///< bytes of truncated or corrupted data that were not loaded
  std::vector<std::uint64_t> chunk_offsets; ///< file offsets of the loaded chunks
  /// A row image (version 2): the stores view the file's rows (mapped from a regular file,
  /// copied from bytes in memory) instead of decoded copies.
  bool row_image = false;
};

struct tdtrace_load {
  load_result loaded;
  tdtrace_file_info info;
};

/// True when `head` starts with the .tdtrace magic.
[[nodiscard]] bool sniff_tdtrace(std::span<const std::byte> head) noexcept;

/// Reads a file. Throws tdiag::input_error: TDIAG-TR-001 unreadable, TDIAG-TR-301 not a
/// .tdtrace file (bad magic or header), TDIAG-TR-302 unsupported major version. Damage after
/// the header of a chunked file is reported in loaded.warnings (TDIAG-TR-310..315), never
/// thrown; a damaged row image, whose rows would be unusable, throws TDIAG-TR-311/313/314.
/// A row image of a regular file stays mapped while the trace (or a copy of it) views it.
[[nodiscard]] tdtrace_load read_tdtrace(const std::filesystem::path& path,
                                        const tdtrace_read_options& options = {});
/// The same from bytes in memory; `source_name` names them in diagnostics.
[[nodiscard]] tdtrace_load read_tdtrace(std::span<const std::byte> bytes,
                                        std::string_view source_name,
                                        const tdtrace_read_options& options = {});

/// The importer entry for load_trace() ("tdtrace").
[[nodiscard]] importer tdtrace_importer();

} // namespace tdiag::trace
