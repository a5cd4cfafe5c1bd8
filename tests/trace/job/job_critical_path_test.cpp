// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// HTA's critical path on hand-written Kineto JSON whose graph is worked out in the comments
// (the agreement with HTA itself on real traces is in job_analysis_test.cpp).
#include <tensordiag/trace/job_analysis.hpp>
#include <tensordiag/trace/kineto_import.hpp>
#include <tensordiag/trace/tdtrace_reader.hpp>
#include <tensordiag/trace/tdtrace_writer.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "trace_test_support.hpp"

namespace {

using namespace tdiag::trace;
using tdiag::trace::test::as_bytes;

critical_path_result path_of(std::string_view json, const analysis_options& options = {}) {
  const auto loaded = import_kineto(as_bytes(json), "iteration.json");
  return analyze_rank(loaded.trace, 0, options).critical_path;
}

double bound(const critical_path_result& r, path_bound b) {
  return r.bound_by_us[static_cast<std::size_t>(b)];
}

// aten::mm [10, 40] launches gemm (call [20, 25], kernel [30, 90] on an idle stream), then
// cudaStreamSynchronize [45, 95] waits for it (Stream Sync row [90, 95]) and aten::add [96, 99]
// runs. Nodes: mm, the launch, the sync call, add, gemm and the Stream Sync row, two each.
// Path: mm start -> launch start (10, mm's own time) -> gemm start (10, launch delay) -> gemm
// end (60, compute) -> sync call end (0, the sync) -> add start (0, dependency) -> add end (3)
// = 83 us. The host's own chain, mm -> launch end -> mm end -> sync call (whose wait weighs 0)
// -> add, is only 33 us.
constexpr std::string_view launch_and_sync = R"({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
  "ts": 0, "dur": 100},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10, "dur": 30},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 20, "dur": 5, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1,
  "ts": 45, "dur": 50, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 96, "dur": 3},
 {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 30, "dur": 60,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Sync", "pid": 0, "tid": 7, "ts": 90, "dur": 5,
  "args": {"stream": 7, "correlation": 2}}
]})";

TEST(JobCriticalPath, LaunchDelayKernelAndSyncBoundTheStep) {
  const auto r = path_of(launch_and_sync);
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_EQ(r.annotation, "ProfilerStep");
  EXPECT_EQ(r.instance, 0); // one step: HTA's rule takes the first
  EXPECT_EQ(r.instance_name, "ProfilerStep#1");
  EXPECT_EQ(r.graph_nodes, 12u);
  EXPECT_EQ(r.path_edges, 6u);
  EXPECT_DOUBLE_EQ(r.total_us, 83);
  EXPECT_DOUBLE_EQ(r.path_start_us, 10);
  EXPECT_DOUBLE_EQ(r.path_end_us, 99);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::cpu), 13);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::kernel_launch_overhead), 10);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_compute), 60);
  EXPECT_EQ(r.edges_by_bound[static_cast<std::size_t>(path_bound::none)], 2u); // sync, dependency
}

// The same step with a thousand one-op threads during it, on other tids (each thread's call
// stack is built apart, indexed by its own events: the tree once took arrays the size of all
// events per thread, quadratic in threads). Each op is a lone 1 us node pair, off the path.
TEST(JobCriticalPath, ManyOneOpThreadsLeaveThePathAlone) {
  std::string json(launch_and_sync.substr(0, launch_and_sync.rfind(']')));
  constexpr int threads = 1000;
  for (int i = 0; i < threads; ++i)
    json += fmt::format(R"(, {{"ph": "X", "cat": "cpu_op", "name": "op", "pid": 2, "tid": {},
                           "ts": {}, "dur": 1}})",
                        100 + i, 11 + i % 80);
  json += "]}";
  const auto r = path_of(json);
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_EQ(r.graph_nodes, 12u + 2u * threads);
  EXPECT_EQ(r.path_edges, 6u);
  EXPECT_DOUBLE_EQ(r.total_us, 83);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_compute), 60);
}

// Two launches back to back ([20, 21] and [22, 23]) before either kernel starts: the second
// waits for the first (queue length 2 at its launch), so its edge is the 2 us gap between them.
// The first gets no launch edge either: HTA wants the queue empty once it started (it holds 1),
// and it has no kernel before it (HTA warns "No edge was added"). The second is a collective.
constexpr std::string_view back_to_back = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 20, "dur": 1, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 22, "dur": 1, "args": {"correlation": 2}},
 {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 30, "dur": 20,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce", "pid": 0, "tid": 7, "ts": 52,
  "dur": 18, "args": {"stream": 7, "correlation": 2}}
]})";

