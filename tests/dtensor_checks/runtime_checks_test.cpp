// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/report_io.hpp>
#include <tensordiag/dtensor_checks/comm/thread_communicator.hpp>
#include <tensordiag/dtensor_checks/runtime/element_hash.hpp>
#include <tensordiag/dtensor_checks/runtime/runtime_checks.hpp>
#include <tensordiag/dtensor_checks/sim/validation_codes.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <mutex>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::runtime;
namespace codes = tdiag::dtensor::validation_codes;

tensor_spec spec_of(shape_t shape, placement_list ps, dtype type = dtype::float32) {
  return tensor_spec{tensor_meta{shape, contiguous_strides(shape), type}, std::move(ps)};
}

// Runs the checks on every rank of `mesh`; `make(rank)` gives each rank's local data.
template <typename T, typename Make>
std::vector<tdiag::report> run(const device_mesh& mesh, const tensor_spec& spec, Make make,
                               const check_options& options = {}) {
  std::vector<tdiag::report> reports(static_cast<std::size_t>(mesh.num_devices()));
  comm::run_thread_ranks(static_cast<int>(mesh.num_devices()), [&](comm::communicator& world) {
    const comm::mesh_communicators mc(world, mesh);
    std::vector<T> data;
    shape_t shape;
    make(world.rank(), data, shape);
    auto backend = make_host_scan_backend();
    const local_tensor local{data.data(), shape, spec.meta.type};
    reports[static_cast<std::size_t>(world.rank())] =
        check_local_tensor(local, spec, mc, *backend, options);
  });
  return reports;
}

std::size_t total(const std::vector<tdiag::report>& rs) {
  std::size_t n = 0;
  for (const auto& r : rs)
    n += r.diagnostics.size();
  return n;
}

TEST(ElementHash, SingleWordChangesAlwaysChangeTheHash) {
  std::vector<std::uint32_t> a(1000, 7u);
  const auto h = host_hash(a.data(), 4000);
  for (std::uint32_t v : {0u, 8u, 0x80000000u}) {
    auto b = a;
    b[517] = v;
    EXPECT_NE(host_hash(b.data(), 4000), h);
  }
  auto swapped = a;
  swapped[1] = 9u;
  auto moved = a;
  moved[2] = 9u;
  EXPECT_NE(host_hash(swapped.data(), 4000), host_hash(moved.data(), 4000)); // position matters
  EXPECT_NE(host_hash(a.data(), 4000), host_hash(a.data(), 3999));           // length matters
}

TEST(RuntimeChecks, FlippedElementAmongTenMillionIsFoundWithItsIndex) {
  const std::int64_t n = 10'000'000;
  const auto spec = spec_of({n}, {placement::replicate(), placement::replicate()});
  const std::int64_t flipped = 7'654'321;
  const auto reports = run<float>(
      device_mesh({2, 2}), spec, [&](std::int64_t rank, std::vector<float>& d, shape_t& s) {
        d.resize(static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i)
          d[static_cast<std::size_t>(i)] = static_cast<float>(i % 1000) * 0.5f;
        if (rank == 3)
          d[static_cast<std::size_t>(flipped)] = -1.0f;
        s = {n};
      });
  ASSERT_EQ(total(reports),
            2u); // rank 3 diverges along mesh dim 0 (from rank 1) and dim 1 (from rank 2)
  ASSERT_EQ(reports[3].diagnostics.size(), 2u);
  const auto& d = reports[3].diagnostics[0];
  EXPECT_EQ(d.code, codes::replica_divergence);
  EXPECT_EQ(*d.find_field("flat_index"), tdiag::field_value(flipped));
  EXPECT_EQ(*d.find_field("rank"), tdiag::field_value(std::int64_t{3}));
  EXPECT_NE(d.message.find("7654321"), std::string::npos) << d.message;
}

