// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The reader trusts nothing after the file header: every chunk header carries its own CRC, every
// payload a CRC of its compressed bytes, and sizes are bounded before anything is allocated.
// Damage costs only the damaged chunk; the scan resynchronises on the next valid chunk header.
#include <tensordiag/core/error.hpp>
#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <fmt/format.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "import_budget.hpp"
#include "tdtrace_format.hpp"
#include "tdtrace_image.hpp"

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
// One method per step: header, chunk, indexed (range) load, sequential scan, resync, summary.
template <typename ReadAt> class tdtrace_scan {
public:
  tdtrace_scan(std::uint64_t file_size, ReadAt& read_at, const detail::row_source& rows,
               std::string_view source, const tdtrace_read_options& options)
      : read_at_(read_at), rows_(rows), source_(source), options_(options),
        verify_(options.verify_checksums), info_(out_.info), warnings_(out_.loaded.warnings) {
    info_.file_bytes = file_size;
  }

  tdtrace_load run() {
    const std::uint32_t header_size = read_header();
    const auto footer = parse_footer(info_.file_bytes, read_at_);
    info_.has_footer = footer.has_value();
    area_end_ = footer ? footer->offset : info_.file_bytes;
    if (footer)
      info_.chunks_in_footer = static_cast<std::uint32_t>(footer->entries.size());
    if (info_.version_major == detail::image_version_major)
      load_image(footer);
    else if (footer && options_.range)
      load_indexed(*footer);
    else
      scan(header_size);
    summarize(footer.has_value());
    auto& m = out_.loaded.trace.metadata;
    if (!m.format.empty() && m.format != "tdtrace")
      m.properties.emplace_back("recorded_format", m.format);
    m.format = "tdtrace";
    m.source_path = std::string(source_);
    if (options_.finalize)
      out_.loaded.trace.finalize();
    return std::move(out_);
  }

private:
  // The file header; returns the header size it declares. Throws for a file that cannot be read.
  std::uint32_t read_header() {
    const std::vector<std::byte> header = read_at_(0, detail::file_header_size);
    if (header.size() < 8 || std::memcmp(header.data(), detail::file_magic, 8) != 0)
      throw_bad_file(std::string(codes::not_tdtrace), "not a .tdtrace file",
                     fmt::format("'{}' does not start with the .tdtrace magic", source_), source_,
                     "tdiag trace commands also read PyTorch snapshots and Chrome trace JSON");
    if (header.size() < detail::file_header_size ||
        (verify_ && detail::get_le<std::uint32_t>(header.data() + 28) !=
                        detail::crc32_of(std::span(header).first(28))))
      throw_bad_file(std::string(codes::not_tdtrace), "damaged .tdtrace header",
                     fmt::format("the file header of '{}' is truncated or damaged", source_),
                     source_, "the file cannot be read without its header");
    info_.version_major = detail::get_le<std::uint16_t>(header.data() + 8);
    info_.version_minor = detail::get_le<std::uint16_t>(header.data() + 10);
    const auto header_size = detail::get_le<std::uint32_t>(header.data() + 12);
    const auto flags = detail::get_le<std::uint32_t>(header.data() + 16);
    if (info_.version_major != detail::version_major &&
        !(info_.version_major == detail::image_version_major &&
          (flags & detail::header_flag_row_image) != 0))
      throw_bad_file(std::string(codes::unsupported_version), "unsupported .tdtrace version",
                     fmt::format("'{}' is .tdtrace version {}.{}; this build reads {}.x and "
                                 "{}.x row images",
                                 source_, info_.version_major, info_.version_minor,
                                 detail::version_major, detail::image_version_major),
                     source_, "open it with a newer tensordiag");
    if (header_size < detail::file_header_size || header_size > info_.file_bytes)
      throw_bad_file(std::string(codes::not_tdtrace), "damaged .tdtrace header",
                     fmt::format("the file header of '{}' declares {} bytes (at least {}, and the "
                                 "file holds {})",
                                 source_, header_size, detail::file_header_size, info_.file_bytes),
                     source_, "the file cannot be read without its header");
    return header_size;
  }

  static bool plausible(const chunk_header& h) {
    return h.compressed_size <= detail::max_chunk_payload &&
           h.uncompressed_size <= detail::max_chunk_payload;
  }

  void warn(std::string code, std::string title, std::string message, std::uint64_t offset,
            std::uint64_t bytes_lost) {
    diagnostic d = make_diagnostic(severity::warning, std::move(code), std::move(title),
                                   std::move(message), source_);
    d.add_field("offset", offset);
    d.add_field("bytes_lost", bytes_lost);
    warnings_.push_back(std::move(d));
  }

  // Loads the chunk at `pos` whose header is `h`; false if it was skipped as corrupted. A
  // row-image directory in it is handed back through `row_image` (valid until the next chunk).
  bool load_chunk(std::uint64_t pos, const chunk_header& h,
                  std::span<const std::byte>* row_image = nullptr) {
    const std::vector<std::byte> compressed =
        read_at_(pos + detail::chunk_header_size, h.compressed_size);
    const std::uint64_t chunk_bytes = detail::chunk_header_size + h.compressed_size;
    auto corrupted = [&](std::string code, std::string what) {
      diagnostic d = make_diagnostic(
          severity::warning, std::move(code), "corrupted chunk skipped",
          fmt::format("chunk {} at offset {} of '{}' was skipped: {}; its {} events are lost",
                      h.sequence, pos, source_, what, h.event_count),
          source_);
      d.add_field("offset", pos);
      d.add_field("chunk", h.sequence);
      d.add_field("events_lost", h.event_count);
      warnings_.push_back(std::move(d));
      ++info_.chunks_corrupted;
      info_.bytes_lost += chunk_bytes;
      return false;
    };
    if (compressed.size() != h.compressed_size ||
        (verify_ && detail::crc32_of(compressed) != h.payload_crc))
      return corrupted(std::string(codes::chunk_checksum), "its checksum does not match");
    // The frame states its size: check it before allocating what the header claims.
    if (ZSTD_getFrameContentSize(compressed.data(), compressed.size()) != h.uncompressed_size)
      return corrupted(std::string(codes::undecodable_chunk),
                       "its zstd frame size does not match its header");
    if (h.uncompressed_size > memory_budget())
      return corrupted(std::string(codes::undecodable_chunk),
                       "its payload is larger than the memory budget");
    // Inflation under a cap: a writer's chunk (1 MiB by default) is far below the floor, and
    // real columns do not compress 1024 to 1; 8 KiB of zeros inflating to 250 MiB are not data.
    if (h.uncompressed_size >
        std::max<std::uint64_t>(detail::inflate_floor,
                                std::uint64_t{h.compressed_size} * detail::inflate_ratio_cap))
      return corrupted(std::string(codes::undecodable_chunk),
                       fmt::format("its payload would inflate {} bytes to {} (more than {} to 1)",
                                   h.compressed_size, h.uncompressed_size,
                                   detail::inflate_ratio_cap));
    payload_.resize(h.uncompressed_size);
    const std::size_t n =
        ZSTD_decompress(payload_.data(), payload_.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(n) || n != h.uncompressed_size)
      return corrupted(std::string(codes::undecodable_chunk),
                       ZSTD_isError(n) ? fmt::format("zstd: {}", ZSTD_getErrorName(n))
                                       : std::string("its size does not match its header"));
    try {
      detail::decode_chunk(payload_, out_.loaded.trace, row_image);
    } catch (const detail::malformed& e) {
      return corrupted(std::string(codes::undecodable_chunk),
                       fmt::format("undecodable content ({})", e.what()));
    }
    ++info_.chunks_loaded;
    info_.chunk_offsets.push_back(pos);
    return true;
  }

  // A row image: its one table chunk through the footer, then the rows it describes, mapped.
  // Damage throws: without its tables or rows nothing of the file is usable.
  void load_image(const std::optional<footer_view>& footer) {
    auto refuse = [&](std::string_view code, std::string what) {
      throw_bad_file(std::string(code), "damaged .tdtrace row image",
                     fmt::format("'{}' is a .tdtrace row image and {}", source_, what), source_,
                     "convert the source trace again (tdiag trace convert SOURCE --tdtrace OUT)");
    };
    if (!footer || footer->entries.size() != 1)
      refuse(codes::truncated_chunk, "has no valid footer: it is truncated or damaged");
    const auto& e = footer->entries.front();
    chunk_header h;
    const auto hb = read_at_(e.offset, detail::chunk_header_size);
    if (e.offset + detail::chunk_header_size > area_end_ ||
        !detail::decode_chunk_header(hb, h, verify_) || !plausible(h) ||
        e.offset + detail::chunk_header_size + h.compressed_size > area_end_)
      refuse(codes::corrupted_chunk,
             fmt::format("the header of its table chunk (offset {}) is damaged", e.offset));
    std::span<const std::byte> directory;
    if (!load_chunk(e.offset, h, &directory)) {
      diagnostic d = std::move(warnings_.back());
      warnings_.pop_back();
      refuse(d.code, fmt::format("its table chunk is damaged ({})", d.message));
    }
    if (directory.empty())
      refuse(codes::undecodable_chunk, "its table chunk has no row directory");
    try {
      detail::adopt_row_image(directory, rows_, e.offset, verify_, out_.loaded.trace,
                              info_.version_minor > detail::image_version_minor);
    } catch (const detail::checksum_mismatch& bad) {
      refuse(codes::chunk_checksum, bad.what());
    } catch (const detail::malformed& bad) {
      refuse(codes::undecodable_chunk, fmt::format("its rows cannot be used: {}", bad.what()));
    }
    info_.row_image = true;
  }

  // Range load through the index: untouched chunks are never read.
  void load_indexed(const footer_view& footer) {
    for (const auto& e : footer.entries) {
      if (!overlaps(options_.range, e.t_min, e.t_max)) {
        ++info_.chunks_out_of_range;
        continue;
      }
      chunk_header h;
      const auto hb = read_at_(e.offset, detail::chunk_header_size);
      if (e.offset + detail::chunk_header_size > area_end_ ||
          !detail::decode_chunk_header(hb, h, verify_) || !plausible(h) ||
          e.offset + detail::chunk_header_size + h.compressed_size > area_end_) {
        warnings_.push_back(make_diagnostic(
            severity::warning, std::string(codes::corrupted_chunk), "corrupted chunk header",
            fmt::format("the chunk the index places at offset {} of '{}' has a damaged header; "
                        "its {} events are lost",
                        e.offset, source_, e.event_count),
            source_));
        ++info_.chunks_corrupted;
        continue;
      }
      if (load_chunk(e.offset, h))
        check_budget(area_end_); // a range load: what it holds, not extrapolated
    }
  }

  // Every chunk from the header on, skipping damage.
  void scan(std::uint64_t pos) {
    while (pos < area_end_) {
      chunk_header h;
      const std::uint64_t left = area_end_ - pos;
      const auto hb = read_at_(
          pos, static_cast<std::size_t>(std::min<std::uint64_t>(left, detail::chunk_header_size)));
      const bool header_ok = detail::decode_chunk_header(hb, h, verify_) && plausible(h);
      if (header_ok && detail::chunk_header_size + std::uint64_t{h.compressed_size} > left) {
        warn(std::string(codes::truncated_chunk), "truncated chunk",
             fmt::format("'{}' ends inside chunk {} (offset {}): {} of its {} bytes are present; "
                         "its {} events are lost",
                         source_, h.sequence, pos, left,
                         detail::chunk_header_size + h.compressed_size, h.event_count),
             pos, left);
        info_.bytes_lost += left;
        return;
      }
      if (!header_ok) {
        if (left < detail::chunk_header_size) {
          warn(std::string(codes::truncated_chunk), "truncated chunk",
               fmt::format("'{}' ends with {} bytes of an incomplete chunk header at offset {}",
                           source_, left, pos),
               pos, left);
          info_.bytes_lost += left;
          return;
        }
        const std::uint64_t next = resync(pos);
        warn(std::string(codes::corrupted_chunk), "corrupted data skipped",
             fmt::format("{} bytes at offset {} of '{}' hold no valid chunk header and were "
                         "skipped",
                         next - pos, pos, source_),
             pos, next - pos);
        ++info_.chunks_corrupted;
        info_.bytes_lost += next - pos;
        pos = next;
        continue;
      }
      if (overlaps(options_.range, h.t_min, h.t_max)) {
        if (load_chunk(pos, h))
          check_budget(pos + detail::chunk_header_size + h.compressed_size);
      } else {
        ++info_.chunks_out_of_range;
      }
      pos += detail::chunk_header_size + h.compressed_size;
    }
  }

  // Each chunk fits the budget alone (load_chunk), but they decode into one trace: what the
  // chunks read so far hold, extrapolated to the whole file, must fit too, or the load stops
  // with the one budget line. A range load is not extrapolated (the chunks it skips hold none).
  void check_budget(std::uint64_t read_up_to) const {
    const trace& t = out_.loaded.trace;
    detail::import_progress p;
    p.code = codes::tdtrace_too_large;
    p.title = "trace file needs more memory than is available";
    p.file = source_;
    t.for_each_store([&](const auto& store) { p.events_counted += store.size(); });
    p.share_read = options_.range || area_end_ == 0
                       ? 1.0
                       : static_cast<double>(read_up_to) / static_cast<double>(area_end_);
    p.bytes_so_far = t.memory_bytes();
    detail::check_import_budget(p);
  }

  // The next offset after `pos` holding a chunk header with a valid CRC, or the area's end.
  std::uint64_t resync(std::uint64_t pos) {
    std::uint64_t next = pos + 1;
    constexpr std::size_t window = 1 << 16;
    while (next < area_end_) {
      const auto w = read_at_(next, static_cast<std::size_t>(std::min<std::uint64_t>(
                                        area_end_ - next, window + detail::chunk_header_size)));
      for (std::size_t i = 0; i < std::min(w.size(), window); ++i) {
        chunk_header probe;
        if (w[i] == std::byte{'T'} &&
            detail::decode_chunk_header(std::span(w).subspan(i), probe, verify_) &&
            plausible(probe))
          return next + i;
      }
      next += std::min(w.size(), window);
      if (w.size() <= detail::chunk_header_size)
        break;
    }
    return area_end_;
  }

  // What the scan could not load, as warnings.
  void summarize(bool has_footer) {
    if (!has_footer) {
      diagnostic d = make_diagnostic(
          severity::warning, std::string(codes::not_closed), "trace file was not closed",
          fmt::format("'{}' has no footer: its writer did not finish (crashed, killed or still "
                      "running); {} complete chunks were loaded and {} bytes were lost",
                      source_, info_.chunks_loaded, info_.bytes_lost),
          source_);
      d.add_field("chunks_loaded", info_.chunks_loaded);
      d.add_field("bytes_lost", info_.bytes_lost);
      d.hint = "events still in the writer's memory when it stopped are not in the file";
      warnings_.push_back(std::move(d));
    } else if (info_.chunks_loaded + info_.chunks_corrupted + info_.chunks_out_of_range <
               info_.chunks_in_footer) {
      warnings_.push_back(make_diagnostic(
          severity::warning, std::string(codes::chunks_missing), "chunks missing",
          fmt::format("the index of '{}' lists {} chunks but only {} were found", source_,
                      info_.chunks_in_footer,
                      info_.chunks_loaded + info_.chunks_corrupted + info_.chunks_out_of_range),
          source_));
    }
  }

  ReadAt& read_at_;
  const detail::row_source& rows_;
  std::string_view source_;
  const tdtrace_read_options& options_;
  bool verify_;
  tdtrace_load out_;
  tdtrace_file_info& info_;
  std::vector<diagnostic>& warnings_;
  std::uint64_t area_end_ = 0;
  std::vector<std::byte> payload_;
};

