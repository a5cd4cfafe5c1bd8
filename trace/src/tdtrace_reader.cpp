// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The reader trusts nothing after the file header: every chunk header carries its own CRC, every
// payload a CRC of its compressed bytes, and sizes are bounded before anything is allocated.
// Damage costs only the damaged chunk; the scan resynchronises on the next valid chunk header.
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "tdtrace_format.hpp"

namespace tdiag::trace {
namespace {

using detail::chunk_header;
using detail::footer_entry;

diagnostic make_diagnostic(severity level, std::string code, std::string title, std::string message,
                           std::string_view source) {
  diagnostic d;
  d.level = level;
  d.code = std::move(code);
  d.title = std::move(title);
  d.message = std::move(message);
  d.location.file = std::string(source);
  return d;
}

[[noreturn]] void throw_bad_file(std::string code, std::string title, std::string message,
                                 std::string_view source, std::string hint) {
  diagnostic d = make_diagnostic(severity::error, std::move(code), std::move(title),
                                 std::move(message), source);
  d.hint = std::move(hint);
  throw input_error(std::move(d));
}

struct footer_view {
  std::uint64_t offset = 0; // where the footer starts: the end of the chunk area
  std::vector<footer_entry> entries;
};

// The footer, when the file ends with a valid trailer and footer.
std::optional<footer_view> parse_footer(std::uint64_t file_size, const auto& read_at) {
  if (file_size < detail::file_header_size + detail::trailer_size)
    return std::nullopt;
  const std::uint64_t trailer_at = file_size - detail::trailer_size;
  std::vector<std::byte> trailer = read_at(trailer_at, detail::trailer_size);
  if (trailer.size() != detail::trailer_size ||
      std::memcmp(trailer.data() + 16, detail::trailer_magic, 8) != 0)
    return std::nullopt;
  const auto footer_offset = detail::get_le<std::uint64_t>(trailer.data());
  const auto count = detail::get_le<std::uint32_t>(trailer.data() + 8);
  const auto crc = detail::get_le<std::uint32_t>(trailer.data() + 12);
  if (footer_offset < detail::file_header_size || footer_offset > trailer_at ||
      trailer_at - footer_offset != 8 + std::uint64_t{count} * detail::footer_entry_size)
    return std::nullopt;
  std::vector<std::byte> footer = read_at(footer_offset, trailer_at - footer_offset);
  if (footer.size() != trailer_at - footer_offset || detail::crc32_of(footer) != crc ||
      detail::get_le<std::uint32_t>(footer.data()) != detail::footer_magic ||
      detail::get_le<std::uint32_t>(footer.data() + 4) != count)
    return std::nullopt;
  footer_view view;
  view.offset = footer_offset;
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::byte* e = footer.data() + 8 + std::size_t{i} * detail::footer_entry_size;
    view.entries.push_back({detail::get_le<std::uint64_t>(e), detail::get_le<std::uint32_t>(e + 8),
                            detail::get_le<std::uint32_t>(e + 12),
                            detail::get_le<std::int64_t>(e + 16),
                            detail::get_le<std::int64_t>(e + 24)});
  }
  return view;
}

bool overlaps(const std::optional<time_span>& range, std::int64_t t_min, std::int64_t t_max) {
  return !range || (t_max >= range->begin && t_min <= range->end);
}

// The scan over one file, whatever holds its bytes. read_at(offset, n) returns up to n bytes.
template <typename ReadAt>
tdtrace_load read_any(std::uint64_t file_size, ReadAt&& read_at, std::string_view source,
                      const tdtrace_read_options& options) {
  tdtrace_load out;
  auto& info = out.info;
  auto& warnings = out.loaded.warnings;
  info.file_bytes = file_size;

  const std::vector<std::byte> header = read_at(0, detail::file_header_size);
  if (header.size() < 8 || std::memcmp(header.data(), detail::file_magic, 8) != 0)
    throw_bad_file(std::string(codes::not_tdtrace), "not a .tdtrace file",
                   fmt::format("'{}' does not start with the .tdtrace magic", source), source,
                   "tdiag trace commands also read PyTorch snapshots and Chrome trace JSON");
  const bool verify = options.verify_checksums;
  if (header.size() < detail::file_header_size ||
      (verify && detail::get_le<std::uint32_t>(header.data() + 28) !=
                     detail::crc32_of(std::span(header).first(28))))
    throw_bad_file(std::string(codes::not_tdtrace), "damaged .tdtrace header",
                   fmt::format("the file header of '{}' is truncated or damaged", source), source,
                   "the file cannot be read without its header");
  info.version_major = detail::get_le<std::uint16_t>(header.data() + 8);
  info.version_minor = detail::get_le<std::uint16_t>(header.data() + 10);
  const auto header_size = detail::get_le<std::uint32_t>(header.data() + 12);
  if (info.version_major != detail::version_major || header_size < detail::file_header_size ||
      header_size > file_size)
    throw_bad_file(std::string(codes::unsupported_version), "unsupported .tdtrace version",
                   fmt::format("'{}' is .tdtrace version {}.{}; this build reads {}.x", source,
                               info.version_major, info.version_minor, detail::version_major),
                   source, "open it with a newer tensordiag");

  const auto footer = parse_footer(file_size, read_at);
  info.has_footer = footer.has_value();
  const std::uint64_t area_end = footer ? footer->offset : file_size;
  if (footer)
    info.chunks_in_footer = static_cast<std::uint32_t>(footer->entries.size());

  trace& result = out.loaded.trace;
  std::vector<std::byte> payload;

  // Loads the chunk at `pos` whose header is `h`; false if it was skipped as corrupted.
  auto load_chunk = [&](std::uint64_t pos, const chunk_header& h) {
    const std::vector<std::byte> compressed =
        read_at(pos + detail::chunk_header_size, h.compressed_size);
    const std::uint64_t chunk_bytes = detail::chunk_header_size + h.compressed_size;
    auto corrupted = [&](std::string code, std::string what) {
      diagnostic d = make_diagnostic(
          severity::warning, std::move(code), "corrupted chunk skipped",
          fmt::format("chunk {} at offset {} of '{}' was skipped: {}; its {} events are lost",
                      h.sequence, pos, source, what, h.event_count),
          source);
      d.add_field("offset", pos);
      d.add_field("chunk", h.sequence);
      d.add_field("events_lost", h.event_count);
      warnings.push_back(std::move(d));
      ++info.chunks_corrupted;
      info.bytes_lost += chunk_bytes;
      return false;
    };
    if (compressed.size() != h.compressed_size ||
        (verify && detail::crc32_of(compressed) != h.payload_crc))
      return corrupted(std::string(codes::chunk_checksum), "its checksum does not match");
    // The frame states its size: check it before allocating what the header claims.
    if (ZSTD_getFrameContentSize(compressed.data(), compressed.size()) != h.uncompressed_size)
      return corrupted(std::string(codes::undecodable_chunk),
                       "its zstd frame size does not match its header");
    payload.resize(h.uncompressed_size);
    const std::size_t n =
        ZSTD_decompress(payload.data(), payload.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(n) || n != h.uncompressed_size)
      return corrupted(std::string(codes::undecodable_chunk),
                       ZSTD_isError(n) ? fmt::format("zstd: {}", ZSTD_getErrorName(n))
                                       : std::string("its size does not match its header"));
    try {
      detail::decode_chunk(payload, result);
    } catch (const detail::malformed& e) {
      return corrupted(std::string(codes::undecodable_chunk),
                       fmt::format("undecodable content ({})", e.what()));
    }
    ++info.chunks_loaded;
    info.chunk_offsets.push_back(pos);
    return true;
  };
  auto plausible = [](const chunk_header& h) {
    return h.compressed_size <= detail::max_chunk_payload &&
           h.uncompressed_size <= detail::max_chunk_payload;
  };

  if (footer && options.range) {
    // Range load through the index: untouched chunks are never read.
    for (const auto& e : footer->entries) {
      if (!overlaps(options.range, e.t_min, e.t_max)) {
        ++info.chunks_out_of_range;
        continue;
      }
      chunk_header h;
      const auto hb = read_at(e.offset, detail::chunk_header_size);
      if (e.offset + detail::chunk_header_size > area_end ||
          !detail::decode_chunk_header(hb, h, verify) || !plausible(h) ||
          e.offset + detail::chunk_header_size + h.compressed_size > area_end) {
        warnings.push_back(make_diagnostic(
            severity::warning, std::string(codes::corrupted_chunk), "corrupted chunk header",
            fmt::format("the chunk the index places at offset {} of '{}' has a damaged header; "
                        "its {} events are lost",
                        e.offset, source, e.event_count),
            source));
        ++info.chunks_corrupted;
        continue;
      }
      load_chunk(e.offset, h);
    }
  } else {
    std::uint64_t pos = header_size;
    while (pos < area_end) {
      chunk_header h;
      const std::uint64_t left = area_end - pos;
      const auto hb = read_at(
          pos, static_cast<std::size_t>(std::min<std::uint64_t>(left, detail::chunk_header_size)));
      const bool header_ok = detail::decode_chunk_header(hb, h, verify) && plausible(h);
      if (header_ok && detail::chunk_header_size + std::uint64_t{h.compressed_size} > left) {
        diagnostic d = make_diagnostic(
            severity::warning, std::string(codes::truncated_chunk), "truncated chunk",
            fmt::format("'{}' ends inside chunk {} (offset {}): {} of its {} bytes are present; "
                        "its {} events are lost",
                        source, h.sequence, pos, left,
                        detail::chunk_header_size + h.compressed_size, h.event_count),
            source);
        d.add_field("offset", pos);
        d.add_field("bytes_lost", left);
        warnings.push_back(std::move(d));
        info.bytes_lost += left;
        break;
      }
      if (!header_ok) {
        if (left < detail::chunk_header_size) {
          diagnostic d = make_diagnostic(
              severity::warning, std::string(codes::truncated_chunk), "truncated chunk",
              fmt::format("'{}' ends with {} bytes of an incomplete chunk header at offset {}",
                          source, left, pos),
              source);
          d.add_field("offset", pos);
          d.add_field("bytes_lost", left);
          warnings.push_back(std::move(d));
          info.bytes_lost += left;
          break;
        }
        // Resynchronise: the next offset holding a chunk header with a valid CRC.
        std::uint64_t next = pos + 1;
        bool found = false;
        constexpr std::size_t window = 1 << 16;
        while (next < area_end && !found) {
          const auto w = read_at(next, static_cast<std::size_t>(std::min<std::uint64_t>(
                                           area_end - next, window + detail::chunk_header_size)));
          std::size_t i = 0;
          for (; i < std::min(w.size(), window); ++i) {
            chunk_header probe;
            if (w[i] == std::byte{'T'} &&
                detail::decode_chunk_header(std::span(w).subspan(i), probe, verify) &&
                plausible(probe)) {
              found = true;
              break;
            }
          }
          next += i;
          if (w.size() <= detail::chunk_header_size)
            break;
        }
        if (!found)
          next = area_end;
        diagnostic d = make_diagnostic(
            severity::warning, std::string(codes::corrupted_chunk), "corrupted data skipped",
            fmt::format("{} bytes at offset {} of '{}' hold no valid chunk header and were "
                        "skipped",
                        next - pos, pos, source),
            source);
        d.add_field("offset", pos);
        d.add_field("bytes_lost", next - pos);
        warnings.push_back(std::move(d));
        ++info.chunks_corrupted;
        info.bytes_lost += next - pos;
        pos = next;
        continue;
      }
      if (overlaps(options.range, h.t_min, h.t_max))
        load_chunk(pos, h);
      else
        ++info.chunks_out_of_range;
      pos += detail::chunk_header_size + h.compressed_size;
    }
  }

  if (!footer) {
    diagnostic d = make_diagnostic(
        severity::warning, std::string(codes::not_closed), "trace file was not closed",
        fmt::format("'{}' has no footer: its writer did not finish (crashed, killed or still "
                    "running); {} complete chunks were loaded and {} bytes were lost",
                    source, info.chunks_loaded, info.bytes_lost),
        source);
    d.add_field("chunks_loaded", info.chunks_loaded);
    d.add_field("bytes_lost", info.bytes_lost);
    d.hint = "events still in the writer's memory when it stopped are not in the file";
    warnings.push_back(std::move(d));
  } else if (info.chunks_loaded + info.chunks_corrupted + info.chunks_out_of_range <
             info.chunks_in_footer) {
    warnings.push_back(make_diagnostic(
        severity::warning, std::string(codes::chunks_missing), "chunks missing",
        fmt::format("the index of '{}' lists {} chunks but only {} were found", source,
                    info.chunks_in_footer,
                    info.chunks_loaded + info.chunks_corrupted + info.chunks_out_of_range),
        source));
  }

  auto& m = result.metadata;
  if (!m.format.empty() && m.format != "tdtrace")
    m.properties.emplace_back("recorded_format", m.format);
  m.format = "tdtrace";
  m.source_path = std::string(source);
  if (options.finalize)
    result.finalize();
  return out;
}

} // namespace

