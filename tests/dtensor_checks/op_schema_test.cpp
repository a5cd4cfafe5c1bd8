// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/op_schema.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {
using namespace tdiag::dtensor;

TEST(TensorInputs, FlattensTensorListsInOrder) {
  const auto c = test::call("aten.cat.default", "2", {"[f32[4] (R); f32[2] (S(0))]", "0"});
  const auto inputs = tensor_inputs(c);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_TRUE(inputs[1].in_list);
  EXPECT_EQ(inputs[1].list_index, 1u);
  EXPECT_EQ(inputs[1].arg_index, 0u);
  EXPECT_EQ(inputs[1].spec->shape(), (shape_t{2}));
}

TEST(OpArg, PrintsEveryKind) {
  EXPECT_EQ(to_string(op_arg::of_ints({1, 2})), "[1, 2]");
  EXPECT_EQ(to_string(op_arg::of_bool(true)), "True");
  EXPECT_EQ(to_string(op_arg{}), "None");
  EXPECT_EQ(to_torch_string(op_arg::of(parse_tensor_spec("f32[4] (S(0))", 1))),
            "Spec(f32[4](S(0)))");
}

} // namespace
