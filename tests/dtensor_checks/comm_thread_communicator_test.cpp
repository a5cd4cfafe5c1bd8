// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::comm;

class ThreadCommunicator : public ::testing::TestWithParam<int> {};

TEST_P(ThreadCommunicator, CollectivesMatchTheirDefinition) {
  const int n = GetParam();
  std::atomic<int> checked{0};
  run_thread_ranks(n, [&](communicator& c) {
    const int r = c.rank();
    ASSERT_EQ(c.size(), n);
    // all_gather: recv[s*2 + k] = 10*s + k
    std::vector<double> send{10.0 * r, 10.0 * r + 1};
    std::vector<double> all(static_cast<std::size_t>(2 * n));
    c.all_gather(send.data(), all.data(), 2, dtype::float64);
    for (int s = 0; s < n; ++s)
      EXPECT_EQ(all[static_cast<std::size_t>(2 * s + 1)], 10.0 * s + 1);
    // all_reduce sum / max / min / avg on int64 and float32
    std::int64_t v = r + 1;
    c.all_reduce(&v, 1, dtype::int64, reduce_op::sum);
    EXPECT_EQ(v, n * (n + 1) / 2);
    float f = static_cast<float>(r);
    c.all_reduce(&f, 1, dtype::float32, reduce_op::max);
    EXPECT_EQ(f, static_cast<float>(n - 1));
    f = static_cast<float>(r + 5);
    c.all_reduce(&f, 1, dtype::float32, reduce_op::min);
    EXPECT_EQ(f, 5.0f);
    double a = 2.0 * r;
    c.all_reduce(&a, 1, dtype::float64, reduce_op::avg);
    EXPECT_DOUBLE_EQ(a, static_cast<double>(n - 1));
    // reduce_scatter: block b of every rank holds b + r; rank r receives sum_s (r + s).
    std::vector<std::int64_t> blocks(static_cast<std::size_t>(n));
    for (int b = 0; b < n; ++b)
      blocks[static_cast<std::size_t>(b)] = b + r;
    std::int64_t mine = 0;
    c.reduce_scatter(blocks.data(), &mine, 1, dtype::int64, reduce_op::sum);
    EXPECT_EQ(mine, static_cast<std::int64_t>(n) * r + n * (n - 1) / 2);
    // all_to_all: rank r sends 100*r + t to rank t.
    std::vector<std::int32_t> out(static_cast<std::size_t>(n));
    std::vector<std::int32_t> in(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t)
      out[static_cast<std::size_t>(t)] = 100 * r + t;
    c.all_to_all(out.data(), in.data(), 1, dtype::int32);
    for (int s = 0; s < n; ++s)
      EXPECT_EQ(in[static_cast<std::size_t>(s)], 100 * s + r);
    // broadcast from the last rank
    std::uint8_t byte = static_cast<std::uint8_t>(r == n - 1 ? 42 : 0);
    c.broadcast(&byte, 1, dtype::uint8, n - 1);
    EXPECT_EQ(byte, 42);
    c.barrier();
    ++checked;
  });
  EXPECT_EQ(checked.load(), n);
}

INSTANTIATE_TEST_SUITE_P(TwoToEightRanks, ThreadCommunicator, ::testing::Range(2, 9));

TEST(ThreadCommunicatorGroups, SplitFormsMeshDimGroups) {
  run_thread_ranks(8, [](communicator& world) {
    mesh_communicators mc(world, device_mesh({2, 4}));
    const auto coord = mc.coordinate();
    EXPECT_EQ(mc.dim(0).size(), 2);
    EXPECT_EQ(mc.dim(1).size(), 4);
    EXPECT_EQ(mc.dim(0).rank(), coord[0]);
    EXPECT_EQ(mc.dim(1).rank(), coord[1]);
    // Sum of world ranks along mesh dim 1 = 4 * 4 * coord0 + 0 + 1 + 2 + 3.
    std::int64_t v = world.rank();
    mc.dim(1).all_reduce(&v, 1, dtype::int64, reduce_op::sum);
    EXPECT_EQ(v, 16 * coord[0] + 6);
  });
}

TEST(ThreadCommunicatorGroups, FailingRankReleasesItsPeers) {
  EXPECT_THROW(run_thread_ranks(4,
                                [](communicator& c) {
                                  if (c.rank() == 2)
                                    throw std::runtime_error("rank 2 broke");
                                  c.barrier();
                                  c.barrier();
                                }),
               std::runtime_error);
}

TEST(ThreadCommunicatorGroups, BadArgumentsAreErrors) {
  auto comms = make_thread_communicators(1);
  double x = 1;
  EXPECT_THROW(comms[0]->broadcast(&x, 1, dtype::float64, 3), tdiag::error);
  EXPECT_THROW(comms[0]->all_reduce(&x, -1, dtype::float64, reduce_op::sum), tdiag::error);
  EXPECT_THROW(comms[0]->all_reduce(&x, 1, dtype::float16, reduce_op::sum), tdiag::error);
  EXPECT_THROW((void)make_thread_communicators(0), tdiag::error);
}

} // namespace
