// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Writes a row image: file header, each event kind's finalized rows raw at a page boundary, then
// one zstd chunk with the tables and the row directory, then the footer. The rows go out through
// the schema into zeroed rows, so padding bytes are zeros and the file is reproducible.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "tdtrace_bytes.hpp"
#include "tdtrace_format.hpp"
#include "tdtrace_image.hpp"

namespace tdiag::trace::detail {

namespace {

constexpr std::uint64_t prime1 = 0x9E3779B185EBCA87u;
constexpr std::uint64_t prime2 = 0xC2B2AE3D27D4EB4Fu;
constexpr std::uint64_t prime3 = 0x165667B19E3779F9u;

constexpr std::uint64_t mix_round(std::uint64_t acc, std::uint64_t word) noexcept {
  return std::rotl(acc + word * prime2, 31) * prime1;
}
// Rows are little-endian structs (docs/trace-format.md), read where they are native.
std::uint64_t word_at(const std::byte* p) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, p, sizeof w);
  return w;
}

} // namespace

void row_checksum::update(std::span<const std::byte> bytes) noexcept {
  total_ += bytes.size();
  const std::byte* p = bytes.data();
  std::size_t n = bytes.size();
  // The lanes in locals: stores through `this` could alias the bytes read, and keep them in
  // memory.
  std::uint64_t a = lanes_[0], b = lanes_[1], c = lanes_[2], d = lanes_[3];
  const auto stripe = [&](const std::byte* s) {
    a = mix_round(a, word_at(s));
    b = mix_round(b, word_at(s + 8));
    c = mix_round(c, word_at(s + 16));
    d = mix_round(d, word_at(s + 24));
  };
  if (pending_size_ > 0) {
    const std::size_t take = std::min(n, sizeof pending_ - pending_size_);
    std::memcpy(pending_ + pending_size_, p, take);
    pending_size_ += take;
    p += take;
    n -= take;
    if (pending_size_ == sizeof pending_) {
      stripe(pending_);
      pending_size_ = 0;
    }
  }
  if (pending_size_ == 0) {
    for (; n >= sizeof pending_; p += sizeof pending_, n -= sizeof pending_)
      stripe(p);
    std::memcpy(pending_, p, n);
    pending_size_ = n;
  }
  lanes_[0] = a, lanes_[1] = b, lanes_[2] = c, lanes_[3] = d;
}

std::uint64_t row_checksum::digest() const noexcept {
  std::uint64_t h = std::rotl(lanes_[0], 1) + std::rotl(lanes_[1], 7) + std::rotl(lanes_[2], 12) +
                    std::rotl(lanes_[3], 18);
  for (const std::uint64_t lane : lanes_)
    h = (h ^ mix_round(0, lane)) * prime1 + prime3;
  h += total_;
  for (std::size_t i = 0; i < pending_size_; ++i)
    h = std::rotl(h ^ (std::to_integer<std::uint64_t>(pending_[i]) * prime3), 11) * prime1;
  h ^= h >> 33;
  h *= prime2;
  h ^= h >> 29;
  h *= prime3;
  return h ^ (h >> 32);
}

std::string encode_row_directory(const row_directory& directory) {
  std::string b;
  put_varint(b, directory.blocks.size());
  for (const auto& blk : directory.blocks) {
    b.push_back(static_cast<char>(blk.kind));
    put_varint(b, blk.record_size);
    put_le(b, blk.layout);
    put_varint(b, blk.count);
    put_varint(b, blk.offset);
    put_varint(b, blk.lane_max_duration.size());
    for (std::size_t o : blk.lane_offsets)
      put_varint(b, o);
    for (std::int64_t d : blk.lane_max_duration)
      put_varint(b, static_cast<std::uint64_t>(d));
  }
  put_varint(b, directory.sync_waits.size());
  for (const auto& w : directory.sync_waits) {
    put_varint(b, w.range_index);
    put_varint(b, w.record_correlation);
    put_varint(b, zigzag(static_cast<std::uint64_t>(w.stream)));
  }
  put_varint(b, directory.collectives.size());
  for (const auto& c : directory.collectives) {
    put_varint(b, c.correlation);
    put_varint(b, c.group);
    put_varint(b, c.group_ranks);
    put_varint(b, c.collective);
    put_varint(b, zigzag(static_cast<std::uint64_t>(c.group_size)));
    put_varint(b, zigzag(static_cast<std::uint64_t>(c.seq)));
  }
  put_varint(b, directory.blocks.size()); // minor 2
  for (const auto& blk : directory.blocks)
    put_le(b, blk.checksum.value_or(0));
  put_varint(b, directory.memory_details.size()); // minor 3
  for (const auto& d : directory.memory_details) {
    put_varint(b, d.pool);
    put_varint(b, d.device_free);
    put_varint(b, zigzag(static_cast<std::uint64_t>(d.total_allocated)));
    put_varint(b, zigzag(static_cast<std::uint64_t>(d.total_reserved)));
    put_varint(b, d.correlation);
    put_varint(b, d.user_metadata);
  }
  return b;
}

namespace {

class image_file {
public:
  image_file(const std::filesystem::path& path, std::filesystem::path shown)
      : shown_(std::move(shown)), file_(std::fopen(path.c_str(), "wb")) {
    if (!file_)
      throw_create_error(shown_, errno);
    std::setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  }
  ~image_file() {
    if (file_)
      std::fclose(file_); // only after an error, which is already on its way
  }
  image_file(const image_file&) = delete;
  image_file& operator=(const image_file&) = delete;

