// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/sampled_index.hpp>

#include <algorithm>

namespace tdiag::view {

std::size_t sampled_index::lower_bound(std::span<const std::int64_t> values, std::size_t from,
                                       std::int64_t t) const noexcept {
  const std::size_t n = values.size();
  if (from >= n || values[from] >= t)
    return std::min(from, n);
  // k: the first sample past `from`'s stretch that is >= t; the answer lies between the
  // sample before it (or `from`) and it.
  const std::size_t first = std::min(from / stride + 1, samples_.size());
  const auto k = static_cast<std::size_t>(
      std::lower_bound(samples_.begin() + static_cast<std::ptrdiff_t>(first), samples_.end(), t) -
      samples_.begin());
  const std::size_t lo = k == first ? from : (k - 1) * stride;
  const std::size_t hi = std::min(k * stride, n);
  return static_cast<std::size_t>(std::lower_bound(values.begin() + static_cast<std::ptrdiff_t>(lo),
                                                   values.begin() + static_cast<std::ptrdiff_t>(hi),
                                                   t) -
                                  values.begin());
}

} // namespace tdiag::view
