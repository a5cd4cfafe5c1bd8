// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// snap_memo's packed pages (snapshot_stream.hpp). A packed page is a byte string, one
// instruction per run of slots, read in order:
//   0      the next row after the last row seen in the page (a t_row slot);
//   1 V    a t_stack slot (stack V, a LEB128 varint), then one t_frame slot per frame of that
//          stack, in order: what settling a trace entry's own frames list leaves;
//   2 XXXX one slot as stored (4 bytes, little-endian).
// A page is packed only when that takes less than a quarter of its 16 KiB.
#include <algorithm>
#include <cstring>

#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {
namespace {

constexpr std::uint8_t op_next_row = 0, op_stack = 1, op_slot = 2;
constexpr std::uint32_t packed_of(snap::tag t, std::uint32_t payload) noexcept {
  return static_cast<std::uint32_t>(t) << 28 | payload;
}

} // namespace

bool snap_memo::set(std::uint64_t i, std::uint64_t v) {
  std::uint32_t packed;
  if (snap::tag_of(v) < wide && snap::payload_of(v) < mask) {
    packed = packed_of(snap::tag_of(v), static_cast<std::uint32_t>(snap::payload_of(v)));
  } else if (wide_.size() < mask) {
    packed = wide << 28 | static_cast<std::uint32_t>(wide_.size());
    wide_.push_back(v);
  } else {
    return false;
  }
  while ((static_cast<std::size_t>(i) >> page_bits) >= pages_.size()) {
    pages_.emplace_back().raw.assign(page_slots, unset);
    if (pages_.size() > lag_pages && frames_ != nullptr)
      pack(pages_[pages_.size() - 1 - lag_pages]);
  }
  size_ = std::max(size_, static_cast<std::size_t>(i) + 1);
  slot(static_cast<std::size_t>(i)) = packed;
  return true;
}

void snap_memo::pack(page& pg) const {
  if (pg.raw.empty())
    return;
  std::vector<std::uint8_t> out;
  out.reserve(page_slots / 2);
  const auto& raw = pg.raw;
  std::uint32_t last_row = unset;
  for (std::size_t k = 0; k < page_slots;) {
    const auto v = raw[k];
    const auto t = static_cast<snap::tag>(v >> 28);
    if (t == snap::t_row && (v & mask) == ((last_row + 1) & mask)) {
      out.push_back(op_next_row);
      last_row = v & mask;
      ++k;
      continue;
    }
    if (t == snap::t_stack) {
      const auto frames = frames_(context_, v & mask);
      bool own = k + 1 + frames.size() <= page_slots;
      for (std::size_t j = 0; own && j < frames.size(); ++j)
        own = frames[j] < mask && raw[k + 1 + j] == packed_of(snap::t_frame, frames[j]);
      if (own) {
        out.push_back(op_stack);
        for (auto s = v & mask;; s >>= 7) {
          out.push_back(static_cast<std::uint8_t>((s & 0x7f) | (s >= 0x80 ? 0x80 : 0)));
          if (s < 0x80)
            break;
        }
        k += 1 + frames.size();
        continue;
      }
    }
    if (t == snap::t_row)
      last_row = v & mask;
    out.push_back(op_slot);
    for (int b = 0; b < 4; ++b)
      out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    ++k;
    if (out.size() >= page_slots)
      return; // would save too little: the page stays as it is
  }
  out.shrink_to_fit();
  pg.packed = std::move(out);
  std::vector<std::uint32_t>().swap(pg.raw);
}

void snap_memo::unpack(page& pg) const {
  pg.raw.resize(page_slots);
  std::uint32_t last_row = unset;
  std::size_t k = 0;
  const auto* p = pg.packed.data();
  const auto* const end = p + pg.packed.size();
  while (p < end) {
    const auto op = *p++;
    if (op == op_next_row) {
      last_row = (last_row + 1) & mask;
      pg.raw[k++] = packed_of(snap::t_row, last_row);
    } else if (op == op_stack) {
      std::uint32_t s = 0;
      for (int shift = 0;; shift += 7) {
        const auto b = *p++;
        s |= static_cast<std::uint32_t>(b & 0x7f) << shift;
        if ((b & 0x80) == 0)
          break;
      }
      pg.raw[k++] = packed_of(snap::t_stack, s);
      for (const auto f : frames_(context_, s))
        pg.raw[k++] = packed_of(snap::t_frame, f);
    } else {
      std::uint32_t v = 0;
      for (int b = 0; b < 4; ++b)
        v |= static_cast<std::uint32_t>(*p++) << (8 * b);
      if ((v >> 28) == snap::t_row)
        last_row = v & mask;
      pg.raw[k++] = v;
    }
  }
  std::vector<std::uint8_t>().swap(pg.packed);
}

} // namespace tdiag::trace::detail
