// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// `tdiag capture` (cli/src/capture_command.cpp) without a GPU: the injected environment, the
// application's exit status, and the summary of a trace. A stand-in "application" copies a
// prepared .tdtrace to $TDIAG_CAPTURE_OUTPUT, as the injected library would have written it.
#include <tensordiag/capture/cupti_convert.hpp>
#include <tensordiag/trace/job_load.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <unistd.h>

#include "capture_test_support.hpp"

namespace tdiag::capture {
namespace {

namespace fs = std::filesystem;

const fs::path tdiag_exe = fs::path(TDIAG_BINARY_DIR) / "bin" / "tdiag";
const fs::path fake_app = fs::path(TDIAG_BINARY_DIR) / "bin" / "tdiag_test_capture_fake_app";

using test::run;
using test::temp;

template <typename Record> const CUpti_Activity& as_activity(const Record& r) {
  return reinterpret_cast<const CUpti_Activity&>(r);
}

// 3 kernels of one name, 1 HtoD copy of 1 MiB, two pool blocks of 1 MiB (peak 2 MiB).
void write_prepared_trace(const fs::path& path) {
  cupti_converter c;
  for (std::uint32_t i = 0; i < 3; ++i) {
    CUpti_ActivityKernel10 k;
    std::memset(&k, 0, sizeof(k));
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = 1000 * (i + 1);
    k.end = k.start + 500;
    k.streamId = 7;
    k.correlationId = i + 1;
    k.name = "prepared_kernel";
    c.add(as_activity(k));
  }
  CUpti_ActivityMemcpy6 m;
  std::memset(&m, 0, sizeof(m));
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  c.add(as_activity(m));
  for (std::uint64_t t : {100u, 200u, 300u, 400u}) {
    CUpti_ActivityMemory4 a;
    std::memset(&a, 0, sizeof(a));
    a.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    a.memoryOperationType = t < 300 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                    : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
    a.memoryPoolConfig.memoryPoolType = CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL;
    a.address = 0x1000 * (t % 200 == 0 ? 2 : 1);
    a.bytes = 1 << 20;
    a.timestamp = t;
    c.add(as_activity(a));
  }
  c.add_dropped(5);
  trace::tdtrace_writer w(path, {"", "cupti", 0, 0, {}});
  w.append(c.take_batch());
  w.close();
}

class CaptureCommand : public ::testing::Test {
protected:
  void SetUp() override {
    if (!fs::exists(tdiag_exe))
      GTEST_SKIP() << "tdiag is not built in " << tdiag_exe;
  }
};

TEST_F(CaptureCommand, SummarisesTheTraceTheApplicationLeft) {
  const auto prepared = temp("prepared") += ".tdtrace";
  const auto out = temp("summary") += ".tdtrace";
  write_prepared_trace(prepared);
  const auto r = run("'" + tdiag_exe.string() + "' capture -o '" + out.string() +
                     "' -- sh -c 'test -n \"$CUDA_INJECTION64_PATH\" && test "
                     "\"$TDIAG_CAPTURE_EXCLUSIVE\" = 1 && cp " +
                     prepared.string() + " \"$TDIAG_CAPTURE_OUTPUT\"'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("kernels   3 (1 names"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("prepared_kernel"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("HtoD 1x 1.00 MiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("pool: 2 allocs, 2 frees, peak in use 2.00 MiB"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("dropped   5 records"), std::string::npos) << r.output;
  fs::remove(prepared);
  fs::remove(out);
}

TEST_F(CaptureCommand, ExitsWithTheApplicationsStatus) {
  const auto out = temp("status") += ".tdtrace";
  const auto r =
      run("'" + tdiag_exe.string() + "' capture -o '" + out.string() + "' -- sh -c 'exit 3'");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("no trace written"), std::string::npos) << r.output;
}

TEST_F(CaptureCommand, MissingApplicationIsAUsageError) {
  const auto r = run("'" + tdiag_exe.string() + "' capture -o x.tdtrace -- /nonexistent/app");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("cannot start /nonexistent/app"), std::string::npos) << r.output;
}

TEST_F(CaptureCommand, MissingLibraryIsAUsageError) {
  const auto r = run("'" + tdiag_exe.string() +
                     "' capture --library /nonexistent/libtdiag_capture.so -- true");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("libtdiag_capture.so is not in /nonexistent"), std::string::npos)
      << r.output;
}

TEST_F(CaptureCommand, RangesReachTheLibraryAsOneText) {
  const auto out = temp("ranges") += ".tdtrace";
  const auto r = run("'" + tdiag_exe.string() + "' capture -o '" + out.string() +
                     "' --range cuda-profiler-api --range 'nvtx:train step' --launches 3:9 "
                     "--delay 1 --duration 2.5 -- sh -c 'echo \"ranges=$TDIAG_CAPTURE_RANGES\"; "
                     "exit 4'");
  EXPECT_EQ(r.status, 4) << r.output;
  EXPECT_NE(r.output.find("ranges=cuda-profiler-api;nvtx:train step;time:1:2.5;launches:3:9\n"),
            std::string::npos)
      << r.output;
}

TEST_F(CaptureCommand, ApiRecordsAreOptIn) {
  const auto out = temp("api") += ".tdtrace";
  const std::string show =
      " -- sh -c 'echo \"api=$TDIAG_CAPTURE_RUNTIME_API$TDIAG_CAPTURE_DRIVER_API "
      "memory=$TDIAG_CAPTURE_MEMORY\"; exit 4'";
  const std::string capture = "'" + tdiag_exe.string() + "' capture -o '" + out.string() + "'";
  EXPECT_NE(run(capture + show).output.find("api=00 memory=1"), std::string::npos);
  EXPECT_NE(run(capture + " --api" + show).output.find("api=11 memory=1"), std::string::npos);
  EXPECT_NE(run(capture + " --driver-api" + show).output.find("api=01"), std::string::npos);
  EXPECT_NE(run(capture + " --api --no-runtime-api" + show).output.find("api=01"),
            std::string::npos);
  EXPECT_NE(run(capture + " --kernels-only" + show).output.find("api=00 memory=0"),
            std::string::npos);
}

TEST_F(CaptureCommand, ABadRangeFailsBeforeTheApplicationRuns) {
  const auto r = run("'" + tdiag_exe.string() + "' capture --range launches:9:3 -- echo RAN");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("capture range 'launches:9:3': the range is empty"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("RAN"), std::string::npos) << r.output;
}

// `-o folder/` under a launcher of 4 processes: one trace per process, named and tagged with its
// rank by the library's own options, and the job loader sees ranks 0-3.
TEST_F(CaptureCommand, AJobFolderGetsOneTracePerRank) {
  if (!fs::exists(fake_app))
    GTEST_SKIP() << "the stand-in application is not built: " << fake_app;
  const auto dir = temp("job");
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::fclose(std::fopen((dir / "rank7.tdtrace").c_str(), "w")); // an earlier run's: removed
  const auto r = run("'" + tdiag_exe.string() + "' capture -o '" + dir.string() +
                     "/' -- sh -c 'for r in 0 1 2 3; do RANK=$r WORLD_SIZE=4 " + fake_app.string() +
                     " $((r + 1)) & done; wait'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("job       4 processes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 3    rank3.tdtrace"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank from RANK  4 kernels"), std::string::npos) << r.output;
  const std::vector<std::string> inputs{dir.string()};
  const auto job = trace::load_job(inputs, {trace::rank_source::distributed, 1});
  ASSERT_EQ(job.size(), 4u);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(job[rank].rank, rank);
    EXPECT_EQ(job[rank].path.filename(), "rank" + std::to_string(rank) + ".tdtrace");
    EXPECT_EQ(job[rank].loaded.trace.kernels.size(), std::size_t(rank + 1));
    const auto* world = job[rank].loaded.trace.metadata.property("distributed.world_size");
    ASSERT_NE(world, nullptr);
    EXPECT_EQ(*world, "4");
  }
  fs::remove_all(dir);
}

