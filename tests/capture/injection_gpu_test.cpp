// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// GPU: an unmodified program (samples/capture_demo) captured through CUDA_INJECTION64_PATH and
// through `tdiag capture`; the trace must hold exactly the work the program did. Binaries are
// found beside this test (bin/) and the library in ../lib, as in the build and the staged tree.
#include <tensordiag/trace/tdtrace_reader.hpp>

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

fs::path bin_dir() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}
fs::path library() {
  return bin_dir() / ".." / "lib" / "libtdiag_capture.so";
}
fs::path temp_trace(const std::string& name) {
  return fs::temp_directory_path() / (name + "." + std::to_string(getpid()) + ".tdtrace");
}

bool have_gpu() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

struct counts {
  std::size_t kernels = 0, memcpy = 0, memset = 0, pool_allocs = 0, pool_frees = 0,
              driver_allocs = 0, launch_stacks = 0;
};

counts count(const trace::trace& t) {
  counts c;
  for (const auto& k : t.kernels.all()) {
    const auto name = t.name(k.name);
    if (name.find("scale_kernel") != std::string_view::npos ||
        name.find("add_kernel") != std::string_view::npos)
      ++c.kernels;
  }
  for (const auto& x : t.copies.all())
    (x.kind == trace::copy_kind::memset ? c.memset : c.memcpy) += 1;
  for (const auto& m : t.memory.all()) {
    if (t.detail_of(m).user_metadata != trace::no_string)
      continue;
    c.pool_allocs += m.action == trace::memory_action::alloc;
    c.pool_frees += m.action == trace::memory_action::free_completed;
    c.driver_allocs += m.action == trace::memory_action::segment_alloc && m.device >= 0;
  }
  for (const auto& a : t.api_calls.all())
    if (a.stack != trace::no_stack && t.name(a.name).find("aunch") != std::string_view::npos)
      ++c.launch_stacks;
  return c;
}

// `api`: the capture recorded API calls (--api, --stacks); by default it records none.
void expect_demo_counts(const trace::trace& t, int iterations, bool api) {
  const counts c = count(t);
  EXPECT_EQ(c.kernels, 2u * iterations);
  EXPECT_EQ(c.memcpy, 2u * iterations);
  EXPECT_EQ(c.memset, 1u * iterations + 1); // and the accumulator's zeroing
  EXPECT_EQ(c.pool_allocs, 1u * iterations);
  EXPECT_EQ(c.pool_frees, 1u * iterations);
  EXPECT_GE(c.driver_allocs, 2u); // cudaMalloc x2 (the runtime may add its own)
  EXPECT_EQ(t.metadata.dropped_records, 0u);
  EXPECT_EQ(t.metadata.format, "tdtrace");
  if (api) {
    EXPECT_GT(t.api_calls.size(), 0u);
  } else {
    EXPECT_EQ(t.api_calls.size(), 0u);
  }
}

TEST(InjectionGpu, SampleCapturedCountsAreExact) {
  if (!have_gpu())
    GTEST_SKIP() << "no CUDA device";
  ASSERT_TRUE(fs::exists(library())) << library();
  const auto out = temp_trace("injection_demo");
  const int iterations = 25;
  const std::string cmd =
      "CUDA_INJECTION64_PATH='" + library().string() + "' TDIAG_CAPTURE_OUTPUT='" + out.string() +
      "' '" + (bin_dir() / "tdiag_capture_demo").string() + "' " + std::to_string(iterations);
  ASSERT_EQ(run(cmd), 0) << cmd;
  const auto back = trace::read_tdtrace(out);
  EXPECT_TRUE(back.info.has_footer);
  expect_demo_counts(back.loaded.trace, iterations, false);
  fs::remove(out);
}

TEST(InjectionGpu, TdiagCaptureWithStacks) {
  if (!have_gpu())
    GTEST_SKIP() << "no CUDA device";
  const auto tdiag = bin_dir() / "tdiag";
  if (!fs::exists(tdiag))
    GTEST_SKIP() << "tdiag is not built beside this test";
  const auto out = temp_trace("tdiag_capture_demo");
  const int iterations = 10;
  const std::string cmd = "'" + tdiag.string() + "' capture --stacks -o '" + out.string() +
                          "' -- '" + (bin_dir() / "tdiag_capture_demo").string() + "' " +
                          std::to_string(iterations);
  ASSERT_EQ(run(cmd), 0) << cmd;
  const auto back = trace::read_tdtrace(out);
  const trace::trace& t = back.loaded.trace;
  expect_demo_counts(t, iterations, true);
  // Every launch API call carries the host stack of its launch, and it reaches main().
  const counts c = count(t);
  EXPECT_GE(c.launch_stacks, 2u * iterations);
  bool main_seen = false;
  for (const auto& a : t.api_calls.all())
    for (auto f : t.stacks.stack(a.stack))
      main_seen |= t.name(t.stacks.frame_at(f).function) == "main";
  EXPECT_TRUE(main_seen);
  fs::remove(out);
}

} // namespace
} // namespace tdiag::capture
