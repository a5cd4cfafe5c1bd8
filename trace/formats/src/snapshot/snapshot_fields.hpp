// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: typed reads of snapshot fields for the importer, each failing with one line that
// names the file, the byte offset, the field and what was found instead ("'address' (expected
// an int) is missing").
#pragma once

#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/allocator_state.hpp>
#include <tensordiag/trace/codes.hpp>
#include <tensordiag/trace/detail/saturate.hpp>
#include <tensordiag/trace/events.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot_stream.hpp"

namespace tdiag::trace::detail {

// Calls pair(a, b) for every two of the indices 0..n-1 that are neighbours in the (stable) order
// `before` gives them, without sorting where they are in it already (as PyTorch lists blocks).
template <typename Before, typename Pair>
void for_neighbours(std::size_t n, Before before, Pair pair) {
  std::vector<std::size_t> order;
  for (std::size_t j = 1; j < n && order.empty(); ++j)
    if (before(j, j - 1))
      order.resize(n);
  if (order.empty()) {
    for (std::size_t j = 1; j < n; ++j)
      pair(j - 1, j);
    return;
  }
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), before);
  for (std::size_t k = 1; k < n; ++k)
    pair(order[k - 1], order[k]);
}

inline std::optional<memory_action> parse_action(std::string_view a) noexcept {
  if (a == "alloc")
    return memory_action::alloc;
  if (a == "free_requested")
    return memory_action::free_requested;
  if (a == "free_completed")
    return memory_action::free_completed;
  if (a == "segment_alloc")
    return memory_action::segment_alloc;
  if (a == "segment_free")
    return memory_action::segment_free;
  if (a == "segment_map")
    return memory_action::segment_map;
  if (a == "segment_unmap")
    return memory_action::segment_unmap;
  if (a == "oom")
    return memory_action::oom;
  if (a == "snapshot")
    return memory_action::snapshot;
  // Legacy single-step free: the block is reusable at once.
  if (a == "free")
    return memory_action::free_completed;
  return std::nullopt;
}

inline std::optional<block_state> parse_block_state(std::string_view s) noexcept {
  if (s == "active_allocated")
    return block_state::active_allocated;
  // The docstring says active_awaiting_free; the C++ writes active_pending_free.
  if (s == "active_pending_free" || s == "active_awaiting_free")
    return block_state::active_pending_free;
  if (s == "inactive")
    return block_state::inactive;
  return std::nullopt;
}

/// A size a snapshot may give, in bytes: below 2^56 (64 PiB, far past any device). A negative
/// int, read as an unsigned one, lies past it.
inline constexpr std::uint64_t max_snapshot_size = std::uint64_t{1} << 56;
/// Where an address range must end: at or below 2^63 (a negative address lies past it).
inline constexpr std::uint64_t max_snapshot_end = std::uint64_t{1} << 63;
/// The largest device index a segment may name (device_traces holds a list per device).
inline constexpr std::int64_t max_snapshot_device = 65535;

class snap_fields {
protected:
  [[noreturn]] void fail(snap_value where, std::string_view code, std::string message) const {
    throw_input_error(
        code, "malformed memory snapshot",
        fmt::format("{}: byte offset {}: {}", stream_->source_name(), where.offset(), message),
        "expected the dict written by torch.cuda.memory._dump_snapshot()",
        {{"file", stream_->source_name()}, {"offset", static_cast<std::int64_t>(where.offset())}});
  }

  // "is missing", "is a dict", "is an int wider than 64 bits": what was found instead.
  static std::string found_text(snap_value v) {
    if (!v.valid())
      return "is missing";
    if (v.kind() == pickle_kind::big_integer)
      return "is an int wider than 64 bits";
    const auto kind = to_string(v.kind());
    const bool vowel = kind.find_first_of("aeiouAEIOU") == 0;
    return fmt::format("is {} {}", vowel ? "an" : "a", kind);
  }

  void expect(snap_value v, bool ok, std::string_view what) const { expect(v, v, ok, what); }
  // `where` locates the message (the dict when a key is missing), `found` is what was there.
  void expect(snap_value where, snap_value found, bool ok, std::string_view what) const {
    if (!ok)
      fail(where.valid() ? where : found, codes::malformed_snapshot,
           fmt::format("{} {}", what, found_text(found)));
  }