// A launcher whose processes have no rank: each is named by its process id.
TEST_F(CaptureCommand, AJobFolderWithoutRanksNamesFilesByProcess) {
  if (!fs::exists(fake_app))
    GTEST_SKIP() << "the stand-in application is not built: " << fake_app;
  const auto dir = temp("pidjob");
  fs::remove_all(dir);
  const auto r =
      run("env -u RANK -u LOCAL_RANK '" + tdiag_exe.string() + "' capture -o '" + dir.string() +
          "/' -- sh -c '" + fake_app.string() + " & " + fake_app.string() + " & wait'");
  EXPECT_EQ(r.status, 0) << r.output;
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_TRUE(e.path().filename().string().starts_with("pid")) << e.path();
    ++files;
  }
  EXPECT_EQ(files, 2u);
  EXPECT_NE(r.output.find("rank from pid"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

// torchrun's agent initialises CUDA without a rank: beside the ranks, its trace is set aside in
// others/, so the folder the analyses read holds ranks 0 and 1 alone (found on the H200, where
// the agent's file took rank 0 and the job loader refused the folder).
TEST_F(CaptureCommand, ALauncherWithoutARankIsSetAsideBesideTheRanks) {
  if (!fs::exists(fake_app))
    GTEST_SKIP() << "the stand-in application is not built: " << fake_app;
  const auto dir = temp("launcherjob");
  fs::remove_all(dir);
  const auto r = run("env -u RANK -u LOCAL_RANK '" + tdiag_exe.string() + "' capture -o '" +
                     dir.string() + "/' -- sh -c '" + fake_app.string() +
                     " 1 & for r in 0 1; do RANK=$r " + fake_app.string() + " 2 & done; wait'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("job       2 processes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("without a rank"), std::string::npos) << r.output;
  std::size_t set_aside = 0;
  for (const auto& e : fs::directory_iterator(dir / "others")) {
    EXPECT_TRUE(e.path().filename().string().starts_with("pid")) << e.path();
    ++set_aside;
  }
  EXPECT_EQ(set_aside, 1u);
  const std::vector<std::string> inputs{dir.string()};
  const auto job = trace::load_job(inputs, {trace::rank_source::distributed, 1});
  ASSERT_EQ(job.size(), 2u);
  EXPECT_EQ(job[0].path.filename(), "rank0.tdtrace");
  EXPECT_EQ(job[1].path.filename(), "rank1.tdtrace");
  fs::remove_all(dir);
}

} // namespace
} // namespace tdiag::capture
