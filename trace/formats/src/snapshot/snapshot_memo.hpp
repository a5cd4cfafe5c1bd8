// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the memo of the snapshot importer's pickle machine (snapshot_stream.hpp), a handle
// (snapshot_handles.hpp) per slot in 4 bytes; packing in snapshot_memo.cpp.
#pragma once

#include <tensordiag/trace/stack_table.hpp>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "snapshot_handles.hpp"

namespace tdiag::trace::detail {

/// The pickle memo at 4 bytes a slot (a snapshot memoizes an object or more per trace entry):
/// a handle whose payload fits 28 bits is packed with its tag, any other goes to a side table.
/// Slots sit in pages of 4096; a page the puts have left well behind is packed (see
/// snapshot_memo.cpp) when that saves most of it: a run of rows numbered one after another,
/// or a settled stack followed by its own frames, as torch writes every trace entry, then
/// costs a byte or three instead of 4 bytes a slot. Reading or writing a packed page unpacks it
/// for good.
class snap_memo {
public:
  /// The frames of a settled stack (what its list's dicts were settled to), for packing.
  using frames_fn = frame_list (*)(const void* context, std::uint32_t stack);
  void set_frames(frames_fn fn, const void* context) noexcept {
    frames_ = fn;
    context_ = context;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  /// The bytes its pages, packed or not, and its side table hold.
  [[nodiscard]] std::size_t resident_bytes() const noexcept;
  void reserve(std::size_t n) { pages_.reserve(n / page_slots + 1); }
  /// Whether slot `i` was stored.
  [[nodiscard]] bool has(std::uint64_t i) const {
    return i < size_ && slot(static_cast<std::size_t>(i)) != unset;
  }
  [[nodiscard]] std::uint64_t get(std::uint64_t i) const {
    return decode(slot(static_cast<std::size_t>(i)));
  }
  /// has(i) and get(i) in one look at the slot: false when slot `i` was never stored.
  [[nodiscard]] bool find(std::uint64_t i, std::uint64_t& out) const {
    if (i >= size_)
      return false;
    const auto v = slot(static_cast<std::size_t>(i));
    if (v == unset)
      return false;
    out = decode(v);
    return true;
  }
  /// False (nothing stored) when the side table is full.
  bool set(std::uint64_t i, std::uint64_t v) {
    // Nearly every put: the slot after the last one, on the newest page (never packed, and
    // already made unless the slot starts a page), of a value that packs into 32 bits.
    if (i == size_ && (i & (page_slots - 1)) != 0 && snap::tag_of(v) < wide &&
        snap::payload_of(v) < mask) {
      pages_.back().raw[static_cast<std::size_t>(i) & (page_slots - 1)] =
          packed_of(snap::tag_of(v), static_cast<std::uint32_t>(snap::payload_of(v)));
      size_ = static_cast<std::size_t>(i) + 1;
      return true;
    }
    return set_any(i, v);
  }

private:
  static constexpr std::uint32_t mask = (std::uint32_t{1} << 28) - 1, wide = 14,
                                 unset = 0xffffffffu;
  static constexpr std::size_t page_bits = 12, page_slots = std::size_t{1} << page_bits;
  /// Pages this far behind the newest are packed.
  static constexpr std::size_t lag_pages = 16;
  /// Slots of a packed page read or written are kept beside it, this many before it is
  /// unpacked for good (a page a later entry fetches one traceback from stays packed).
  static constexpr std::size_t max_seen = 16;
  struct page {
    std::vector<std::uint32_t> raw;   ///< page_slots slots, or empty when packed
    std::vector<std::uint8_t> packed; ///< see snapshot_memo.cpp
    std::vector<std::pair<std::uint16_t, std::uint32_t>> seen; ///< packed: (slot, value)
  };
  /// A slot holding a handle of tag `t` whose payload is below mask.
  static constexpr std::uint32_t packed_of(snap::tag t, std::uint32_t payload) noexcept {
    return static_cast<std::uint32_t>(t) << 28 | payload;
  }
  [[nodiscard]] std::uint64_t decode(std::uint32_t v) const {
    return (v >> 28) == wide ? wide_[v & mask]
                             : snap::make(static_cast<snap::tag>(v >> 28), v & mask);
  }
  [[nodiscard]] std::uint32_t slot(std::size_t i) const {
    auto& pg = pages_[i >> page_bits];
    if (!pg.raw.empty()) [[likely]]
      return pg.raw[i & (page_slots - 1)];
    return packed_slot(pg, i & (page_slots - 1));
  }
  bool set_any(std::uint64_t i, std::uint64_t v);
  std::uint32_t packed_slot(page& pg, std::size_t j) const;
  [[nodiscard]] std::uint32_t find_packed(const page& pg, std::size_t j) const;
  void put_packed(page& pg, std::size_t j, std::uint32_t v);
  void pack(page& pg) const;
  void unpack(page& pg) const;
  /// Calls emit(slot, value) for a packed page's slots in order while it returns true.
  template <typename Emit> void walk(const page& pg, Emit&& emit) const;
  mutable std::vector<page> pages_;
  std::size_t size_ = 0;
  std::vector<std::uint64_t> wide_;
  frames_fn frames_ = nullptr;
  const void* context_ = nullptr;
};

} // namespace tdiag::trace::detail
