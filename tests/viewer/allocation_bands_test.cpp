// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/viewer/allocation_bands.hpp>

#include <gtest/gtest.h>

namespace {

using namespace tdiag::view;

TEST(AllocationBands, StackedBandsShiftDownWhenALowerOneIsFreed) {
  std::vector<allocation> a(3);
  a[0] = {0x1000, 100, 0, 50};
  a[1] = {0x2000, 10, 5, 100};
  a[2] = {0x3000, 1000, 10, 100};
  const auto bands = allocation_bands::build(a, 2); // the two largest: 0 and 2
  ASSERT_EQ(bands.bands().size(), 2u);
  EXPECT_EQ(bands.bands()[0].allocation, 0u);
  EXPECT_EQ(bands.bands()[1].allocation, 2u);
  EXPECT_EQ(bands.base_at(1, 20).value(), 100); // on top of allocation 0
  EXPECT_EQ(bands.base_at(1, 60).value(), 0);   // allocation 0 freed at 50
  EXPECT_FALSE(bands.base_at(0, 60).has_value());
  EXPECT_EQ(bands.hit_test(20, 50).value(), 0u);
  EXPECT_EQ(bands.hit_test(20, 150).value(), 1u);
  EXPECT_EQ(bands.hit_test(60, 50).value(), 1u);
  EXPECT_FALSE(bands.hit_test(60, 5000).has_value());
}

} // namespace
