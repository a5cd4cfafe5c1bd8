// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Private: the keys of an ordered map (replay_state's segments by address) with an iterator to
// each entry, kept in sorted runs of contiguous memory, for the search every replayed event
// makes. A search down a std::map of thousands of segments missed the cache at nearly every
// level (a sixth of `tdiag trace summary` on a 1M-event snapshot of 6,714 segments); here it
// is a binary search over the runs' first keys and one over a run of at most max_run keys.
// An insert or erase moves at most one run's tail, so a history that makes and drops many
// segments costs no more than a map's rebalancing would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <vector>

namespace tdiag::trace::detail {

/// How many of the `n` elements at `a`, sorted by key_of, have a key at or below `key` (what
/// std::upper_bound finds): without a branch on the comparisons, which a search over a
/// segment's blocks mispredicted at nearly every step.
template <typename T, typename KeyOf>
[[nodiscard]] std::size_t count_at_or_below(const T* a, std::size_t n, std::uint64_t key,
                                            KeyOf&& key_of) noexcept {
  if (n == 0)
    return 0;
  const T* base = a;
  while (n > 1) {
    const auto half = n / 2;
    base = key_of(base[half]) <= key ? base + half : base;
    n -= half;
  }
  return static_cast<std::size_t>(base - a) + (key_of(*base) <= key ? 1 : 0);
}

template <typename Iterator> class key_index {
public:
  /// The entry of the last key at or below `key` (`found` false where there is none) and the
  /// key after it (~0 where there is none: the entry then answers up to the top).
  struct floor_result {
    bool found = false;
    Iterator at{};
    std::uint64_t next = ~std::uint64_t{0};
  };

  void clear() noexcept {
    runs_.clear();
    firsts_.clear();
  }

  /// `key` must not be in the index.
  void insert(std::uint64_t key, Iterator at) {
    if (runs_.empty()) {
      runs_.emplace_back().keys.push_back(key);
      runs_.back().at.push_back(at);
      firsts_.push_back(key);
      return;
    }
    // The run whose first key is the last at or below `key` (the first run for a smaller one).
    auto r = run_of(key);
    if (r == npos)
      r = 0;
    auto& run = runs_[r];
    const auto k = static_cast<std::size_t>(
        std::upper_bound(run.keys.begin(), run.keys.end(), key) - run.keys.begin());
    run.keys.insert(run.keys.begin() + static_cast<std::ptrdiff_t>(k), key);
    run.at.insert(run.at.begin() + static_cast<std::ptrdiff_t>(k), at);
    firsts_[r] = run.keys.front();
    if (run.keys.size() > max_run)
      split(r);
  }

  /// `key` must be in the index.
  void erase(std::uint64_t key) {
    const auto r = run_of(key);
    auto& run = runs_[r];
    const auto k = static_cast<std::size_t>(
        std::lower_bound(run.keys.begin(), run.keys.end(), key) - run.keys.begin());
    run.keys.erase(run.keys.begin() + static_cast<std::ptrdiff_t>(k));
    run.at.erase(run.at.begin() + static_cast<std::ptrdiff_t>(k));
    if (run.keys.empty()) {
      runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(r));
      firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(r));
    } else {
      firsts_[r] = run.keys.front();
    }
  }

  [[nodiscard]] floor_result floor(std::uint64_t key) const noexcept {
    floor_result out;
    const auto r = run_of(key);
    if (r == npos)
      return out;
    const auto& run = runs_[r];
    // The run's first key is at or below `key`: k >= 1.
    const auto k = count_at_or_below(run.keys.data(), run.keys.size(), key, same);
    out.found = true;
    out.at = run.at[k - 1];
    if (k < run.keys.size())
      out.next = run.keys[k];
    else if (r + 1 < firsts_.size())
      out.next = firsts_[r + 1];
    return out;
  }

  [[nodiscard]] std::size_t size() const noexcept {
    std::size_t n = 0;
    for (const auto& run : runs_)
      n += run.keys.size();
    return n;
  }

private:
  static constexpr std::size_t max_run = 256, npos = ~std::size_t{0};
  static constexpr auto same = [](std::uint64_t k) { return k; };
  struct key_run {
    std::vector<std::uint64_t> keys; ///< sorted
    std::vector<Iterator> at;        ///< the entry of each key
  };

  /// The run whose first key is the last at or below `key`, or npos.
  [[nodiscard]] std::size_t run_of(std::uint64_t key) const noexcept {
    const auto r = count_at_or_below(firsts_.data(), firsts_.size(), key, same);
    return r == 0 ? npos : r - 1;
  }

  void split(std::size_t r) {
    key_run upper;
    auto& lower = runs_[r];
    const auto half = static_cast<std::ptrdiff_t>(lower.keys.size() / 2);
    upper.keys.assign(lower.keys.begin() + half, lower.keys.end());
    upper.at.assign(lower.at.begin() + half, lower.at.end());
    lower.keys.resize(static_cast<std::size_t>(half));
    lower.at.resize(static_cast<std::size_t>(half));
    const auto first = upper.keys.front();
    runs_.insert(runs_.begin() + static_cast<std::ptrdiff_t>(r) + 1, std::move(upper));
    firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(r) + 1, first);
  }

  std::vector<key_run> runs_;
  std::vector<std::uint64_t> firsts_; ///< each run's first key
};

} // namespace tdiag::trace::detail
