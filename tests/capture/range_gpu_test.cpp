// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// GPU: capture ranges end to end. `tdiag capture --range ...` of range_app.cu, whose phases each
// launch their own kernel (phase_kernel<N>) and open the ranges: the trace must hold exactly the
// phases inside the ranges. Binaries are found beside this test (bin/), as in the staged tree.
#include <tensordiag/trace/load.hpp>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "capture_test_support.hpp"

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

fs::path bin_dir() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}

class CaptureRangeGpu : public ::testing::Test {
protected:
  void SetUp() override {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
      GTEST_SKIP() << "no CUDA GPU: capture ranges are checked on the GPU machine";
    for (const auto& exe : {bin_dir() / "tdiag", bin_dir() / "tdiag_test_capture_range_app"})
      if (!fs::exists(exe))
        GTEST_SKIP() << exe << " is not built";
  }

  // Kernels per phase in the trace of range_app `args` captured with `options`.
  static std::map<int, std::size_t> phases(const std::string& options,
                                           const std::string& args = "") {
    const auto out = test::temp("range") += ".tdtrace";
    const auto r =
        test::run((bin_dir() / "tdiag").string() + " capture -o " + out.string() + " " + options +
                  " -- " + (bin_dir() / "tdiag_test_capture_range_app").string() + " " + args);
    EXPECT_EQ(r.status, 0) << r.output;
    std::map<int, std::size_t> n;
    if (!fs::exists(out))
      return n;
    const auto loaded = trace::load_trace(out);
    for (const auto& k : loaded.trace.kernels.all()) {
      const auto name = loaded.trace.name(k.name);
      const auto at = name.find("phase_kernel<");
      EXPECT_NE(at, std::string_view::npos) << name;
      if (at != std::string_view::npos)
        ++n[name[at + 13] - '0'];
    }
    fs::remove(out);
    return n;
  }
};

TEST_F(CaptureRangeGpu, WithoutRangesEveryPhaseIsCaptured) {
  EXPECT_EQ(phases(""),
            (std::map<int, std::size_t>{{0, 10}, {1, 20}, {2, 10}, {3, 6}, {4, 7}, {5, 10}}));
}

TEST_F(CaptureRangeGpu, ProfilerApiCapturesBetweenStartAndStop) {
  EXPECT_EQ(phases("--range cuda-profiler-api"), (std::map<int, std::size_t>{{1, 20}}));
}

TEST_F(CaptureRangeGpu, NvtxPushPopAndStartEnd) {
  EXPECT_EQ(phases("--range nvtx:tdiag-step"), (std::map<int, std::size_t>{{3, 6}}));
  EXPECT_EQ(phases("--range nvtx:tdiag-epoch"), (std::map<int, std::size_t>{{4, 7}}));
}

TEST_F(CaptureRangeGpu, SeveralRangesCaptureTheirUnion) {
  EXPECT_EQ(phases("--range cuda-profiler-api --range nvtx:tdiag-epoch"),
            (std::map<int, std::size_t>{{1, 20}, {4, 7}}));
}

TEST_F(CaptureRangeGpu, LaunchesCaptureThoseLaunchesOnly) {
  // Launches 12-14 are phase 1's; the range opens after launch 11 returns, closes after 14.
  EXPECT_EQ(phases("--launches 12:15"), (std::map<int, std::size_t>{{1, 3}}));
  EXPECT_EQ(phases("--launches 0:3"), (std::map<int, std::size_t>{{0, 3}}));
}

TEST_F(CaptureRangeGpu, ARangeThatNeverOpensCapturesNothing) {
  EXPECT_TRUE(phases("--range nvtx:never").empty());
}

TEST_F(CaptureRangeGpu, DelayAndDurationFollowTheClock) {
  // Phase 0 runs at once, phase 1 about 2.5 s later, phase 2 about 5 s later.
  EXPECT_EQ(phases("--delay 1.5 --duration 2", "timed"), (std::map<int, std::size_t>{{1, 10}}));
}

} // namespace
} // namespace tdiag::capture
