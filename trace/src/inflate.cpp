// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/detail/inflate.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <zlib.h>

namespace tdiag::trace::detail {
namespace {

[[noreturn]] void fail(std::string_view source, std::size_t offset, std::string message) {
  diagnostic d;
  d.code = "TDIAG-TR-120";
  d.title = "bad gzip stream";
  d.message = fmt::format("{}: compressed byte offset {}: {}", source, offset, message);
  d.add_field("file", std::string(source));
  d.add_field("offset", static_cast<std::int64_t>(offset));
  d.hint = "the file is damaged or was cut short; `gzip -t` confirms it";
  throw input_error(std::move(d));
}

// Bytes after the last member that do not start another one: a damaged or appended file, not
// something to ignore.
[[noreturn]] void fail_trailing(std::string_view source, std::size_t offset, std::size_t size) {
  fail(source, offset,
       fmt::format("{} bytes of trailing data after the last gzip member", size - offset));
}

void grow(padded_buffer& out, std::size_t wanted, std::size_t padding) {
  auto bigger = std::make_unique_for_overwrite<char[]>(wanted + padding);
  if (out.size != 0)
    std::memcpy(bigger.get(), out.data.get(), out.size);
  out.data = std::move(bigger);
  out.capacity = wanted + padding;
}

} // namespace

bool is_gzip(std::span<const std::byte> head) noexcept {
  return head.size() >= 2 && head[0] == std::byte{0x1f} && head[1] == std::byte{0x8b};
}

padded_buffer gunzip(std::span<const std::byte> compressed, std::string_view source,
                     std::size_t padding, std::size_t max_output) {
  padded_buffer out;
  // ISIZE (the last 4 bytes) is the uncompressed size mod 2^32 of the last member: a good first
  // guess for one-member files under 4 GiB; the buffer grows if it is wrong.
  std::size_t guess = compressed.size() * 4;
  if (compressed.size() >= 18) {
    const auto* t =
        reinterpret_cast<const unsigned char*>(compressed.data()) + compressed.size() - 4;
    const std::size_t isize = t[0] | (t[1] << 8) | (t[2] << 16) | (std::size_t{t[3]} << 24);
    if (isize >= compressed.size() / 2)
      guess = isize;
  }
  guess = std::min(std::max<std::size_t>(guess, 4096), max_output);
  grow(out, guess, padding);

  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    fail(source, 0, "zlib initialisation failed");
  std::size_t in_pos = 0;
  bool member_done = false;
  while (true) {
    const auto chunk_in =
        std::min<std::size_t>(compressed.size() - in_pos, std::numeric_limits<uInt>::max());
    z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(compressed.data() + in_pos));
    z.avail_in = static_cast<uInt>(chunk_in);
    if (out.size == out.capacity - padding) {
      if (out.size >= max_output) {
        inflateEnd(&z);
        fail(source, in_pos, fmt::format("inflates to more than {} bytes (limit)", max_output));
      }
      grow(out, std::min(max_output, out.size * 2), padding);
    }
    const auto room =
        std::min<std::size_t>(out.capacity - padding - out.size, std::numeric_limits<uInt>::max());
    z.next_out = reinterpret_cast<Bytef*>(out.data.get() + out.size);
    z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&z, Z_NO_FLUSH);
    in_pos += chunk_in - z.avail_in;
    out.size += room - z.avail_out;
    if (rc == Z_STREAM_END) {
      member_done = true;
      // Another gzip member may follow (concatenated .gz files are valid gzip).
      if (in_pos < compressed.size() && is_gzip(compressed.subspan(in_pos))) {
        inflateReset(&z);
        member_done = false;
        continue;
      }
      if (in_pos < compressed.size()) {
        inflateEnd(&z);
        fail_trailing(source, in_pos, compressed.size());
      }
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0 && in_pos == compressed.size())
      break; // truncated
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string why = z.msg ? z.msg : fmt::format("zlib error {}", rc);
      inflateEnd(&z);
      fail(source, in_pos, fmt::format("{} (after {} inflated bytes)", why, out.size));
    }
  }
  inflateEnd(&z);
  if (!member_done)
    fail(source, in_pos,
         fmt::format(
             "the gzip stream ends early: {} compressed bytes gave {} bytes before it stopped",
             compressed.size(), out.size));
  std::memset(out.data.get() + out.size, 0, padding);
  return out;
}

struct gzip_stream::state {
  z_stream z{};
  std::span<const std::byte> in;
  std::string source;
  std::size_t in_pos = 0;
  std::size_t out_total = 0;
  bool done = false;
};

gzip_stream::gzip_stream(std::span<const std::byte> compressed, std::string_view source)
    : state_(std::make_unique<state>()) {
  state_->in = compressed;
  state_->source = std::string(source);
  if (inflateInit2(&state_->z, 15 + 16) != Z_OK)
    fail(source, 0, "zlib initialisation failed");
}

gzip_stream::~gzip_stream() {
  inflateEnd(&state_->z);
}

std::size_t gzip_stream::read(char* dst, std::size_t n) {
  auto& s = *state_;
  std::size_t produced = 0;
  while (!s.done && produced < n) {
    const auto chunk_in =
        std::min<std::size_t>(s.in.size() - s.in_pos, std::numeric_limits<uInt>::max());
    s.z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(s.in.data() + s.in_pos));
    s.z.avail_in = static_cast<uInt>(chunk_in);
    const auto room = std::min<std::size_t>(n - produced, std::numeric_limits<uInt>::max());
    s.z.next_out = reinterpret_cast<Bytef*>(dst + produced);
    s.z.avail_out = static_cast<uInt>(room);
    const int rc = inflate(&s.z, Z_NO_FLUSH);
    s.in_pos += chunk_in - s.z.avail_in;
    produced += room - s.z.avail_out;
    if (rc == Z_STREAM_END) {
      if (s.in_pos < s.in.size() && is_gzip(s.in.subspan(s.in_pos))) {
        inflateReset(&s.z); // another member follows
        continue;
      }
      if (s.in_pos < s.in.size())
        fail_trailing(s.source, s.in_pos, s.in.size());
      s.done = true;
      break;
    }
    if (rc == Z_BUF_ERROR && s.in_pos == s.in.size())
      fail(s.source, s.in_pos,
           fmt::format(
               "the gzip stream ends early: {} compressed bytes gave {} bytes before it stopped",
               s.in.size(), s.out_total + produced));
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      fail(s.source, s.in_pos,
           fmt::format("{} (after {} inflated bytes)", s.z.msg ? s.z.msg : "zlib error",
                       s.out_total + produced));
  }
  s.out_total += produced;
  return produced;
}

std::size_t gunzip_prefix(std::span<const std::byte> compressed, char* out,
                          std::size_t limit) noexcept {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK)
    return 0;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(compressed.data()));
  z.avail_in =
      static_cast<uInt>(std::min<std::size_t>(compressed.size(), std::numeric_limits<uInt>::max()));
  z.next_out = reinterpret_cast<Bytef*>(out);
  z.avail_out = static_cast<uInt>(limit);
  // Across members: a multi-member file whose first member is short still shows its content.
  while (z.avail_out > 0 && inflate(&z, Z_SYNC_FLUSH) == Z_STREAM_END && z.avail_in > 0 &&
         is_gzip(std::span(reinterpret_cast<const std::byte*>(z.next_in), z.avail_in)))
    inflateReset(&z);
  const auto n = limit - z.avail_out;
  inflateEnd(&z);
  return n;
}

} // namespace tdiag::trace::detail