  void write(const void* data, std::size_t size) {
    if (std::fwrite(data, 1, size, file_) != size)
      throw_write_error(shown_, "write failed", errno);
    offset_ += size;
  }
  void write(std::string_view bytes) { write(bytes.data(), bytes.size()); }
  void pad_to(std::uint64_t alignment) {
    const std::string zeros(static_cast<std::size_t>((alignment - offset_ % alignment) % alignment),
                            '\0');
    write(zeros);
  }
  void close() {
    const int rc = std::fclose(file_);
    file_ = nullptr;
    if (rc != 0)
      throw_write_error(shown_, "close failed", errno);
  }
  [[nodiscard]] std::uint64_t offset() const noexcept { return offset_; }
  [[nodiscard]] const std::filesystem::path& shown() const noexcept { return shown_; }

private:
  std::filesystem::path shown_;
  std::FILE* file_;
  std::uint64_t offset_ = 0;
};

// The rows of one store (sorted by lane, then time: finalized) and their lane index.
template <typename Record>
void write_block(image_file& out, row_directory& directory, std::uint8_t kind,
                 std::span<const Record> rows, std::size_t lane_count) {
  if (rows.empty())
    return;
  row_block blk;
  blk.kind = kind;
  blk.record_size = sizeof(Record);
  blk.layout = row_layout<Record>();
  blk.count = rows.size();
  for (std::size_t l = 0; l <= lane_count; ++l)
    blk.lane_offsets.push_back(
        static_cast<std::size_t>(std::partition_point(rows.begin(), rows.end(),
                                                      [&](const Record& r) { return r.lane < l; }) -
                                 rows.begin()));
  if (blk.lane_offsets.back() != rows.size())
    throw_write_error(out.shown(),
                      fmt::format("{} records name a lane the trace does not have",
                                  rows.size() - blk.lane_offsets.back()),
                      0);
  for (std::size_t l = 0; l < lane_count; ++l) {
    std::uint64_t longest = 0;
    for (std::size_t i = blk.lane_offsets[l]; i < blk.lane_offsets[l + 1]; ++i)
      longest = std::max(longest, duration_of(rows[i]));
    blk.lane_max_duration.push_back(static_cast<std::int64_t>(
        std::min<std::uint64_t>(longest, std::numeric_limits<std::int64_t>::max())));
  }
  out.pad_to(row_alignment);
  blk.offset = out.offset();
  constexpr auto fields = schema<Record>();
  constexpr std::size_t batch = 8192;
  std::vector<std::byte> buffer(batch * sizeof(Record));
  row_checksum sum;
  for (std::size_t first = 0; first < rows.size(); first += batch) {
    const std::size_t n = std::min(batch, rows.size() - first);
    std::fill(buffer.begin(), buffer.end(), std::byte{0});
    for (std::size_t i = 0; i < n; ++i) {
      const auto* from = reinterpret_cast<const std::byte*>(&rows[first + i]);
      std::byte* to = buffer.data() + i * sizeof(Record);
      for (const auto& f : fields)
        store_field(to, f, load_field(from, f));
    }
    out.write(buffer.data(), n * sizeof(Record));
    sum.update(std::span(buffer).first(n * sizeof(Record)));
  }
  blk.checksum = sum.digest();
  directory.blocks.push_back(std::move(blk));
}

} // namespace

void write_row_image(const std::filesystem::path& path, const trace& in,
                     const tdtrace_writer_options& options) {
  std::optional<trace> sorted;
  if (!in.finalized()) {
    sorted.emplace(in);
    sorted->finalize();
  }
  const trace& t = sorted ? *sorted : in;
  image_file out(path,
                 options.display_name.empty() ? path : std::filesystem::path(options.display_name));
  out.write(encode_file_header(image_version_major, image_version_minor, header_flag_row_image,
                               static_cast<std::uint32_t>(options.chunk_bytes)));
  row_directory directory;
  std::uint8_t kind = 0;
  t.for_each_store([&](const auto& store) { // in kind order: kernels 0 ... counters 8
    write_block(out, directory, kind++, store.all(), t.lanes.size());
  });
  directory.sync_waits = t.sync_waits;
  directory.collectives = t.collectives;
  directory.memory_details = t.memory_details;

  std::string payload = encode_chunk_tables(t);
  const std::string body = encode_row_directory(directory);
  payload.push_back(static_cast<char>(section_row_image));
  put_varint(payload, body.size());
  payload += body;
  chunk_header h;
  h.event_count = static_cast<std::uint32_t>(
      std::min<std::size_t>(t.event_count(), std::numeric_limits<std::uint32_t>::max()));
  const time_span span = t.span();
  h.t_min = span.begin;
  h.t_max = span.end;
  const std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(
      make_chunk_compressor(options.compression_level), &ZSTD_freeCCtx);
  const std::string chunk = frame_chunk(cctx.get(), payload, h, out.shown());
  const std::uint64_t chunk_offset = out.offset();
  out.write(chunk);
  const std::uint64_t footer_offset = out.offset();
  out.write(encode_footer({{chunk_offset, h.compressed_size, h.event_count, h.t_min, h.t_max}},
                          footer_offset));
  out.close();
}

} // namespace tdiag::trace::detail
