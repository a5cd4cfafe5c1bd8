// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// snap_memo's packed pages (snapshot_memo.hpp). A packed page is a byte string, one
// instruction per run of slots, read in order (N and V are LEB128 varints):
//   0 N    N t_row slots, each the next row after the last row seen in the page;
//   1 V    a t_stack slot (stack V), then one t_frame slot per frame of that stack, in order:
//          what settling a trace entry's own frames list leaves;
//   2 XXXX one slot as stored (4 bytes, little-endian);
//   3 N    N t_block slots, each the next block after the last block seen in the page;
//   4 N    N pairs: the next block, then an empty list (t_empty), as an inactive block and its
//          own empty frames list leave them.
// A page is packed only when that takes less than a quarter of its 16 KiB.
#include "snapshot_memo.hpp"

#include <algorithm>
#include <cstring>

namespace tdiag::trace::detail {
namespace {

constexpr std::uint8_t op_rows = 0, op_stack = 1, op_slot = 2, op_blocks = 3, op_block_pairs = 4;

void put_varint(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (;; v >>= 7) {
    out.push_back(static_cast<std::uint8_t>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0)));
    if (v < 0x80)
      break;
  }
}

std::uint32_t get_varint(const std::uint8_t*& p) {
  std::uint32_t v = 0;
  for (int shift = 0;; shift += 7) {
    const auto b = *p++;
    v |= static_cast<std::uint32_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0)
      return v;
  }
}

} // namespace

bool snap_memo::set_any(std::uint64_t i, std::uint64_t v) {
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
  auto& pg = pages_[static_cast<std::size_t>(i) >> page_bits];
  const auto j = static_cast<std::size_t>(i) & (page_slots - 1);
  if (pg.raw.empty())
    put_packed(pg, j, packed);
  else
    pg.raw[j] = packed;
  return true;
}

std::uint32_t snap_memo::packed_slot(page& pg, std::size_t j) const {
  for (const auto& [at, v] : pg.seen)
    if (at == j)
      return v;
  if (pg.seen.size() >= max_seen) {
    unpack(pg);
    return pg.raw[j];
  }
  const auto out = find_packed(pg, j);
  pg.seen.emplace_back(static_cast<std::uint16_t>(j), out);
  return out;
}

// Slot j of a packed page, as walk() gives it, with a run of rows or blocks, or a stack and its
// frames, stepped over whole: a trace entry fetching an old traceback walked the page slot by
// slot.
std::uint32_t snap_memo::find_packed(const page& pg, std::size_t j) const {
  std::uint32_t last_row = unset, last_block = unset;
  std::size_t k = 0;
  const auto* p = pg.packed.data();
  const auto* const end = p + pg.packed.size();
  while (p < end) {
    const auto op = *p++;
    if (op == op_rows) {
      const std::uint32_t n = get_varint(p);
      if (j < k + n)
        return packed_of(snap::t_row, (last_row + 1 + static_cast<std::uint32_t>(j - k)) & mask);
      last_row = (last_row + n) & mask;
      k += n;
    } else if (op == op_blocks || op == op_block_pairs) {
      const std::uint32_t n = get_varint(p);
      const std::size_t step = op == op_block_pairs ? 2 : 1;
      if (j < k + step * n) {
        if ((j - k) % step == 1)
          return packed_of(snap::t_empty, 0);
        const auto i = static_cast<std::uint32_t>((j - k) / step);
        return packed_of(snap::t_block, (last_block + 1 + i) & mask);
      }
      last_block = (last_block + n) & mask;
      k += step * n;
    } else if (op == op_stack) {
      const auto s = get_varint(p);
      if (j == k)
        return packed_of(snap::t_stack, s);
      const auto frames = frames_(context_, s);
      if (j <= k + frames.size())
        return packed_of(snap::t_frame, frames[j - k - 1]);
      k += 1 + frames.size();
    } else {
      std::uint32_t v = 0;
      for (int b = 0; b < 4; ++b)
        v |= static_cast<std::uint32_t>(*p++) << (8 * b);
      if (j == k)
        return v;
      if ((v >> 28) == snap::t_row)
        last_row = v & mask;
      else if ((v >> 28) == snap::t_block)
        last_block = v & mask;
      ++k;
    }
  }
  return unset;
}

void snap_memo::put_packed(page& pg, std::size_t j, std::uint32_t v) {
  for (auto& [at, was] : pg.seen)
    if (at == j) {
      was = v;
      return;
    }
  if (pg.seen.size() >= max_seen) {
    unpack(pg);
    pg.raw[j] = v;
    return;
  }
  pg.seen.emplace_back(static_cast<std::uint16_t>(j), v);
}

