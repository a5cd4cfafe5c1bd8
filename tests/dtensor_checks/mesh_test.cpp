// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
#include <tensordiag/core/error.hpp>
#include <tensordiag/dtensor_checks/mesh.hpp>

#include <gtest/gtest.h>

namespace {
using namespace tdiag::dtensor;

TEST(DeviceMesh, CoordinatesAreRowMajor) {
  const device_mesh mesh({2, 4});
  EXPECT_EQ(mesh.num_devices(), 8);
  EXPECT_EQ(mesh.coordinate(0), (std::vector<std::int64_t>{0, 0}));
  EXPECT_EQ(mesh.coordinate(5), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(mesh.coordinate(7), (std::vector<std::int64_t>{1, 3}));
}

TEST(DeviceMesh, PrintsLikePyTorch) {
  const device_mesh mesh({2, 4});
  EXPECT_EQ(mesh.to_string(), "(2, 4)");
  EXPECT_EQ(mesh.to_torch_string(), "DeviceMesh((2, 4), 'cpu', stride=(4, 1))");
  EXPECT_EQ(device_mesh({8}).to_string(), "(8,)");
  EXPECT_EQ(device_mesh({2, 4}, {"dp", "tp"}).dim_label(1), "mesh dim 1 (tp)");
}

TEST(ParseMesh, AcceptsCommonForms) {
  EXPECT_EQ(parse_mesh("2,4").shape(), (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(parse_mesh("(2, 4)").shape(), (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(parse_mesh("[8]").shape(), (std::vector<std::int64_t>{8}));
  EXPECT_EQ(parse_mesh("(8,)").shape(), (std::vector<std::int64_t>{8}));
  const auto named = parse_mesh("dp=2,tp=4");
  EXPECT_EQ(named.names(), (std::vector<std::string>{"dp", "tp"}));
}

TEST(ParseMesh, RejectsBadSizes) {
  EXPECT_THROW((void)parse_mesh("2,x"), tdiag::input_error);
  EXPECT_THROW((void)parse_mesh("0,4"), tdiag::input_error);
  EXPECT_THROW((void)parse_mesh(""), tdiag::input_error);
  EXPECT_THROW((void)parse_mesh("1024,1024"), tdiag::input_error);
  EXPECT_THROW((void)parse_mesh("1,1,1,1,1,1,1,1,1"), tdiag::input_error);
}

} // namespace