TEST(JobCriticalPath, QueuedKernelsChainThroughTheirGap) {
  // No ProfilerStep: the whole trace. Path: add_kernel (20) -> gap (2) -> all-reduce (18) =
  // 40 us, longer than the host's 20.
  const auto r = path_of(back_to_back);
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_EQ(r.annotation, "");
  EXPECT_DOUBLE_EQ(r.window_start_us, 10);
  EXPECT_DOUBLE_EQ(r.window_end_us, 70);
  EXPECT_DOUBLE_EQ(r.total_us, 40);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::cpu), 0);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::kernel_launch_overhead), 0);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_compute), 20);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::kernel_kernel_overhead), 2);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_communication), 18);
}

// Stream 8 waits for stream 7 through a CUDA event: aten::x [10, 30] launches A on stream 7
// (call [20, 21], kernel [30, 80]), records an event [21, 22], makes stream 8 wait for it
// ([22, 23], its Stream Wait Event row on stream 8) and launches B there ([25, 26], kernel
// [80, 100]). B is reachable only through the wait: x start -> launch start (10, cpu) -> A start
// (10, launch) -> A end (50) -> B start (0, the sync) -> B end (20) = 90 us.
constexpr std::string_view event_wait = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::x", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 20, "dur": 1, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 1,
  "ts": 21, "dur": 1, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 1,
  "ts": 22, "dur": 1, "args": {"correlation": 3}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 25, "dur": 1, "args": {"correlation": 4}},
 {"ph": "X", "cat": "kernel", "name": "a_kernel", "pid": 0, "tid": 7, "ts": 30, "dur": 50,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 8, "ts": 23,
  "dur": 0, "args": {"stream": 8, "correlation": 3, "wait_on_stream": 7}},
 {"ph": "X", "cat": "kernel", "name": "b_kernel", "pid": 0, "tid": 8, "ts": 80, "dur": 20,
  "args": {"stream": 8, "correlation": 4}}
]})";

TEST(JobCriticalPath, StreamWaitEventLinksTheStreams) {
  const auto r = path_of(event_wait);
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_DOUBLE_EQ(r.total_us, 90);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_compute), 70);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::kernel_launch_overhead), 10);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::cpu), 10);
  EXPECT_EQ(r.edges_by_bound[static_cast<std::size_t>(path_bound::none)], 1u); // the wait
}

// Kineto names the record a wait waited on: here the event is recorded by thread 2, whose last
// launch is c_kernel on stream 9, but on stream 7 (wait_on_stream), whose last kernel before
// the record is a_kernel from thread 1. Thread 1: aten::x [10, 30] launches A on stream 7 (call
// [20, 21], kernel [30, 80]). Thread 2: aten::y [10, 30] launches C on stream 9 ([19, 20],
// kernel [25, 40]), records the event [21, 22], makes stream 8 wait ([22, 23]) and launches B
// there ([25, 26], kernel [80, 100]). B waits for A: x start -> launch (10) -> A start (10,
// launch) -> A end (50) -> B start (0, the sync) -> B end (20) = 90 us. Guessing the record
// from thread 2's last launch, B would wait for C and the path would stop at A's end (70 us).
constexpr std::string_view recorded_wait = R"({"traceEvents": [
 {"ph": "X", "cat": "cpu_op", "name": "aten::x", "pid": 1, "tid": 1, "ts": 10, "dur": 20},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
  "ts": 20, "dur": 1, "args": {"correlation": 1}},
 {"ph": "X", "cat": "cpu_op", "name": "aten::y", "pid": 1, "tid": 2, "ts": 10, "dur": 20},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
  "ts": 19, "dur": 1, "args": {"correlation": 5}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord", "pid": 1, "tid": 2,
  "ts": 21, "dur": 1, "args": {"correlation": 2}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent", "pid": 1, "tid": 2,
  "ts": 22, "dur": 1, "args": {"correlation": 3}},
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
  "ts": 25, "dur": 1, "args": {"correlation": 4}},
 {"ph": "X", "cat": "kernel", "name": "a_kernel", "pid": 0, "tid": 7, "ts": 30, "dur": 50,
  "args": {"stream": 7, "correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "c_kernel", "pid": 0, "tid": 9, "ts": 25, "dur": 15,
  "args": {"stream": 9, "correlation": 5}},
 {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 8, "ts": 23,
  "dur": 0, "args": {"stream": 8, "correlation": 3, "wait_on_stream": 7,
  "wait_on_cuda_event_record_corr_id": 2}},
 {"ph": "X", "cat": "kernel", "name": "b_kernel", "pid": 0, "tid": 8, "ts": 80, "dur": 20,
  "args": {"stream": 8, "correlation": 4}}
]})";

