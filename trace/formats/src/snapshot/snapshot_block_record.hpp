// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: a segment's block dicts as the snapshot importer's pickle machine keeps them
// (snapshot_blocks.cpp), and the store that holds them until the segments are read.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "snapshot_handles.hpp"

namespace tdiag::trace::detail {

/// A segment's block dict (keys among address, size, requested_size, state and frames, each
/// at most once; ints inline, the state a str naming a block state) kept as what the
/// importer reads of it instead of a dict: made when a list takes the dict and nothing else
/// holds it (snapshot_blocks.cpp). Read as a value, it is the dict it was (snap_value).
/// 32 bytes: a dict whose fields do not fit stays a dict.
struct block_record {
  static constexpr std::uint64_t max_offset = (std::uint64_t{1} << 40) - 1;
  static constexpr std::uint32_t max_frames_payload = (std::uint32_t{1} << 28) - 1;
  std::uint64_t address = 0, size = 0;
  /// The dict's offset (bits 0-39), its layout (40-47), block_state (48-50), has_* bits
  /// (51-53) and its state str's slot in state_boxes_ (56-63).
  std::uint64_t bits = 0;
  std::uint32_t frames_handle = 0; ///< the "frames" value's handle: its tag, then 28 bits
  std::uint32_t unrequested = 0;   ///< size - requested_size

  [[nodiscard]] std::uint64_t offset() const noexcept { return bits & max_offset; }
  /// Its keys, in order (block_layout), or promoted.
  [[nodiscard]] std::uint8_t layout() const noexcept {
    return static_cast<std::uint8_t>(bits >> 40);
  }
  [[nodiscard]] std::uint8_t state() const noexcept { return (bits >> 48) & 7; }
  [[nodiscard]] std::uint8_t present() const noexcept { return (bits >> 51) & 7; }
  [[nodiscard]] std::uint8_t state_slot() const noexcept {
    return static_cast<std::uint8_t>(bits >> 56);
  }
  [[nodiscard]] std::uint64_t frames() const noexcept {
    return snap::make(static_cast<snap::tag>(frames_handle >> 28),
                      frames_handle & max_frames_payload);
  }
  [[nodiscard]] std::uint64_t requested_size() const noexcept { return size - unrequested; }
  void set(std::uint64_t offset, std::uint8_t layout, std::uint8_t state, std::uint8_t present,
           std::uint8_t state_slot) noexcept {
    bits = (offset & max_offset) | std::uint64_t{layout} << 40 | std::uint64_t{state & 7u} << 48 |
           std::uint64_t{present & 7u} << 51 | std::uint64_t{state_slot} << 56;
  }
  void set_layout(std::uint8_t layout) noexcept {
    set(offset(), layout, state(), present(), state_slot());
  }

  static constexpr std::uint8_t has_address = 1, has_requested = 2, has_frames = 4;
  /// A record's layout once the pickle changed its dict (snap_machine::promote): the dict is
  /// then the container whose index `address` holds.
  static constexpr std::uint8_t promoted = 0xff;
};
static_assert(sizeof(block_record) == 32);

/// Block records in chunks of 16384 (512 KiB): never moved or copied as they grow.
class block_store {
public:
  [[nodiscard]] std::size_t size() const noexcept { return count_; }
  [[nodiscard]] const block_record& operator[](std::size_t i) const noexcept {
    return chunks_[i >> chunk_bits][i & (chunk - 1)];
  }
  [[nodiscard]] block_record& operator[](std::size_t i) noexcept {
    return chunks_[i >> chunk_bits][i & (chunk - 1)];
  }
  void push_back(const block_record& b) {
    if ((count_ & (chunk - 1)) == 0)
      chunks_.push_back(std::make_unique<block_record[]>(chunk));
    chunks_[count_ >> chunk_bits][count_ & (chunk - 1)] = b;
    ++count_;
  }

  /// Record `i` is read for the last time: its chunk is freed once all of its records are.
  void done(std::size_t i) {
    const auto c = i >> chunk_bits;
    if (done_.size() != chunks_.size())
      done_.assign(chunks_.size(), 0);
    const auto in_chunk = std::min(chunk, count_ - (c << chunk_bits));
    if (++done_[c] == in_chunk)
      chunks_[c].reset();
  }

private:
  static constexpr std::size_t chunk_bits = 14, chunk = std::size_t{1} << chunk_bits;
  std::vector<std::unique_ptr<block_record[]>> chunks_;
  std::vector<std::uint32_t> done_; ///< records read for the last time, per chunk
  std::size_t count_ = 0;
};
/// The keys of block dicts: the key handles in order and what each names.
struct block_layout {
  enum class field : std::uint8_t { address, size, requested_size, state, frames };
  static constexpr std::size_t max_keys = 5;
  std::array<std::uint64_t, max_keys> keys{};
  std::array<field, max_keys> fields{};
  std::uint8_t count = 0;
  bool usable = false; ///< false: a key set dicts are kept as dicts for
};

/// A block dict read in one go (snap_stream::scan_block): its keys and values, alternating,
/// with an empty frames list of its own (an inactive block's) as a t_empty handle, and where
/// the dict and that list go in the memo.
struct block_items {
  std::array<std::uint64_t, 2 * block_layout::max_keys> handles;
  std::size_t count = 0;
  std::uint64_t memo = 0, list_memo = 0;
  bool own_empty_list = false;
};

} // namespace tdiag::trace::detail
