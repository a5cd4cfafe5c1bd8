// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// HTA's memory bandwidth summary on hand-written Kineto JSON (the agreement with HTA's counts
// on real traces is in job_analysis_test.cpp).
#include <tensordiag/core/error.hpp>
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <gtest/gtest.h>

#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::test::as_bytes;

// Two overlapping host-to-device copies on two streams, 1 GB/s over [10, 20) us and 2 GB/s over
// [15, 25) us, then a memset of 1 GB/s over [30, 31) us. The HtoD series steps 1, 3, 2, 0 GB/s:
// its positive points are 1, 3 and 2. The memset's is 1 (then 0).
constexpr std::string_view copies = R"json({"traceEvents": [
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7,
  "ts": 10.0, "dur": 10.0, "args": {"stream": 7, "correlation": 1, "bytes": 10000}},
 {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 8,
  "ts": 15.0, "dur": 10.0, "args": {"stream": 8, "correlation": 2, "bytes": 20000}},
 {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7,
  "ts": 30.0, "dur": 1.0, "args": {"stream": 7, "correlation": 3, "bytes": 1000}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40.0, "dur": 5.0,
  "args": {"stream": 7, "correlation": 4}}
]})json";

TEST(JobMemoryBw, SummedSeriesPerKindOverItsPositivePoints) {
  const auto loaded = import_kineto(as_bytes(copies), "copies.json");
  for (const bool compat : {false, true}) {
    analysis_options options;
    options.hta_compat = compat;
    const auto r = analyze_rank(loaded.trace, 0, options);
    ASSERT_EQ(r.memory_bw.size(), 2u) << compat;
    const auto& htod = r.memory_bw[0];
    EXPECT_EQ(htod.name, "Memcpy HtoD");
    EXPECT_EQ(htod.gbps.count, 3u);
    EXPECT_DOUBLE_EQ(*htod.gbps.mean, 2);
    EXPECT_DOUBLE_EQ(*htod.gbps.min, 1);
    EXPECT_DOUBLE_EQ(*htod.gbps.max, 3);
    const auto& memset = r.memory_bw[1];
    EXPECT_EQ(memset.name, "Memset");
    EXPECT_EQ(memset.gbps.count, 1u);
    EXPECT_DOUBLE_EQ(*memset.gbps.mean, 1);
  }
}

TEST(JobMemoryBw, NoCopiesNoSummary) {
  constexpr std::string_view kernels = R"({"traceEvents": [
   {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40, "dur": 5,
    "args": {"stream": 7, "correlation": 4}}]})";
  const auto loaded = import_kineto(as_bytes(kernels), "kernels.json");
  EXPECT_TRUE(analyze_rank(loaded.trace, 0).memory_bw.empty());
}

} // namespace

// Kineto's "memory bandwidth (GB/s)" (from the true ns duration) is the copy's figure when the
// trace carries it, as HTA reads it: a 1 us copy of 1000 bytes that Kineto measured at 4 GB/s
// (250 ns) is 4 GB/s, not 1. It survives a .tdtrace round trip.
TEST(JobMemoryBw, KinetoBandwidthArgumentIsTheCopysFigure) {
  constexpr std::string_view json = R"json({"traceEvents": [
   {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD (Device -> Device)", "pid": 0,
    "tid": 7, "ts": 10, "dur": 1, "args": {"stream": 7, "correlation": 1, "bytes": 1000,
    "memory bandwidth (GB/s)": 4.0}}]})json";
  const auto loaded = import_kineto(as_bytes(json), "bw.json");
  ASSERT_EQ(loaded.trace.copies.size(), 1u);
  EXPECT_FLOAT_EQ(loaded.trace.copies.all()[0].bandwidth_gbps, 4.0f);
  const auto r = analyze_rank(loaded.trace, 0);
  ASSERT_EQ(r.memory_bw.size(), 1u);
  EXPECT_DOUBLE_EQ(*r.memory_bw[0].gbps.max, 4.0);

  const auto path = tdiag::trace::test::temp_path("bw.tdtrace");
  write_tdtrace(path, loaded.trace);
  const auto back = read_tdtrace(path);
  ASSERT_EQ(back.loaded.trace.copies.size(), 1u);
  EXPECT_FLOAT_EQ(back.loaded.trace.copies.all()[0].bandwidth_gbps, 4.0f);
}

TEST(JobMemoryBw, NonNumericBandwidthArgumentIsAnError) {
  constexpr std::string_view json = R"json({"traceEvents": [
   {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoD", "pid": 0, "tid": 7, "ts": 10,
    "dur": 1, "args": {"stream": 7, "bytes": 1000, "memory bandwidth (GB/s)": "fast"}}]})json";
  EXPECT_THROW((void)import_kineto(as_bytes(json), "bw.json"), tdiag::input_error);
}
