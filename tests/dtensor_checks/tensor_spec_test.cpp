// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/tensor_spec.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

std::vector<std::int64_t> sizes(std::int64_t n, std::int64_t parts) {
  std::vector<std::int64_t> out;
  for (std::int64_t r = 0; r < parts; ++r)
    out.push_back(chunk_of(n, parts, r).size);
  return out;
}

TEST(Chunk, FollowsTorchChunk) {
  EXPECT_EQ(sizes(5, 4), (std::vector<std::int64_t>{2, 2, 1, 0}));
  EXPECT_EQ(sizes(6, 4), (std::vector<std::int64_t>{2, 2, 2, 0}));
  EXPECT_EQ(sizes(10, 4), (std::vector<std::int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(sizes(2, 8), (std::vector<std::int64_t>{1, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(chunk_of(5, 4, 3).offset, 5);
  EXPECT_EQ(chunk_of(10, 4, 3).offset, 9);
  EXPECT_EQ(chunk_of(2, 8, 7).offset, 2);
}

TEST(LocalViews, NestShardsOfOneDim) {
  const device_mesh mesh({2, 2});
  const auto spec = parse_tensor_spec("f32[10] (S(0),S(0))", 2);
  const auto views = local_views(spec, mesh);
  ASSERT_EQ(views.size(), 4u);
  const std::int64_t expect_size[] = {3, 2, 3, 2};
  const std::int64_t expect_offset[] = {0, 3, 5, 8};
  for (std::size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(views[r].shape[0], expect_size[r]) << r;
    EXPECT_EQ(views[r].offset[0], expect_offset[r]) << r;
  }
}

TEST(LocalViews, UnevenDoubleShard) {
  const device_mesh mesh({4, 2});
  const auto views = local_views(parse_tensor_spec("f32[12,3] (S(0),S(0))", 2), mesh);
  EXPECT_EQ(views[0].shape, (shape_t{2, 3}));
  EXPECT_EQ(views[1].shape, (shape_t{1, 3}));
}

TEST(TensorSpec, ParsesAndPrintsNotation) {
  const auto spec = parse_tensor_spec("f32[12,16] (S(0),P(sum))", 2);
  EXPECT_EQ(spec.shape(), (shape_t{12, 16}));
  EXPECT_EQ(spec.meta.stride, (shape_t{16, 1}));
  EXPECT_EQ(to_string(spec), "f32[12, 16] [S(0), P(sum)]");
  EXPECT_EQ(to_torch_string(spec), "Spec(f32[12, 16](S(0)P(sum)))");
  const auto plain = parse_tensor_spec("int64[3]", 2);
  EXPECT_EQ(plain.meta.type, dtype::int64);
  EXPECT_EQ(to_string(plain.placements), "[R, R]");
  EXPECT_EQ(parse_tensor_spec("f32[] (R)", 1).ndim(), 0u);
}

TEST(TensorSpec, RejectsBadNotation) {
  EXPECT_THROW((void)parse_tensor_spec("q32[4]", 1), tdiag::input_error);
  EXPECT_THROW((void)parse_tensor_spec("f32[4", 1), tdiag::input_error);
  EXPECT_THROW((void)parse_tensor_spec("f32[a] (R)", 1), tdiag::input_error);
  EXPECT_THROW((void)parse_tensor_spec("f32[4] (S(0), Z)", 2), tdiag::input_error);
}

TEST(TensorSpec, ValidatesAgainstMesh) {
  const device_mesh mesh({2, 4});
  EXPECT_THROW(validate_spec(parse_tensor_spec("f32[4] (R)", 1), mesh, "x"), tdiag::input_error);
  EXPECT_THROW(validate_spec(parse_tensor_spec("f32[4] (S(1),R)", 2), mesh, "x"),
               tdiag::input_error);
  EXPECT_NO_THROW(validate_spec(parse_tensor_spec("f32[4] (S(0),R)", 2), mesh, "x"));
  EXPECT_EQ(num_shards(mesh, parse_placements("S(0),P(sum)")), 2);
  EXPECT_EQ(global_bytes(parse_tensor_spec("f32[4,4]", 2).meta), 64);
}

} // namespace
