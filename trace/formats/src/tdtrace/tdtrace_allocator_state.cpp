// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Section 6 of a chunk payload: the allocator state a snapshot carried (segments and their
// blocks), as varints; stack ids are chunk-local like every other reference.
#include "tdtrace_bytes.hpp"

namespace tdiag::trace::detail {

std::string encode_allocator_state(const allocator_state& s) {
  std::string b;
  put_varint(b, zigzag(static_cast<std::uint64_t>(s.time)));
  put_varint(b, s.segments.size());
  for (const auto& seg : s.segments) {
    put_varint(b, zigzag(static_cast<std::uint64_t>(static_cast<std::int64_t>(seg.device))));
    put_varint(b, seg.address);
    put_varint(b, seg.total_size);
    put_varint(b, seg.stream);
    put_varint(b, seg.pool);
    b.push_back(static_cast<char>(seg.type));
    b.push_back(static_cast<char>(seg.is_expandable ? 1 : 0));
    put_varint(b, seg.stack);
    put_varint(b, seg.blocks.size());
    for (const auto& blk : seg.blocks) {
      put_varint(b, blk.address);
      put_varint(b, blk.size);
      put_varint(b, blk.requested_size);
      b.push_back(static_cast<char>(blk.state));
      put_varint(b, blk.stack);
    }
  }
  return b;
}

allocator_state decode_allocator_state(byte_reader& in, const id_maps& ids) {
  allocator_state s;
  s.time = static_cast<std::int64_t>(unzigzag(in.varint()));
  const std::size_t n = in.count(9, sizeof(segment)); // 7 varints and 2 bytes at least
  s.segments.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    segment seg;
    seg.device = static_cast<std::int32_t>(static_cast<std::int64_t>(unzigzag(in.varint())));
    seg.address = in.varint();
    seg.total_size = in.varint();
    seg.stream = in.varint();
    seg.pool = in.varint();
    const std::uint8_t type = in.u8();
    if (type > static_cast<std::uint8_t>(segment_type::large))
      throw malformed("unknown segment type");
    seg.type = static_cast<segment_type>(type);
    seg.is_expandable = in.u8() != 0;
    seg.stack = id_maps::map(ids.stacks, in.varint(), "stack");
    // 4 varints and a byte at least; the budget is checked once for the segments, not per
    // segment (memory_budget() reads /proc), and the bytes bound the blocks of all of them.
    const std::size_t blocks = in.count(5);
    seg.blocks.reserve(blocks);
    for (std::size_t k = 0; k < blocks; ++k) {
      block blk;
      blk.address = in.varint();
      blk.size = in.varint();
      blk.requested_size = in.varint();
      const std::uint8_t state = in.u8();
      if (state > static_cast<std::uint8_t>(block_state::inactive))
        throw malformed("unknown block state");
      blk.state = static_cast<block_state>(state);
      blk.stack = id_maps::map(ids.stacks, in.varint(), "stack");
      seg.blocks.push_back(blk);
    }
    s.segments.push_back(std::move(seg));
  }
  return s;
}

} // namespace tdiag::trace::detail
