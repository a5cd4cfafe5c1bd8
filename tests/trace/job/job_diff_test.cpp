// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// The op-level diff of two runs on hand-written Kineto JSON.
#include <tensordiag/core/detail/json_in.hpp>
#include <tensordiag/trace/job_diff.hpp>
#include <tensordiag/trace/kineto_import.hpp>

#include <gtest/gtest.h>

#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::test::as_bytes;

// Run A: aten::mm twice (10 + 10 us) launching gemm twice (20 + 20 us), aten::relu once (5 us).
// Run B: aten::mm three times (10 each) with gemm three times (25 each), aten::gelu once (6 us).
constexpr std::string_view run_a = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "aten::relu", "pid": 1, "tid": 1, "ts": 40, "dur": 5},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 20,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 20,
  "args": {"stream": 7, "correlation": 2}}
]})";
constexpr std::string_view run_b = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 20, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 40, "dur": 10},
 {"ph": "X", "cat": "cpu_op", "name": "aten::gelu", "pid": 1, "tid": 1, "ts": 60, "dur": 6},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 5, "dur": 25,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 25,
  "args": {"stream": 7, "correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 60, "dur": 25,
  "args": {"stream": 7, "correlation": 3}}
]})";

const op_diff_row& row(const op_diff& d, const std::string& name) {
  for (const auto& r : d.rows)
    if (r.name == name)
      return r;
  throw std::runtime_error("no op " + name);
}

TEST(JobDiff, OpsAddedRemovedAndChangedInCountAndTime) {
  const auto a = import_kineto(as_bytes(run_a), "a.json");
  const auto b = import_kineto(as_bytes(run_b), "b.json");
  const rank_trace ra[] = {{0, &a.trace}}, rb[] = {{0, &b.trace}};
  const auto d = diff_ops(ra, rb);
  ASSERT_EQ(d.rows.size(), 4u);
  const auto& gemm = row(d, "gemm");
  EXPECT_TRUE(gemm.gpu);
  EXPECT_EQ(gemm.count_a, 2u);
  EXPECT_EQ(gemm.count_b, 3u);
  EXPECT_DOUBLE_EQ(gemm.delta_us(), 35);
  EXPECT_EQ(gemm.change, op_change::increased);
  EXPECT_EQ(row(d, "aten::mm").change, op_change::increased);
  EXPECT_FALSE(row(d, "aten::mm").gpu);
  EXPECT_EQ(row(d, "aten::relu").change, op_change::removed);
  EXPECT_EQ(row(d, "aten::gelu").change, op_change::added);
  EXPECT_EQ(d.rows.front().name, "gemm"); // the largest change first
  EXPECT_EQ(d.by_change[static_cast<std::size_t>(op_change::increased)], 2u);
  EXPECT_DOUBLE_EQ(d.total_us_a, 65);
  EXPECT_DOUBLE_EQ(d.total_us_b, 111);

  // B against itself: nothing changed.
  const auto same = diff_ops(rb, rb);
  EXPECT_EQ(same.by_change[static_cast<std::size_t>(op_change::unchanged)], 3u);
  // Two ranks of A against one of B: counts sum over the ranks.
  const rank_trace two[] = {{0, &a.trace}, {1, &a.trace}};
  EXPECT_EQ(row(diff_ops(two, rb), "gemm").count_a, 4u);
}

TEST(JobDiff, JsonAndReport) {
  const auto a = import_kineto(as_bytes(run_a), "a.json");
  const auto b = import_kineto(as_bytes(run_b), "b.json");
  const rank_trace ra[] = {{0, &a.trace}}, rb[] = {{0, &b.trace}};
  const auto d = diff_ops(ra, rb);
  const auto text = op_diff_json(d);
  const auto json = tdiag::detail::parse_json(text, {"op-diff", "TEST", "invalid JSON", ""});
  ASSERT_NE(json.find("schema"), nullptr);
  EXPECT_EQ(json.find("schema")->string, "tensordiag.op-diff/v1");
  const auto* ops = json.find("ops");
  ASSERT_TRUE(ops && ops->is_array() && ops->items.size() == 4u) << text;
  const auto& first = ops->items.front(); // gemm, the largest change
  EXPECT_EQ(first.find("name")->string, "gemm");
  EXPECT_EQ(first.find("device")->string, "gpu");
  EXPECT_EQ(first.find("change")->string, "increased");
  EXPECT_EQ(first.find("diff_count")->integer, 1);
  EXPECT_DOUBLE_EQ(first.find("diff_us")->as_double(), 35);
  tdiag::report r;
  add_op_diff(r, d, "a.json", "b.json", 2);
  ASSERT_EQ(r.diagnostics.size(), 3u); // overview and the top 2
  EXPECT_EQ(r.diagnostics[0].code, "TDIAG-TR-234");
  EXPECT_NE(r.diagnostics[0].message.find("4 ops by name: 1 added, 1 removed, 2 more often"),
            std::string::npos)
      << r.diagnostics[0].message;
  EXPECT_EQ(r.diagnostics[1].code, "TDIAG-TR-235");
  EXPECT_NE(r.diagnostics[1].message.find("gemm (GPU, increased)"), std::string::npos)
      << r.diagnostics[1].message;
}

} // namespace