TEST(JobCriticalPath, KinetosRecordOfAWaitLinksTheKernelItFollows) {
  const auto loaded = import_kineto(as_bytes(recorded_wait), "iteration.json");
  ASSERT_EQ(loaded.trace.sync_waits.size(), 1u);
  const auto& w = loaded.trace.sync_waits[0];
  EXPECT_EQ(w.record_correlation, 2u);
  EXPECT_EQ(w.stream, 7);
  EXPECT_EQ(loaded.trace.ranges.all()[w.range_index].correlation, 3u);
  const auto r = analyze_rank(loaded.trace, 0).critical_path;
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_DOUBLE_EQ(r.total_us, 90);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::gpu_compute), 70);
  EXPECT_EQ(r.edges_by_bound[static_cast<std::size_t>(path_bound::none)], 1u); // the wait

  // Kept through .tdtrace, at the index of its row, and read the same.
  const auto path = tdiag::trace::test::temp_path("recorded_wait.tdtrace");
  write_tdtrace(path, loaded.trace);
  const auto back = read_tdtrace(path).loaded.trace;
  EXPECT_EQ(back.sync_waits, loaded.trace.sync_waits);
  EXPECT_DOUBLE_EQ(analyze_rank(back, 0).critical_path.total_us, 90);

  // Without the record's id, the thread's last launch is the guess: C, and B hangs off it.
  std::string guessed(recorded_wait);
  guessed.replace(guessed.find(",\n  \"wait_on_cuda_event_record_corr_id\": 2"),
                  std::string_view(",\n  \"wait_on_cuda_event_record_corr_id\": 2").size(), "");
  EXPECT_DOUBLE_EQ(path_of(guessed).total_us, 70);
}

TEST(JobCriticalPath, AnnotationAndInstanceChooseTheWindow) {
  analysis_options options;
  options.critical_path_annotation = "ProfilerStep";
  options.critical_path_instance = 1;
  const auto missing = path_of(launch_and_sync, options);
  EXPECT_FALSE(missing.computed);
  EXPECT_EQ(missing.reason, "'ProfilerStep' has 1 instance(s), not an instance 1");
  options.critical_path_annotation = "forward";
  options.critical_path_instance = 0;
  EXPECT_EQ(path_of(launch_and_sync, options).reason, "no annotation contains 'forward'");
  // aten::add is the only range containing "add": its window holds no launch, so the path is
  // its own 3 us.
  options.critical_path_annotation = "aten::add";
  const auto add = path_of(launch_and_sync, options);
  ASSERT_TRUE(add.computed) << add.reason;
  EXPECT_DOUBLE_EQ(add.window_start_us, 96);
  EXPECT_DOUBLE_EQ(add.total_us, 3);
}

} // namespace

namespace {

// A step whose host thread first loads data (a "data_load" annotation [5, 45], its
// enumerate op [10, 40] inside), then runs aten::mm [50, 60]: the path is the host's own chain.
constexpr std::string_view data_load_step = R"({"traceEvents": [
 {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
  "ts": 0, "dur": 100},
 {"ph": "X", "cat": "user_annotation", "name": "data_load", "pid": 1, "tid": 1, "ts": 5,
  "dur": 40},
 {"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter",
  "pid": 1, "tid": 1, "ts": 10, "dur": 30},
 {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 50, "dur": 10}
]})";

// HTA's data_load_events: the annotation becomes a node and its own time (5 + 5 us around the
// op) is data_loading; the rest stays cpu_bound. Without them the annotation is no node.
TEST(JobCriticalPath, DataLoadEventsBoundTheirTimeAsDataLoading) {
  const auto plain = path_of(data_load_step);
  ASSERT_TRUE(plain.computed) << plain.reason;
  EXPECT_DOUBLE_EQ(bound(plain, path_bound::data_loading), 0);
  analysis_options options;
  options.critical_path_data_load = {"data_load"};
  const auto r = path_of(data_load_step, options);
  ASSERT_TRUE(r.computed) << r.reason;
  EXPECT_EQ(r.graph_nodes, plain.graph_nodes + 2);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::data_loading), 10);
  EXPECT_DOUBLE_EQ(bound(r, path_bound::cpu), 40);
  EXPECT_EQ(r.edges_by_type[static_cast<std::size_t>(path_edge_kind::operator_kernel)],
            r.edges_by_bound[static_cast<std::size_t>(path_bound::data_loading)] +
                r.edges_by_bound[static_cast<std::size_t>(path_bound::cpu)]);
}

} // namespace
