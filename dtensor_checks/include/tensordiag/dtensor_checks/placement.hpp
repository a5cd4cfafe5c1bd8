// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Placements of a DTensor on one mesh dim: Replicate, Shard(d) and Partial(op), in the corpus
// notation `R`, `S(1)`, `P(sum)`.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tdiag::dtensor {

/// The pending reduction of a Partial placement.
enum class reduce_op : std::uint8_t { sum, avg, max, min };

[[nodiscard]] std::string_view to_string(reduce_op op) noexcept;
[[nodiscard]] std::optional<reduce_op> parse_reduce_op(std::string_view text) noexcept;

enum class placement_kind : std::uint8_t { replicate, shard, partial };

/// One mesh dim's placement. `masked` marks PyTorch's _MaskPartial (row-sharded embedding): it
/// reduces with sum like P(sum), prints as `P(sum)`, but is a different placement for equality,
/// as in PyTorch.
struct placement {
  placement_kind kind = placement_kind::replicate;
  std::int32_t dim = 0;          ///< tensor dim, for Shard
  reduce_op op = reduce_op::sum; ///< for Partial
  bool masked = false;           ///< for Partial: embedding's mask partial

  [[nodiscard]] static constexpr placement replicate() noexcept { return {}; }
  [[nodiscard]] static constexpr placement shard(std::int32_t d) noexcept {
    return {placement_kind::shard, d, reduce_op::sum, false};
  }
  [[nodiscard]] static constexpr placement partial(reduce_op r = reduce_op::sum,
                                                   bool mask = false) noexcept {
    return {placement_kind::partial, 0, r, mask};
  }
  [[nodiscard]] constexpr bool is_replicate() const noexcept {
    return kind == placement_kind::replicate;
  }
  [[nodiscard]] constexpr bool is_shard() const noexcept { return kind == placement_kind::shard; }
  [[nodiscard]] constexpr bool is_shard(std::int32_t d) const noexcept {
    return kind == placement_kind::shard && dim == d;
  }
  [[nodiscard]] constexpr bool is_partial() const noexcept {
    return kind == placement_kind::partial;
  }

  friend constexpr bool operator==(const placement& a, const placement& b) noexcept {
    if (a.kind != b.kind)
      return false;
    if (a.kind == placement_kind::shard)
      return a.dim == b.dim;
    if (a.kind == placement_kind::partial)
      return a.op == b.op && a.masked == b.masked;
    return true;
  }
};

/// One placement per mesh dim, stored inline: a mesh has at most `capacity` dims, so specs,
/// candidates and plans never allocate for their placements.
class placement_list {
public:
  static constexpr std::size_t capacity = 8;
  using value_type = placement;
  using iterator = placement*;
  using const_iterator = const placement*;

  placement_list() = default;
  /// `n` copies of `p`. Throws std::length_error when n > capacity.
  explicit placement_list(std::size_t n, placement p = placement::replicate()) { assign(n, p); }
  placement_list(std::initializer_list<placement> items) {
    for (const auto& p : items)
      push_back(p);
  }

  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] placement& operator[](std::size_t i) noexcept { return items_[i]; }
  [[nodiscard]] const placement& operator[](std::size_t i) const noexcept { return items_[i]; }
  /// Throws std::out_of_range when i >= size().
  [[nodiscard]] const placement& at(std::size_t i) const;
  [[nodiscard]] iterator begin() noexcept { return items_.data(); }
  [[nodiscard]] iterator end() noexcept { return items_.data() + size_; }
  [[nodiscard]] const_iterator begin() const noexcept { return items_.data(); }
  [[nodiscard]] const_iterator end() const noexcept { return items_.data() + size_; }
  [[nodiscard]] const placement& front() const noexcept { return items_[0]; }
  [[nodiscard]] const placement& back() const noexcept { return items_[size_ - 1]; }
  /// Throws std::length_error when full.
  void push_back(const placement& p);
  /// Throws std::length_error when n > capacity.
  void assign(std::size_t n, placement p);
  void clear() noexcept { size_ = 0; }

  friend bool operator==(const placement_list& a, const placement_list& b) noexcept {
    if (a.size_ != b.size_)
      return false;
    for (std::size_t i = 0; i < a.size_; ++i) {
      if (!(a.items_[i] == b.items_[i]))
        return false;
    }
    return true;
  }

private:
  std::array<placement, capacity> items_{};
  std::uint8_t size_ = 0;
};

/// `R`, `S(1)`, `P(sum)` (a masked partial prints `P(sum)`, as the corpus records it).
[[nodiscard]] std::string to_string(const placement& p);
/// PyTorch's repr: `Replicate()`, `Shard(dim=0)`, `Partial(sum)`.
[[nodiscard]] std::string to_torch_string(const placement& p);
/// Parses `R`, `S(1)`, `P(sum)`, `P` (= P(sum)), and the long forms `Replicate()`,
/// `Shard(dim=1)`, `Shard(1)`, `Partial(max)`, `Partial()`; std::nullopt otherwise.
[[nodiscard]] std::optional<placement> parse_placement(std::string_view text) noexcept;

/// `[S(0), P(sum)]`.
[[nodiscard]] std::string to_string(const placement_list& ps);
/// PyTorch's compact spec form `S(0)P(sum)`, or `S(0)[0]S(0)[1]` when a tensor dim is
/// sharded on several mesh dims.
[[nodiscard]] std::string to_compact_string(const placement_list& ps);
/// PyTorch's tuple repr `(Partial(sum), Replicate())`.
[[nodiscard]] std::string to_torch_string(const placement_list& ps);
/// Parses `(S(0),P(sum))`, `[S(0), R]` or `S(0),R`; throws tdiag::input_error on bad text.
[[nodiscard]] placement_list parse_placements(std::string_view text);

/// True when any entry is a Shard (of any dim).
[[nodiscard]] bool has_shard(const placement_list& ps) noexcept;
/// True when every entry is Replicate.
[[nodiscard]] bool all_replicate(const placement_list& ps) noexcept;

} // namespace tdiag::dtensor
