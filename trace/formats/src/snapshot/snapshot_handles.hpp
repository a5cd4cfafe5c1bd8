// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the snapshot importer's pickle machine keeps every value as an 8-byte handle
// (snapshot_stream.hpp): a 4-bit tag and a 60-bit payload.
#pragma once

#include <cstdint>

namespace tdiag::trace::detail {

namespace snap {
// A handle: 4-bit tag, 60-bit payload.
enum tag : std::uint8_t {
  t_none = 0,
  t_false = 1,
  t_true = 2,
  t_int = 3,       ///< signed 60-bit value inline
  t_box = 4,       ///< index into boxes_
  t_container = 5, ///< index into containers_
  t_row = 6,       ///< a trace entry turned into a row
  t_stack = 7,     ///< a freed traceback list: its stack id
  t_frame = 8,     ///< a freed frame dict: its frame id
  t_inline = 9,    ///< a flat entry's frames list read with it (snap_stream::inline_frames)
  t_block = 10,    ///< a segment's block dict kept as a record (block_record)
  t_empty = 11,    ///< a freed empty list a block record held (its offset: its holder's)
};
constexpr std::uint64_t payload_mask = (std::uint64_t{1} << 60) - 1;
constexpr std::uint64_t make(tag t, std::uint64_t p) noexcept {
  return (std::uint64_t{t} << 60) | (p & payload_mask);
}
constexpr tag tag_of(std::uint64_t v) noexcept {
  return static_cast<tag>(v >> 60);
}
constexpr std::uint64_t payload_of(std::uint64_t v) noexcept {
  return v & payload_mask;
}
constexpr std::int64_t inline_int(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v << 4) >> 4; // sign-extend 60 bits
}
constexpr std::uint32_t none32 = 0xffffffffu;
} // namespace snap

} // namespace tdiag::trace::detail
