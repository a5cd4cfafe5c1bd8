// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Expected permutations from NumPy 1.24.2 (Debian): np.argsort(a, kind="quicksort").
#include <tensordiag/trace/detail/numpy_sort.hpp>

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using tdiag::trace::detail::numpy_argsort;

TEST(NumpySort, TiesComeOutInNumpysOrder) {
  // a = [(i * 7919) % 13 for i in range(40)]
  std::vector<std::int64_t> a;
  for (int i = 0; i < 40; ++i)
    a.push_back((i * 7919) % 13);
  const std::vector<std::size_t> numpy{0,  26, 13, 39, 20, 7,  33, 14, 27, 1,  34, 8,  21, 2,
                                       15, 28, 35, 22, 9,  16, 29, 3,  10, 36, 23, 30, 4,  17,
                                       24, 11, 37, 18, 31, 5,  38, 12, 25, 32, 6,  19};
  EXPECT_EQ(numpy_argsort(a), numpy);
}

TEST(NumpySort, SortsLargeInputs) {
  std::vector<std::int64_t> a;
  for (int i = 0; i < 5000; ++i)
    a.push_back((i * 104729) % 977);
  const auto order = numpy_argsort(a);
  ASSERT_EQ(order.size(), a.size());
  for (std::size_t i = 1; i < order.size(); ++i)
    ASSERT_LE(a[order[i - 1]], a[order[i]]) << i;
  auto sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    ASSERT_EQ(sorted[i], i);
  EXPECT_TRUE(numpy_argsort(std::vector<std::int64_t>{}).empty());
}

} // namespace
