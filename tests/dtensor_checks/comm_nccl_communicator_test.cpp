// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
// GPU test (label gpu): a 1-rank NCCL communicator (one GPU); skips without a CUDA device.
#include <tensordiag/dtensor_checks/comm/nccl_communicator.hpp>
#include <tensordiag/dtensor_checks/comm/plan_executor.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::comm;

std::unique_ptr<communicator> one_rank(bool host_buffers) {
  auto store = make_file_store(std::filesystem::temp_directory_path(),
                               "tdiag-nccl-" + std::to_string(::getpid()));
  nccl_options options;
  options.host_buffers = host_buffers;
  return make_nccl_communicator(0, 1, *store, options);
}

TEST(NcclCommunicator, OneRankCollectivesOnDeviceAndHostBuffers) {
  if (runtime::gpu_device_count() == 0)
    GTEST_SKIP() << "no CUDA device usable";
  EXPECT_GT(nccl_version(), 0);
  auto host = one_rank(true);
  ASSERT_EQ(host->size(), 1);
  EXPECT_FALSE(host->device_memory());
  double v[3] = {1, 2, 3};
  host->all_reduce(v, 3, dtype::float64, reduce_op::sum);
  EXPECT_EQ(v[2], 3.0);
  double g[3] = {};
  host->all_gather(v, g, 3, dtype::float64);
  EXPECT_EQ(g[1], 2.0);
  std::int64_t t[2] = {5, 6};
  std::int64_t r[2] = {};
  host->all_to_all(t, r, 2, dtype::int64);
  EXPECT_EQ(r[1], 6);
  host->reduce_scatter(t, r, 2, dtype::int64, reduce_op::max);
  EXPECT_EQ(r[0], 5);
  host->broadcast(v, 3, dtype::float64, 0);
  host->barrier();
  auto sub = host->split(0, 0);
  EXPECT_EQ(sub->size(), 1);

  auto dev = one_rank(false);
  EXPECT_TRUE(dev->device_memory());
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * sizeof(float)), cudaSuccess);
  const float init[4] = {1, 2, 3, 4};
  cudaMemcpy(d, init, sizeof(init), cudaMemcpyHostToDevice);
  dev->all_reduce(d, 4, dtype::float32, reduce_op::avg);
  float back[4] = {};
  cudaMemcpy(back, d, sizeof(back), cudaMemcpyDeviceToHost);
  EXPECT_EQ(back[3], 4.0f);
  cudaFree(d);
}

TEST(NcclCommunicator, RuntimeChecksAndPlansRunOverNccl) {
  if (runtime::gpu_device_count() == 0)
    GTEST_SKIP() << "no CUDA device usable";
  auto world = one_rank(true);
  const mesh_communicators mc(*world, device_mesh({1}));
  const tensor_meta meta{{6, 4}, {4, 1}, dtype::float64};
  std::vector<double> values(24);
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<double>(i);
  const auto local = sim::dense_tensor::from_values({6, 4}, dtype::float64, values);
  const auto plan =
      plan_redistribution(device_mesh({1}), meta, {placement::partial(reduce_op::sum)},
                          {placement::shard(1)}, mesh_topology::build(device_mesh({1})));
  EXPECT_EQ(execute_plan(plan, meta, local, mc).values(), values);
  double* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, values.size() * sizeof(double)), cudaSuccess);
  cudaMemcpy(d, values.data(), values.size() * sizeof(double), cudaMemcpyHostToDevice);
  auto backend = runtime::make_gpu_scan_backend();
  const auto report = runtime::check_local_tensor(
      {d, {6, 4}, dtype::float64}, tensor_spec{meta, {placement::replicate()}}, mc, *backend);
  EXPECT_TRUE(report.diagnostics.empty());
  cudaFree(d);
}

} // namespace
