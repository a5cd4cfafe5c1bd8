// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
// GPU test (label gpu): skips when no CUDA device is usable.
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/runtime/scan_backend.hpp>

#include <cuda_runtime.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::runtime;

#define REQUIRE_GPU()                                                                              \
  do {                                                                                             \
    if (gpu_device_count() == 0)                                                                   \
      GTEST_SKIP() << "no CUDA device usable";                                                     \
  } while (false)

struct device_copy {
  void* ptr = nullptr;
  explicit device_copy(const void* host, std::size_t bytes) {
    EXPECT_EQ(cudaMalloc(&ptr, bytes + 16), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~device_copy() { cudaFree(ptr); }
  device_copy(const device_copy&) = delete;
  device_copy& operator=(const device_copy&) = delete;
};

TEST(CudaScanBackend, HashEqualsHostHashForEveryLengthAndAlignment) {
  REQUIRE_GPU();
  std::vector<unsigned char> host(1 << 20);
  for (std::size_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<unsigned char>((i * 131) ^ (i >> 7));
  const device_copy dev(host.data(), host.size());
  auto backend = make_gpu_scan_backend();
  for (std::int64_t offset : {0, 4, 8, 3}) {
    for (std::int64_t bytes : {0, 1, 7, 64, 4099, 1 << 19}) {
      const auto* d = static_cast<const unsigned char*>(dev.ptr) + offset;
      EXPECT_EQ(backend->hash(d, bytes), host_hash(host.data() + offset, bytes))
          << offset << " " << bytes;
    }
  }
  const auto blocks = backend->block_hashes(dev.ptr, 10'001, 1'000);
  ASSERT_EQ(blocks.size(), 11u);
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const auto len = std::min<std::int64_t>(1000, 10'001 - static_cast<std::int64_t>(b) * 1000);
    EXPECT_EQ(blocks[b], host_hash(host.data() + b * 1000, len)) << b;
  }
}

TEST(CudaScanBackend, NanAndInfScanCountsAndFirstIndices) {
  REQUIRE_GPU();
  std::vector<float> f(1'000'003, 1.0f);
  f[17] = std::numeric_limits<float>::infinity();
  f[900'000] = std::numeric_limits<float>::quiet_NaN();
  f[900'001] = -std::numeric_limits<float>::infinity();
  const device_copy dev(f.data(), f.size() * 4);
  auto backend = make_gpu_scan_backend();
  const auto c =
      backend->scan_nonfinite(dev.ptr, static_cast<std::int64_t>(f.size()), dtype::float32);
  EXPECT_EQ(c.nan, 1);
  EXPECT_EQ(c.pos_inf, 1);
  EXPECT_EQ(c.neg_inf, 1);
  EXPECT_EQ(c.first_nan, 900'000);
  EXPECT_EQ(c.first_inf, 17);
}

TEST(CudaScanBackend, DivergentDeviceReplicaIsFound) {
  REQUIRE_GPU();
  const std::int64_t n = 10'000'000;
  std::vector<float> base(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    base[static_cast<std::size_t>(i)] = static_cast<float>(i % 977);
  auto flipped = base;
  flipped[1'234'567] = -5.0f;
  const device_copy a(base.data(), base.size() * 4);
  const device_copy b(flipped.data(), flipped.size() * 4);
  const tensor_spec spec{tensor_meta{{n}, {1}, dtype::float32}, {placement::replicate()}};
  std::vector<tdiag::report> reports(2);
  comm::run_thread_ranks(2, [&](comm::communicator& world) {
    const comm::mesh_communicators mc(world, device_mesh({2}));
    auto backend = make_gpu_scan_backend();
    const local_tensor local{world.rank() == 0 ? a.ptr : b.ptr, {n}, dtype::float32};
    reports[static_cast<std::size_t>(world.rank())] = check_local_tensor(local, spec, mc, *backend);
  });
  EXPECT_TRUE(reports[0].diagnostics.empty());
  ASSERT_EQ(reports[1].diagnostics.size(), 1u);
  EXPECT_EQ(*reports[1].diagnostics[0].find_field("flat_index"),
            tdiag::field_value(std::int64_t{1'234'567}));
}

} // namespace
