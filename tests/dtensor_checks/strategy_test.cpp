// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/dtensor_checks/strategy.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

scored_candidate cand(placement_list in, double total) {
  scored_candidate c;
  c.strategy.outputs = {in};
  c.strategy.inputs = {in};
  c.costs = {total};
  c.total = total;
  return c;
}

TEST(SelectStrategy, SingleCandidateWins) {
  const placement_list cur{placement::shard(0)};
  const auto s = select_strategy({cand({placement::replicate()}, 99.0)}, {&cur});
  EXPECT_EQ(s.index, 0u);
  EXPECT_EQ(s.reason, selection_reason::only_candidate);
}

TEST(SelectStrategy, PrefersTheLastZeroCostMatchThenFirstZeroThenFirstMinimum) {
  const placement_list cur{placement::shard(0)};
  const auto S0 = placement_list{placement::shard(0)};
  const auto R = placement_list{placement::replicate()};
  const auto S1 = placement_list{placement::shard(1)};
  auto s = select_strategy({cand(R, 0.0), cand(S0, 0.0), cand(S1, 0.0), cand(S0, 0.0)}, {&cur});
  EXPECT_EQ(s.index, 3u);
  EXPECT_EQ(s.reason, selection_reason::no_redistribute);
  s = select_strategy({cand(R, 5.0), cand(S1, 0.0), cand(R, 0.0)}, {&cur});
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.reason, selection_reason::zero_cost);
  s = select_strategy({cand(R, 5.0), cand(S1, 3.0), cand(R, 3.0)}, {&cur});
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.reason, selection_reason::min_cost);
  s = select_strategy({cand(R, 5.0), cand(S1, -0.1), cand(R, 0.0)}, {&cur});
  EXPECT_EQ(s.index, 1u);
  EXPECT_EQ(s.reason, selection_reason::negative_cost);
}

} // namespace
