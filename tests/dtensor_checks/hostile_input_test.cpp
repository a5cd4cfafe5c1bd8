// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// Sizes, counts and nesting from outside (a case file, a --arg) that used to overflow or exhaust
// memory: each is refused with a diagnostic, in bounded time and memory.
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/case_io.hpp>
#include <tensordiag/dtensor_checks/explain.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;
using test::call;

TEST(HostileInput, SplitIntoTooManyPiecesIsRefusedBeforeAllocating) {
  setenv("TDIAG_MEMORY_LIMIT", "64M", 1);
  // 2^40 size-1 pieces would need terabytes of output descriptions.
  const auto e = test::rejection(call("aten.split.Tensor", "2", {"f32[1099511627776] (R)", "1"}));
  unsetenv("TDIAG_MEMORY_LIMIT");
  EXPECT_EQ(e.diag().code, codes::bad_arguments);
  EXPECT_NE(std::string(e.what()).find("1099511627776 pieces"), std::string::npos) << e.what();
}

TEST(HostileInput, SpecsWhoseElementCountOverflowsAreRefused) {
  try {
    (void)parse_arg("f32[1099511627776,1099511627776] (R)", 1);
    FAIL() << "accepted";
  } catch (const tdiag::input_error& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^50 elements"), std::string::npos) << e.what();
  }
  EXPECT_EQ(numel({std::int64_t{1} << 40, std::int64_t{1} << 40}),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(numel_fits({std::int64_t{1} << 40, std::int64_t{1} << 40}));
  EXPECT_TRUE(numel_fits({std::int64_t{1} << 25, std::int64_t{1} << 25}));
}

TEST(HostileInput, ViewSizesWhoseProductOverflowsAreAViewError) {
  const auto e = test::rejection(
      call("aten.view.default", "2", {"f32[16] (R)", "[1099511627776, 1099511627776]"}));
  EXPECT_EQ(e.diag().code, codes::view_size);
}

TEST(HostileInput, DuplicateCollectivesInExpectCommsAreMalformed) {
  const auto file = parse_cases(
      R"j({"id":"dup","op":"aten.mm.default","mesh":[2],"args":[{"tensor":{"shape":[4,8],)j"
      R"j("dtype":"float32","placements":["S(0)"]}},{"tensor":{"shape":[8,4],"dtype":"float32",)j"
      R"j("placements":["R"]}}],"expect":{"ok":true,"comms":{"all_gather":9223372036854775807,)j"
      R"j("all_gather":9223372036854775807}}})j");
  ASSERT_EQ(file.errors.size(), 1u);
  EXPECT_NE(file.errors[0].message.find("names 'all_gather' twice"), std::string::npos)
      << file.errors[0].message;
}

TEST(HostileInput, DeeplyNestedArgIsRefusedCheaply) {
  const std::string nested = std::string(60000, '[') + std::string(60000, ']');
  EXPECT_THROW((void)parse_arg(nested, 1), tdiag::input_error);
  const std::string spec = "f32[" + std::string(60000, '[') + "1" + std::string(60000, ']') + "]";
  try {
    (void)parse_arg(spec, 1);
    FAIL() << "accepted";
  } catch (const tdiag::input_error& e) {
    EXPECT_LT(std::string(e.what()).size(), 2000u); // the 120 KB value is cut, not echoed
  }
}

TEST(HostileInput, ATensorTheOpDoesNotTakeIsABadArgument) {
  // mm reads self and mat2; a third tensor used to leave every strategy one input short.
  const auto mm = test::rejection(
      call("aten.mm.default", "2", {"f32[4,8] (S(0))", "f32[8,4] (R)", "f32[4,8] (S(0))"}));
  EXPECT_EQ(mm.diag().code, codes::bad_arguments);
  EXPECT_NE(std::string(mm.what()).find("arg 2 (arg2) is a tensor the op does not take"),
            std::string::npos)
      << mm.what();
  // A tensor where a reduction's rule reads a plain value it never looks at.
  const auto sum =
      test::rejection(call("aten.sum.default", "2", {"f32[4,8] (S(0))", "f32[4,8] (R)"}));
  EXPECT_EQ(sum.diag().code, codes::bad_arguments);
}

} // namespace
