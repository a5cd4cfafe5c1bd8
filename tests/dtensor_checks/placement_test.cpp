// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/placement.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

TEST(Placement, ParsesAndPrintsCorpusNotation) {
  for (const char* text : {"R", "S(0)", "S(3)", "P(sum)", "P(avg)", "P(max)", "P(min)"}) {
    const auto p = parse_placement(text);
    ASSERT_TRUE(p.has_value()) << text;
    EXPECT_EQ(to_string(*p), text);
  }
}

TEST(Placement, ParsesPyTorchReprs) {
  EXPECT_EQ(parse_placement("Shard(dim=2)"), placement::shard(2));
  EXPECT_EQ(parse_placement("Replicate()"), placement::replicate());
  EXPECT_EQ(parse_placement("Partial(max)"), placement::partial(reduce_op::max));
  EXPECT_EQ(parse_placement("Partial()"), placement::partial(reduce_op::sum));
  EXPECT_FALSE(parse_placement("S(x)").has_value());
  EXPECT_FALSE(parse_placement("P(prod)").has_value());
  EXPECT_FALSE(parse_placement("Q").has_value());
}

TEST(Placement, MaskPartialPrintsAsSumButDiffers) {
  const auto mask = placement::partial(reduce_op::sum, true);
  EXPECT_EQ(to_string(mask), "P(sum)");
  EXPECT_NE(mask, placement::partial(reduce_op::sum));
}

TEST(PlacementList, PrintsEveryForm) {
  const auto ps = parse_placements("(S(0), S(0))");
  EXPECT_EQ(to_string(ps), "[S(0), S(0)]");
  EXPECT_EQ(to_compact_string(ps), "S(0)[0]S(0)[1]");
  EXPECT_EQ(to_torch_string(parse_placements("P(sum),R")), "(Partial(sum), Replicate())");
  EXPECT_EQ(to_torch_string(parse_placements("[R]")), "(Replicate(),)");
}

TEST(PlacementList, RejectsBadTextAndOverflow) {
  EXPECT_THROW((void)parse_placements("(S(0), X)"), tdiag::input_error);
  EXPECT_THROW((void)parse_placements("(S(0), R"), tdiag::input_error);
  EXPECT_THROW((void)parse_placements("R,R,R,R,R,R,R,R,R"), tdiag::input_error);
  placement_list full(placement_list::capacity);
  EXPECT_THROW(full.push_back(placement::replicate()), std::length_error);
}

TEST(PlacementList, Predicates) {
  EXPECT_TRUE(all_replicate(parse_placements("R,R")));
  EXPECT_FALSE(all_replicate(parse_placements("R,P(sum)")));
  EXPECT_TRUE(has_shard(parse_placements("R,S(1)")));
}

} // namespace