  snap_value sequence(snap_value v, std::string_view what) const {
    expect(v, v.valid() && v.is_sequence(), fmt::format("'{}' (expected a list)", what));
    return v;
  }

  // An integer field; unsigned 64-bit values (addresses, stream handles) are accepted too.
  std::uint64_t u64(snap_value dict, std::string_view key,
                    std::optional<std::uint64_t> fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() && fallback)
      return *fallback;
    if (auto u = v.as_uint())
      return *u;
    if (auto i = v.as_int())
      return static_cast<std::uint64_t>(*i);
    expect(v.valid() ? v : dict, v, false, fmt::format("'{}' (expected an int)", key));
    return 0;
  }
  // An address or a size: the same, except that a positive int from 2^63 on is refused here,
  // where its sign is still known. Past this read a u64 from 2^63 on was a negative int
  // (int_text), which check_range refuses by name.
  std::uint64_t extent(snap_value dict, std::string_view key,
                       std::optional<std::uint64_t> fallback = {}) const {
    const auto v = dict.find(key);
    if (v.valid() && v.kind() == pickle_kind::big_integer)
      if (const auto u = v.as_uint(); u && *u >= max_snapshot_end)
        fail(v, codes::snapshot_out_of_range,
             fmt::format("'{}' {} is out of range (expected below 2^63)", key, *u));
    return u64(dict, key, fallback);
  }
  std::int64_t i64(snap_value dict, std::string_view key,
                   std::optional<std::int64_t> fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() && fallback)
      return *fallback;
    if (auto i = v.as_int())
      return *i;
    if (auto d = v.as_double())
      return detail::to_i64(*d);
    expect(v.valid() ? v : dict, v, false, fmt::format("'{}' (expected an int)", key));
    return 0;
  }
  // A 'time_us' field: an int, or a float (microseconds, rounded to the nearest); NaN and
  // infinities are refused, never read as a time.
  std::int64_t time_us(snap_value dict, std::optional<std::int64_t> fallback = {}) const {
    const auto v = dict.find("time_us");
    if (v.valid() && v.kind() == pickle_kind::floating) {
      const double d = v.as_double().value_or(0);
      if (!std::isfinite(d))
        fail(v, codes::malformed_snapshot,
             fmt::format("'time_us' (expected a finite number of microseconds) is {}", d));
      return detail::to_i64(std::nearbyint(d));
    }
    return i64(dict, "time_us", fallback);
  }
  std::string_view str(snap_value dict, std::string_view key,
                       std::string_view fallback = {}) const {
    const auto v = dict.find(key);
    if (!v.valid() || v.is_none())
      return fallback;
    if (auto s = v.as_string())
      return *s;
    expect(v, false, fmt::format("'{}' (expected a str)", key));
    return {};
  }

  // An int field as the file wrote it: one past int64's range was a negative int (extent()
  // refuses a positive one).
  static std::string int_text(std::uint64_t v, bool hex = false) {
    if (v >= max_snapshot_end)
      return fmt::format("{}", static_cast<std::int64_t>(v));
    return hex ? fmt::format("0x{:x}", v) : fmt::format("{}", v);
  }

  // Whether a range passes check_range (the cheap test before naming the entry).
  static constexpr bool in_range(std::uint64_t address, std::uint64_t size,
                                 std::uint64_t max_size = max_snapshot_size) noexcept {
    return size < max_size && address <= max_snapshot_end - size;
  }

  // The range ['address', 'address' + 'size') of `entry` (named "segments[3]" and the like),
  // refused with one line unless the size is below `max_size` and the range ends by 2^63.
  void check_range(snap_value where, std::string_view entry, std::string_view address_key,
                   std::uint64_t address, std::string_view size_key, std::uint64_t size,
                   std::uint64_t max_size = max_snapshot_size) const {
    if (size >= max_size) [[unlikely]]
      fail(where, codes::snapshot_out_of_range,
           fmt::format("{}: '{}' {} is out of range (expected 0 to 2^{} bytes)", entry, size_key,
                       int_text(size), max_size == max_snapshot_size ? 56 : 63));
    if (address > max_snapshot_end - size) [[unlikely]]
      fail(where, codes::snapshot_out_of_range,
           fmt::format("{}: '{}' {} with '{}' {} is out of range (expected a range ending by "
                       "2^63)",
                       entry, address_key, int_text(address, true), size_key, size));
  }

  const snap_stream* stream_ = nullptr;
};

} // namespace tdiag::trace::detail
