// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/sampled_index.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace {

using tdiag::view::sampled_index;

// The index answers as std::lower_bound over [from, n) does, for every hint and target,
// with runs of equal values across stretch boundaries.
TEST(SampledIndex, AgreesWithLowerBoundFromAnyHint) {
  std::mt19937_64 rng(3);
  for (const std::size_t n : {0u, 1u, 63u, 64u, 65u, 1000u, 4096u, 4097u, 5000u, 300000u}) {
    std::vector<std::int64_t> v;
    sampled_index index;
    std::int64_t t = -50;
    for (std::size_t i = 0; i < n; ++i) {
      t += static_cast<std::int64_t>(rng() % 4 == 0 ? 0 : rng() % 100); // duplicates too
      index.on_append(v.size(), t);
      v.push_back(t);
    }
    for (int q = 0; q < 3000; ++q) {
      const std::size_t from = n == 0 ? 0 : rng() % (n + 1);
      const std::int64_t target =
          static_cast<std::int64_t>(rng() % (static_cast<std::uint64_t>(t) + 200)) - 100;
      const auto expect = static_cast<std::size_t>(
          std::lower_bound(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(), target) -
          v.begin());
      ASSERT_EQ(index.lower_bound(v, from, target), expect)
          << "n " << n << " from " << from << " t " << target;
    }
  }
}

TEST(SampledIndex, HintPastTheEndGivesTheEnd) {
  std::vector<std::int64_t> v{1, 2, 3};
  sampled_index index;
  for (std::size_t i = 0; i < v.size(); ++i)
    index.on_append(i, v[i]);
  EXPECT_EQ(index.lower_bound(v, 7, 0), 3u);
  EXPECT_EQ(index.lower_bound(v, 0, 4), 3u);
  EXPECT_EQ(index.lower_bound(v, 1, 0), 1u);
}

} // namespace
