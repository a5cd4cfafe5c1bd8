// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Streaming gzip decompression for the Kineto importer (not API). Errors are tdiag::input_error
// TDIAG-TR-120 naming the compressed byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace tdiag::trace::detail {

/// True when `head` starts with the gzip magic 1f 8b.
[[nodiscard]] bool is_gzip(std::span<const std::byte> head) noexcept;

/// Past this many inflated bytes, a stream may inflate at most gzip_max_ratio times its
/// compressed size: real Kineto traces compress 10-30x (times, ids and names vary); deflate
/// reaches about 1032x on one repeated byte and 200-500x on one repeated event, so only a bomb
/// (white space, one huge string, one event copied millions of times) is over.
inline constexpr std::uint64_t gzip_ratio_floor = std::uint64_t{64} << 20;
inline constexpr std::uint64_t gzip_max_ratio = 200;

/// Streaming gzip decompression: read() hands out the next inflated bytes. Errors and a
/// truncated stream throw TDIAG-TR-120 naming the compressed offset; inflating past
/// gzip_max_ratio times the compressed size (once past gzip_ratio_floor) throws TDIAG-TR-130.
class gzip_stream {
public:
  gzip_stream(std::span<const std::byte> compressed, std::string_view source_name);
  ~gzip_stream();
  gzip_stream(const gzip_stream&) = delete;
  gzip_stream& operator=(const gzip_stream&) = delete;
  /// Up to `n` inflated bytes into `dst`; 0 at the end of the last member.
  std::size_t read(char* dst, std::size_t n);
  /// Compressed bytes consumed so far.
  [[nodiscard]] std::size_t consumed() const noexcept;

private:
  struct state;
  std::unique_ptr<state> state_;
};

/// Inflates at most `limit` bytes of the start of a gzip stream; never throws (for sniffing).
[[nodiscard]] std::size_t gunzip_prefix(std::span<const std::byte> compressed, char* out,
                                        std::size_t limit) noexcept;

} // namespace tdiag::trace::detail