bool sniff_tdtrace(std::span<const std::byte> head) noexcept {
  return head.size() >= 8 && std::memcmp(head.data(), detail::file_magic, 8) == 0;
}

tdtrace_load read_tdtrace(std::span<const std::byte> bytes, std::string_view source_name,
                          const tdtrace_read_options& options) {
  auto read_at = [&](std::uint64_t offset, std::uint64_t n) {
    if (offset >= bytes.size())
      return std::vector<std::byte>();
    n = std::min<std::uint64_t>(n, bytes.size() - offset);
    return std::vector<std::byte>(bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                                  bytes.begin() + static_cast<std::ptrdiff_t>(offset + n));
  };
  return read_any(bytes.size(), read_at, source_name, options);
}

tdtrace_load read_tdtrace(const std::filesystem::path& path, const tdtrace_read_options& options) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!in || ec) {
    diagnostic d =
        make_diagnostic(severity::error, std::string(codes::cannot_open), "cannot open trace file",
                        fmt::format("cannot open trace file '{}'", path.string()), path.string());
    d.hint = "check the path and the file's permissions";
    throw input_error(std::move(d));
  }
  auto read_at = [&](std::uint64_t offset, std::uint64_t n) {
    std::vector<std::byte> buf;
    if (offset >= size)
      return buf;
    buf.resize(static_cast<std::size_t>(std::min<std::uint64_t>(n, size - offset)));
    in.clear();
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(reinterpret_cast<char*>(buf.data()), static_cast<std::streamsize>(buf.size()));
    buf.resize(static_cast<std::size_t>(in.gcount()));
    return buf;
  };
  return read_any(size, read_at, path.string(), options);
}

importer tdtrace_importer() {
  importer imp;
  imp.name = "tdtrace";
  imp.sniff = [](std::span<const std::byte> head) { return sniff_tdtrace(head); };
  imp.load = [](const std::filesystem::path& path, const load_options& options) {
    tdtrace_read_options o;
    o.finalize = false;
    auto loaded = read_tdtrace(path, o).loaded;
    // A capture writes API calls and kernels as CUPTI delivers them, and no flows: derive the
    // launch -> kernel arrows from their correlation ids here (flows a file carries are kept).
    loaded.trace.link_flows_by_correlation();
    if (options.finalize)
      loaded.trace.finalize();
    return loaded;
  };
  return imp;
}

} // namespace tdiag::trace