template <typename ReadAt>
tdtrace_load read_any(std::uint64_t file_size, ReadAt&& read_at, const detail::row_source& rows,
                      std::string_view source, const tdtrace_read_options& options) {
  return tdtrace_scan<std::remove_reference_t<ReadAt>>(file_size, read_at, rows, source, options)
      .run();
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
  return read_any(bytes.size(), read_at, detail::copied_rows(bytes), source_name, options);
}

tdtrace_load read_tdtrace(const std::filesystem::path& path, const tdtrace_read_options& options) {
  input_file in(path);
  if (!in.seekable()) {
    // A pipe or FIFO: read once, whole, within the memory budget.
    const std::string bytes = in.read_all();
    return read_tdtrace(std::as_bytes(std::span(bytes)), in.name(), options);
  }
  auto read_at = [&](std::uint64_t offset, std::uint64_t n) {
    std::vector<std::byte> buf;
    if (offset >= in.size())
      return buf;
    buf.resize(static_cast<std::size_t>(std::min<std::uint64_t>(n, in.size() - offset)));
    buf.resize(in.read_at(offset, buf));
    return buf;
  };
  // The rows of a row image are mapped or copied on first use, from this very descriptor: "-"
  // is standard input, never a file of that name.
  return read_any(in.size(), read_at, detail::mapped_rows(path, in.size()), in.name(), options);
}

importer tdtrace_importer() {
  importer imp;
  imp.name = "tdtrace";
  imp.sniff = [](std::span<const std::byte> head) { return sniff_tdtrace(head); };
  const auto finish = [](load_result loaded, const load_options& options) {
    // A capture writes API calls and kernels as CUPTI delivers them, and no flows: derive the
    // launch -> kernel arrows from their correlation ids here (flows a file carries are kept).
    loaded.trace.link_flows_by_correlation();
    if (options.finalize)
      loaded.trace.finalize();
    return loaded;
  };
  static const tdtrace_read_options unfinalized{.finalize = false};
  imp.load = [finish](const std::filesystem::path& path, const load_options& options) {
    return finish(read_tdtrace(path, unfinalized).loaded, options);
  };
  imp.load_bytes = [finish](std::span<const std::byte> bytes, std::string_view source,
                            const load_options& options) {
    return finish(read_tdtrace(bytes, source, unfinalized).loaded, options);
  };
  return imp;
}

} // namespace tdiag::trace
