// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// TDIAG_DISABLE_DEVICE_ASSERTIONS compiles every check to nothing (operands are only type-checked).
#define TDIAG_DISABLE_DEVICE_ASSERTIONS 1
#include <tensordiag/assertions/kernel.hpp>
#include <tensordiag/assertions/launch.hpp>

#include <gtest/gtest.h>

#include "test_support.h"

namespace {
int evaluations = 0;
int count() {
  return ++evaluations;
}

__global__ void disabled_kernel(int n) {
  TDIAG_ASSERT(count() < 0);
  TDIAG_ASSERT(count() < 0, "never {}", count());
  TDIAG_ASSERT_EQ(count(), n);
  TDIAG_CHECK_INDEX(count(), n);
}
} // namespace

class Disabled : public tdiag::test::AssertionsFixture {};

TEST_F(Disabled, ChecksCompileToNothing) {
  tdiag::launch(disabled_kernel, 4, 4)(-1);
  EXPECT_EQ(evaluations, 0);
  EXPECT_FALSE(tdiag::take_failures().has_value());
}