TEST(RuntimeChecks, IdenticalReplicasGiveNoFindings) {
  const auto spec = spec_of({6, 5}, {placement::shard(0), placement::replicate()});
  const auto reports = run<float>(
      device_mesh({4, 2}), spec, [&](std::int64_t rank, std::vector<float>& d, shape_t& s) {
        const auto rows = chunk_of(6, 4, rank / 2).size;
        d.assign(static_cast<std::size_t>(rows * 5), static_cast<float>(rank / 2));
        s = {rows, 5};
      });
  EXPECT_EQ(total(reports), 0u) << tdiag::to_text(reports[0]);
}

TEST(RuntimeChecks, WrongLocalShapeNamesDimAndChunks) {
  const auto spec = spec_of({7, 4}, {placement::shard(0)});
  const auto reports =
      run<float>(device_mesh({4}), spec, [&](std::int64_t rank, std::vector<float>& d, shape_t& s) {
        const auto rows = rank == 3 ? 2 : chunk_of(7, 4, rank).size; // rank 3 should hold 1 row
        d.assign(static_cast<std::size_t>(rows * 4), 1.0f);
        s = {rows, 4};
      });
  ASSERT_EQ(total(reports), 1u);
  const auto& d = reports[3].diagnostics.at(0);
  EXPECT_EQ(d.code, codes::local_shape);
  EXPECT_NE(d.message.find("2, 2, 2, 1"), std::string::npos) << d.message;
}

TEST(RuntimeChecks, NanAndInfAreCountedPerRank) {
  const auto spec = spec_of({8}, {placement::shard(0)}, dtype::float64);
  const auto reports = run<double>(device_mesh({2}), spec,
                                   [&](std::int64_t rank, std::vector<double>& d, shape_t& s) {
                                     d.assign(4, 1.0);
                                     if (rank == 1) {
                                       d[2] = std::numeric_limits<double>::quiet_NaN();
                                       d[3] = -std::numeric_limits<double>::infinity();
                                     }
                                     s = {4};
                                   });
  ASSERT_EQ(total(reports), 1u);
  const auto& d = reports[1].diagnostics.at(0);
  EXPECT_EQ(d.code, codes::non_finite);
  EXPECT_EQ(*d.find_field("nan"), tdiag::field_value(std::int64_t{1}));
  EXPECT_EQ(*d.find_field("neg_inf"), tdiag::field_value(std::int64_t{1}));
}

TEST(RuntimeChecks, PartialSumIsComparedWithAReference) {
  const auto spec = spec_of({3}, {placement::partial(reduce_op::sum)}, dtype::float64);
  auto make = [](std::int64_t rank, std::vector<double>& d, shape_t& s) {
    d = {1.0 * static_cast<double>(rank), 2.0, 3.0};
    s = {3};
  };
  check_options options;
  options.partial_reference =
      tdiag::dtensor::sim::dense_tensor::from_values({3}, dtype::float64, {6.0, 8.0, 12.0});
  EXPECT_EQ(total(run<double>(device_mesh({4}), spec, make, options)), 0u);
  options.partial_reference =
      tdiag::dtensor::sim::dense_tensor::from_values({3}, dtype::float64, {6.0, 8.0, 13.0});
  const auto bad = run<double>(device_mesh({4}), spec, make, options);
  ASSERT_EQ(total(bad), 1u);
  EXPECT_EQ(bad[0].diagnostics[0].code, codes::partial_mismatch);
}

TEST(RuntimeChecks, PartialOverflowIsNotFinite) {
  const auto spec = spec_of({2}, {placement::partial(reduce_op::sum)}, dtype::float64);
  const auto reports =
      run<double>(device_mesh({2}), spec, [](std::int64_t, std::vector<double>& d, shape_t& s) {
        d = {1.0, std::numeric_limits<double>::max()};
        s = {2};
      });
  ASSERT_EQ(total(reports), 1u);
  EXPECT_EQ(reports[0].diagnostics[0].code, codes::partial_non_finite);
}

} // namespace
