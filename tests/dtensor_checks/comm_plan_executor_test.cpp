// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/comm/plan_executor.hpp>
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <random>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::comm;
using sim::dense_tensor;

std::vector<placement> choices() {
  return {placement::replicate(),
          placement::shard(0),
          placement::shard(1),
          placement::partial(reduce_op::sum),
          placement::partial(reduce_op::avg),
          placement::partial(reduce_op::max)};
}

std::vector<placement_list> all_lists(std::size_t ndim) {
  std::vector<placement_list> out{{}};
  for (std::size_t m = 0; m < ndim; ++m) {
    std::vector<placement_list> next;
    for (const auto& l : out) {
      for (const auto& p : choices()) {
        auto x = l;
        x.push_back(p);
        next.push_back(std::move(x));
      }
    }
    out = std::move(next);
  }
  // PyTorch drops specs that mix Partial kinds other than {sum, avg}: their reduction order is
  // undefined (max of sums is not sum of maxes).
  std::erase_if(out, [](const placement_list& l) {
    bool max = false;
    bool linear = false;
    for (const auto& p : l) {
      if (p.is_partial())
        (p.op == reduce_op::max ? max : linear) = true;
    }
    return max && linear;
  });
  return out;
}

struct transition {
  placement_list from;
  placement_list to;
  redistribution_plan plan;
};

// Runs every transition on thread ranks and compares with re-sharding the full tensor directly:
// shards and replicas bit for bit, Partial targets through their exact reduction. Integer-valued
// data and power-of-two meshes keep every sum, average and partition exact.
std::size_t check_mesh(const device_mesh& mesh, const shape_t& shape, std::size_t max_pairs) {
  const tensor_meta meta{shape, contiguous_strides(shape), dtype::float64};
  std::vector<double> values(static_cast<std::size_t>(numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>((i * 7) % 23) - 11.0;
  const auto full_int = dense_tensor::from_values(shape, dtype::int64, values);
  const auto full = full_int.to(dtype::float64);
  const auto topo = mesh_topology::build(mesh);
  const auto lists = all_lists(mesh.ndim());
  std::vector<transition> work;
  std::mt19937_64 rng(3);
  const auto total = lists.size() * lists.size();
  for (std::size_t k = 0; k < std::min(total, max_pairs); ++k) {
    const auto pick =
        total <= max_pairs ? k : std::uniform_int_distribution<std::size_t>(0, total - 1)(rng);
    const auto& a = lists[pick / lists.size()];
    const auto& b = lists[pick % lists.size()];
    auto plan = plan_redistribution(mesh, meta, a, b, topo, {true});
    if (plan.first_problem() != nullptr)
      continue;
    work.push_back({a, b, std::move(plan)});
  }
  const auto ranks = static_cast<int>(mesh.num_devices());
  std::vector<std::vector<dense_tensor>> results(
      work.size(), std::vector<dense_tensor>(static_cast<std::size_t>(ranks)));
  std::vector<std::vector<dense_tensor>> sources;
  for (std::size_t w = 0; w < work.size(); ++w) {
    auto pieces = sim::distribute(full_int, work[w].from, mesh, 11 + w);
    for (auto& p : pieces)
      p = p.to(dtype::float64);
    sources.push_back(std::move(pieces));
  }
  run_thread_ranks(ranks, [&](communicator& world) {
    const mesh_communicators mc(world, mesh);
    for (std::size_t w = 0; w < work.size(); ++w) {
      results[w][static_cast<std::size_t>(world.rank())] =
          execute_plan(work[w].plan, meta, sources[w][static_cast<std::size_t>(world.rank())], mc);
    }
  });
  for (std::size_t w = 0; w < work.size(); ++w) {
    const auto label =
        fmt::format("{} {} → {}", mesh.to_string(), to_string(work[w].from), to_string(work[w].to));
    const auto& target = work[w].to;
    bool has_partial = false;
    for (const auto& p : target)
      has_partial = has_partial || p.is_partial();
    if (!has_partial) {
      for (int r = 0; r < ranks; ++r) {
        const auto want = sim::local_piece(full, target, mesh, r);
        const auto& got = results[w][static_cast<std::size_t>(r)];
        EXPECT_EQ(got.shape(), want.shape()) << label << " rank " << r;
        if (got.shape() == want.shape()) {
          EXPECT_EQ(got.values(), want.values()) << label << " rank " << r;
        }
      }
    } else {
      sim::assembly_issue issue;
      const auto back = sim::assemble(results[w], target, mesh, shape, 0.0, issue);
      EXPECT_TRUE(back.has_value()) << label;
      if (back) {
        EXPECT_EQ(back->values(), full.values()) << label;
      }
    }
  }
  return work.size();
}

TEST(PlanExecutor, OneDimMeshesAllTransitions) {
  EXPECT_GT(check_mesh(device_mesh({4}), {7, 6}, 1000), 20u);
  EXPECT_GT(check_mesh(device_mesh({8}), {5, 8}, 1000), 20u);
}

TEST(PlanExecutor, TwoDimMeshesAllTransitions) {
  EXPECT_GT(check_mesh(device_mesh({2, 2}), {7, 6}, 2000), 500u);
  EXPECT_GT(check_mesh(device_mesh({2, 4}), {9, 8}, 400), 200u);
  EXPECT_GT(check_mesh(device_mesh({4, 2}), {6, 5}, 400), 200u);
}

TEST(PlanExecutor, ThreeDimMeshSampledTransitions) {
  EXPECT_GT(check_mesh(device_mesh({2, 2, 2}), {8, 6}, 300), 100u);
}

TEST(PlanExecutor, RefusedStepIsAnError) {
  const device_mesh mesh({2});
  const tensor_meta meta{{4}, {1}, dtype::float64};
  const auto plan =
      plan_redistribution(mesh, meta, {placement::shard(0)}, {placement::partial(reduce_op::sum)},
                          mesh_topology::build(mesh));
  EXPECT_THROW(run_thread_ranks(2,
                                [&](communicator& world) {
                                  const mesh_communicators mc(world, mesh);
                                  (void)execute_plan(plan, meta, dense_tensor({2}, dtype::float64),
                                                     mc);
                                }),
               tdiag::error);
}

} // namespace
