// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the byte-level pieces every .tdtrace section codec shares (tdtrace_codec.cpp,
// tdtrace_allocator_state.cpp, tdtrace_image.cpp): varints, zigzag, a bounds-checked reader
// that throws `malformed`, and the decoder's chunk-local id maps.
#pragma once

#include <tensordiag/core/file_io.hpp>
#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/events.hpp>

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tdtrace_format.hpp"

namespace tdiag::trace::detail {

// --- varints ------------------------------------------------------------------------------
inline void put_varint(std::string& out, std::uint64_t v) {
  if (v < 0x80) { // the common case: most deltas are tiny
    out.push_back(static_cast<char>(v));
    return;
  }
  char buf[10];
  std::size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out.append(buf, n);
}
constexpr std::uint64_t zigzag(std::uint64_t v) noexcept {
  return (v << 1) ^ (0 - (v >> 63));
}
constexpr std::uint64_t unzigzag(std::uint64_t v) noexcept {
  return (v >> 1) ^ (0 - (v & 1));
}
inline void put_string(std::string& out, std::string_view s) {
  put_varint(out, s.size());
  out.append(s);
}

class byte_reader {
public:
  explicit byte_reader(std::span<const std::byte> b) : p_(b.data()), end_(b.data() + b.size()) {}
  [[nodiscard]] bool done() const noexcept { return p_ == end_; }
  [[nodiscard]] std::size_t left() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_)
        throw malformed("varint runs past the end of its section");
      const auto byte = static_cast<std::uint8_t>(*p_++);
      v |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0)
        return v;
    }
    throw malformed("varint longer than 10 bytes");
  }
  std::uint8_t u8() {
    if (p_ == end_)
      throw malformed("byte past the end of its section");
    return static_cast<std::uint8_t>(*p_++);
  }
  std::uint64_t u64() {
    auto b = bytes(8);
    return get_le<std::uint64_t>(b.data());
  }
  std::span<const std::byte> bytes(std::uint64_t n) {
    if (n > left())
      throw malformed("length runs past the end of its section");
    std::span<const std::byte> s(p_, static_cast<std::size_t>(n));
    p_ += n;
    return s;
  }
  std::string_view text() {
    auto b = bytes(varint());
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  /// A count of items each taking at least `min_bytes` bytes of the input and `item_size`
  /// bytes of memory once decoded: bounded by what is left and by the memory budget, before
  /// anything is allocated for them (a damaged chunk is skipped, never a bad_alloc).
  std::size_t count(std::size_t min_bytes = 1, std::size_t item_size = 0) {
    const std::uint64_t n = varint();
    if (n > left() / min_bytes)
      throw malformed("count larger than the bytes that follow");
    if (item_size != 0 && n > memory_budget() / item_size)
      throw malformed(fmt::format("{} items of {} bytes declared, over the memory budget ({} "
                                  "bytes; TDIAG_MEMORY_LIMIT)",
                                  n, item_size, memory_budget()));
    return static_cast<std::size_t>(n);
  }

private:
  const std::byte* p_;
  const std::byte* end_;
};

// The decoder's view of one chunk: local id -> id in the destination trace.
struct id_maps {
  std::vector<string_id> strings{no_string};
  std::vector<frame_id> frames{0};
  std::vector<stack_id> stacks{no_stack};
  std::vector<lane_id> lanes;

  template <typename Id>
  static Id map(const std::vector<Id>& v, std::uint64_t local, const char* what) {
    if (local >= v.size())
      throw malformed(std::string("reference to an undefined ") + what);
    return v[static_cast<std::size_t>(local)];
  }
};

// --- allocator state (tdtrace_allocator_state.cpp) -------------------------------------------
/// The body of section 6.
[[nodiscard]] std::string encode_allocator_state(const allocator_state& s);
/// Decodes section 6, its stack ids mapped through `ids`. Throws `malformed`.
[[nodiscard]] allocator_state decode_allocator_state(byte_reader& in, const id_maps& ids);

} // namespace tdiag::trace::detail
