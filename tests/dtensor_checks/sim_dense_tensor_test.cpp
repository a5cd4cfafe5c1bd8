// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/sim/dense_tensor.hpp>
#include <tensordiag/dtensor_checks/sim/distribute.hpp>
#include <tensordiag/dtensor_checks/sim/reference_ops.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {

using namespace tdiag::dtensor;
using namespace tdiag::dtensor::sim;

dense_tensor iota(shape_t shape, dtype type = dtype::float64) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = static_cast<double>(i + 1);
  return dense_tensor::from_values(std::move(shape), type, v);
}

TEST(DenseTensor, Float32RoundsOnStore) {
  dense_tensor t({1}, dtype::float32);
  t.set_flat(0, 0.1);
  EXPECT_EQ(t.flat(0), static_cast<double>(0.1f));
  EXPECT_NE(t.flat(0), 0.1);
}

TEST(DenseTensor, TransposeViewSharesStorageAndViewFollowsTorchRules) {
  const auto a = iota({2, 3});
  const auto t = a.as_strided({3, 2}, {1, 3}, 0);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.at({2, 1}), 6.0);
  EXPECT_THROW((void)t.view({6}), tdiag::input_error); // torch: use reshape
  EXPECT_EQ(a.view({3, 2}).at({2, 1}), 6.0);
  EXPECT_TRUE(dense_tensor({4, 0}, dtype::float32).is_contiguous());
}

TEST(DenseTensor, RejectsUnsupportedDtypeAndBadIndex) {
  EXPECT_THROW(dense_tensor({2}, dtype::float16), tdiag::input_error);
  EXPECT_THROW((void)iota({2, 2}).at({2, 0}), tdiag::input_error);
}

TEST(ReferenceOps, CoverTheCorpusOps) {
  EXPECT_EQ(reference_registry::builtin().size(), 36u); // 37 with maximum's scalar form
  const auto& mm = *reference_registry::builtin().find("aten.mm.default");
  const auto out = mm.run({sim_arg::of(iota({2, 3})), sim_arg::of(iota({3, 2}))});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].values(), (std::vector<double>{22, 28, 49, 64}));
}

TEST(ReferenceOps, MaxDimReturnsFirstIndexAndLayerNormNormalises) {
  const auto& max_dim = *reference_registry::builtin().find("aten.max.dim");
  const auto x = dense_tensor::from_values({2, 3}, dtype::float64, {1, 5, 5, 7, 2, 3});
  const auto out = max_dim.run({sim_arg::of(x), sim_arg::of_int(1), sim_arg::of_bool(false)});
  EXPECT_EQ(out[0].values(), (std::vector<double>{5, 7}));
  EXPECT_EQ(out[1].values(), (std::vector<double>{1, 0}));
  const auto& ln = *reference_registry::builtin().find("aten.native_layer_norm.default");
  const auto y =
      ln.run({sim_arg::of(iota({2, 4})), sim_arg::of_ints({4}), {}, {}, sim_arg::of_float(0.0)});
  ASSERT_EQ(y.size(), 3u);
  double total = 0.0;
  for (auto v : y[0].values())
    total += v;
  EXPECT_NEAR(total, 0.0, 1e-12);
  EXPECT_EQ(y[1].shape(), (shape_t{2, 1}));
}

TEST(ReferenceOps, ShapeErrorIsAnInputError) {
  const auto& add = *reference_registry::builtin().find("aten.add.Tensor");
  EXPECT_THROW((void)add.run({sim_arg::of(iota({2, 3})), sim_arg::of(iota({4}))}),
               tdiag::input_error);
}

TEST(Distribute, UnevenShardsFollowTorchChunk) {
  const auto full = iota({7, 2});
  const device_mesh mesh({4});
  const auto pieces = distribute(full, {placement::shard(0)}, mesh, 1);
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[0].shape(), (shape_t{2, 2}));
  EXPECT_EQ(pieces[3].shape(), (shape_t{1, 2}));
  EXPECT_EQ(pieces[3].values(), (std::vector<double>{13, 14}));
  assembly_issue issue;
  const auto back = assemble(pieces, {placement::shard(0)}, mesh, full.shape(), 0.0, issue);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->values(), full.values());
}

TEST(Distribute, PartialPiecesDifferAndReduceBack) {
  const auto full = iota({3, 4});
  const device_mesh mesh({2, 2});
  for (auto op : {reduce_op::sum, reduce_op::avg, reduce_op::max, reduce_op::min}) {
    const placement_list ps{placement::partial(op), placement::shard(1)};
    const auto pieces = distribute(full, ps, mesh, 7);
    EXPECT_NE(pieces[0].values(), pieces[2].values()); // ranks 0 and 2 differ on mesh dim 0
    assembly_issue issue;
    const auto back = assemble(pieces, ps, mesh, full.shape(), 0.0, issue);
    ASSERT_TRUE(back.has_value());
    for (std::int64_t i = 0; i < full.numel(); ++i)
      EXPECT_NEAR(back->flat(i), full.flat(i), 1e-12);
  }
}

TEST(Distribute, ReplicaDisagreementNamesRanksAndMeshDim) {
  const device_mesh mesh({2, 2});
  auto pieces = distribute(iota({4}), {placement::replicate(), placement::replicate()}, mesh, 1);
  pieces[3].set_flat(2, -1.0);
  assembly_issue issue;
  EXPECT_FALSE(
      assemble(pieces, {placement::replicate(), placement::replicate()}, mesh, {4}, 0.0, issue)
          .has_value());
  EXPECT_EQ(issue.what, assembly_issue::kind::replica_mismatch);
  EXPECT_EQ(issue.mesh_dim, 1u);
  EXPECT_EQ(issue.rank, 3);
  EXPECT_EQ(issue.index, (shape_t{2}));
}

} // namespace
