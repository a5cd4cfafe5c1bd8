// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/errors.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

TEST(MakeDiagnostic, CarriesCodeOpAndClass) {
  const auto d = make_diagnostic(codes::shard_to_partial, "aten.add_.Tensor",
                                 error_class::limitation, "title", "message", "hint");
  EXPECT_EQ(d.code, "TDIAG-DT-004");
  EXPECT_EQ(d.hint, "hint");
  ASSERT_NE(d.find_field("op"), nullptr);
  EXPECT_EQ(*d.find_field("class"), tdiag::field_value("limitation"));
}

TEST(ShardingError, KeepsTheDiagnostic) {
  const sharding_error e(error_class::user_error,
                         make_diagnostic(codes::inplace_placement, "aten.relu_.default",
                                         error_class::user_error, "t", "relu_ cannot", "fix"));
  EXPECT_STREQ(e.what(), "relu_ cannot");
  EXPECT_EQ(e.diag().code, "TDIAG-DT-003");
  EXPECT_EQ(e.error_kind(), error_class::user_error);
}

} // namespace
