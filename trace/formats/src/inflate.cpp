// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/inflate.hpp>
#include <tensordiag/trace/units.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <zlib.h>

namespace tdiag::trace::detail {
namespace {

[[noreturn]] void fail(std::string_view source, std::size_t offset, std::string message) {
  throw_input_error(codes::bad_gzip, "bad gzip stream",
                    fmt::format("{}: compressed byte offset {}: {}", source, offset, message),
                    "the file is damaged or was cut short; `gzip -t` confirms it",
                    {{"file", std::string(source)}, {"offset", static_cast<std::int64_t>(offset)}});
}

// Bytes after the last member that do not start another one: a damaged or appended file, not
// something to ignore.
[[noreturn]] void fail_trailing(std::string_view source, std::size_t offset, std::size_t size) {
  fail(source, offset,
       fmt::format("{} bytes of trailing data after the last gzip member", size - offset));
}

// Inflation past the ratio limit: one line naming the file, what was asked and what to do.
[[noreturn]] void fail_ratio(std::string_view source, std::size_t compressed,
                             std::uint64_t inflated) {
  throw_input_error(
      codes::gzip_ratio, "gzip inflates past the ratio limit",
      fmt::format(
          "{}: the first {} compressed bytes inflate to {} (over {}x, where real traces "
          "compress 10-30x): a gzip bomb or one byte repeated, not read on; a real trace this "
          "repetitive reads after `gunzip -k` as JSON",
          source, compressed, format_bytes(inflated), gzip_max_ratio),
      "check what it holds (`zcat FILE | head -c 1000`); gunzip a real trace and pass its JSON",
      {
          {"file", std::string(source)},
          {"offset", static_cast<std::int64_t>(compressed)},
          {"inflated_bytes", static_cast<std::int64_t>(inflated)},
      });
}

} // namespace

bool is_gzip(std::span<const std::byte> head) noexcept {
  return head.size() >= 2 && head[0] == std::byte{0x1f} && head[1] == std::byte{0x8b};
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

std::size_t gzip_stream::consumed() const noexcept {
  return state_->in_pos;
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
  // Against the compressed bytes read so far, so that a bomb stops early, not at its end.
  if (s.out_total > gzip_ratio_floor && s.out_total / gzip_max_ratio > s.in_pos)
    fail_ratio(s.source, s.in_pos, s.out_total);
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
