// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/sampled_index.hpp>

#include <algorithm>

namespace tdiag::view {

namespace {

// First index in [from, values.size()) with values[index] >= t, given `samples` (every
// stride-th value) and a function giving the first sample index in [first, samples.size())
// that is >= t. The answer lies between the sample before that one (or `from`) and it.
template <class SampleSearch>
std::size_t stretch_search(std::span<const std::int64_t> values, std::size_t samples,
                           std::size_t from, std::int64_t t, SampleSearch&& search) {
  const std::size_t n = values.size();
  if (from >= n || values[from] >= t)
    return std::min(from, n);
  const std::size_t first = std::min(from / sampled_index::stride + 1, samples);
  const std::size_t k = search(first);
  const std::size_t lo = k == first ? from : (k - 1) * sampled_index::stride;
  const std::size_t hi = std::min(k * sampled_index::stride, n);
  return static_cast<std::size_t>(std::lower_bound(values.begin() + static_cast<std::ptrdiff_t>(lo),
                                                   values.begin() + static_cast<std::ptrdiff_t>(hi),
                                                   t) -
                                  values.begin());
}

} // namespace

std::size_t sampled_index::lower_bound(std::span<const std::int64_t> values, std::size_t from,
                                       std::int64_t t) const noexcept {
  const std::span<const std::int64_t> samples(samples_);
  return stretch_search(values, samples_.size(), from, t, [&](std::size_t first) {
    // The samples are searched the same way, through the top array.
    return stretch_search(samples, top_.size(), first, t, [&](std::size_t top_first) {
      return static_cast<std::size_t>(
          std::lower_bound(top_.begin() + static_cast<std::ptrdiff_t>(top_first), top_.end(), t) -
          top_.begin());
    });
  });
}

} // namespace tdiag::view
