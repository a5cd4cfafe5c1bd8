// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// gzip/zlib decompression into a buffer with simdjson's padding, for the Kineto importer (not
// API). Errors are tdiag::input_error TDIAG-TR-120 naming the compressed byte offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace tdiag::trace::detail {

/// Bytes followed by at least `padding` readable bytes (zeroed): simdjson reads past the end.
struct padded_buffer {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;
  std::size_t capacity = 0; ///< allocated bytes, >= size + padding
  [[nodiscard]] std::string_view view() const noexcept { return {data.get(), size}; }
};

/// True when `head` starts with the gzip magic 1f 8b.
[[nodiscard]] bool is_gzip(std::span<const std::byte> head) noexcept;

/// Inflates a (possibly multi-member) gzip stream. `max_output` bounds the result (a gzip bomb
/// is refused). `source_name` names the input in errors.
[[nodiscard]] padded_buffer gunzip(std::span<const std::byte> compressed,
                                   std::string_view source_name, std::size_t padding,
                                   std::size_t max_output);

/// Streaming gzip decompression: read() hands out the next inflated bytes. Errors and a
/// truncated stream throw TDIAG-TR-120 naming the compressed offset.
class gzip_stream {
public:
  gzip_stream(std::span<const std::byte> compressed, std::string_view source_name);
  ~gzip_stream();
  gzip_stream(const gzip_stream&) = delete;
  gzip_stream& operator=(const gzip_stream&) = delete;
  /// Up to `n` inflated bytes into `dst`; 0 at the end of the last member.
  std::size_t read(char* dst, std::size_t n);

private:
  struct state;
  std::unique_ptr<state> state_;
};

/// Inflates at most `limit` bytes of the start of a gzip stream; never throws (for sniffing).
[[nodiscard]] std::size_t gunzip_prefix(std::span<const std::byte> compressed, char* out,
                                        std::size_t limit) noexcept;

} // namespace tdiag::trace::detail