std::size_t snap_memo::resident_bytes() const noexcept {
  std::size_t n = pages_.capacity() * sizeof(page) + wide_.capacity() * sizeof(std::uint64_t);
  for (const auto& pg : pages_)
    n += pg.raw.capacity() * sizeof(std::uint32_t) + pg.packed.capacity() +
         pg.seen.capacity() * sizeof(pg.seen[0]);
  return n;
}

void snap_memo::pack(page& pg) const {
  if (pg.raw.empty())
    return;
  std::vector<std::uint8_t> out;
  out.reserve(page_slots / 2);
  const auto& raw = pg.raw;
  std::uint32_t last_row = unset, last_block = unset;
  const auto next = [](snap::tag t, std::uint32_t last) { return packed_of(t, (last + 1) & mask); };
  const auto empty = packed_of(snap::t_empty, 0);
  for (std::size_t k = 0; k < page_slots;) {
    const auto v = raw[k];
    const auto t = static_cast<snap::tag>(v >> 28);
    std::uint32_t n = 0;
    if (v == next(snap::t_row, last_row)) {
      while (k + n < page_slots && raw[k + n] == next(snap::t_row, last_row + n))
        ++n;
      out.push_back(op_rows);
      put_varint(out, n);
      last_row += n;
      k += n;
      continue;
    }
    if (v == next(snap::t_block, last_block)) {
      const bool pairs = k + 1 < page_slots && raw[k + 1] == empty;
      const std::size_t step = pairs ? 2 : 1;
      while (k + step * n + step - 1 < page_slots &&
             raw[k + step * n] == next(snap::t_block, last_block + n) &&
             (!pairs || raw[k + step * n + 1] == empty))
        ++n;
      out.push_back(pairs ? op_block_pairs : op_blocks);
      put_varint(out, n);
      last_block += n;
      k += step * n;
      continue;
    }
    if (t == snap::t_stack) {
      const auto frames = frames_(context_, v & mask);
      bool own = k + 1 + frames.size() <= page_slots;
      for (std::size_t j = 0; own && j < frames.size(); ++j)
        own = frames[j] < mask && raw[k + 1 + j] == packed_of(snap::t_frame, frames[j]);
      if (own) {
        out.push_back(op_stack);
        put_varint(out, v & mask);
        k += 1 + frames.size();
        continue;
      }
    }
    if (t == snap::t_row)
      last_row = v & mask;
    else if (t == snap::t_block)
      last_block = v & mask;
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

template <typename Emit> void snap_memo::walk(const page& pg, Emit&& emit) const {
  std::uint32_t last_row = unset, last_block = unset;
  std::size_t k = 0;
  const auto* p = pg.packed.data();
  const auto* const end = p + pg.packed.size();
  const auto put = [&](std::uint32_t v) { return emit(k++, v); };
  while (p < end) {
    const auto op = *p++;
    if (op == op_rows) {
      for (auto n = get_varint(p); n > 0; --n) {
        last_row = (last_row + 1) & mask;
        if (!put(packed_of(snap::t_row, last_row)))
          return;
      }
    } else if (op == op_blocks || op == op_block_pairs) {
      for (auto n = get_varint(p); n > 0; --n) {
        last_block = (last_block + 1) & mask;
        if (!put(packed_of(snap::t_block, last_block)) ||
            (op == op_block_pairs && !put(packed_of(snap::t_empty, 0))))
          return;
      }
    } else if (op == op_stack) {
      const auto s = get_varint(p);
      if (!put(packed_of(snap::t_stack, s)))
        return;
      for (const auto f : frames_(context_, s))
        if (!put(packed_of(snap::t_frame, f)))
          return;
    } else {
      std::uint32_t v = 0;
      for (int b = 0; b < 4; ++b)
        v |= static_cast<std::uint32_t>(*p++) << (8 * b);
      if ((v >> 28) == snap::t_row)
        last_row = v & mask;
      else if ((v >> 28) == snap::t_block)
        last_block = v & mask;
      if (!put(v))
        return;
    }
  }
}

void snap_memo::unpack(page& pg) const {
  pg.raw.resize(page_slots);
  walk(pg, [&](std::size_t k, std::uint32_t v) {
    pg.raw[k] = v;
    return true;
  });
  for (const auto& [at, v] : pg.seen)
    pg.raw[at] = v;
  std::vector<std::uint8_t>().swap(pg.packed);
  std::vector<std::pair<std::uint16_t, std::uint32_t>>().swap(pg.seen);
}

} // namespace tdiag::trace::detail
