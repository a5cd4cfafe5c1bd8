# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of every `tdiag trace` subcommand: summary, leaks, oom, timeline, diff and
# export, on the fixtures in tests/data/trace and on the shared traces (label data). The expected
# figures are the trace library's own (tests/trace/*_test.cpp check them at the API).
if(NOT TARGET tensordiag::trace)
  return()
endif()
set(fixtures "${PROJECT_SOURCE_DIR}/tests/data/trace")
set(out "${CMAKE_CURRENT_BINARY_DIR}/trace")
file(MAKE_DIRECTORY "${out}")
set(tdtrace "${fixtures}/h200_torch_step.tdtrace")
set(leaking "${fixtures}/leaking_train_snapshot.pickle")
set(leaking_short "${fixtures}/leaking_train_snapshot_short.pickle")

# --- on the fixtures ------------------------------------------------------------------------
tdiag_cli_test(summary.tdtrace FAMILY trace EXPECT_RC 0
  ARGS "trace|summary|${tdtrace}|--format|json"
  CHECKS "-DJSON_FIELDS=format=tdtrace|kernels=510|flows=535|memory_events=816")
tdiag_cli_test(summary.text FAMILY trace EXPECT_RC 0 ARGS "trace|summary|${tdtrace}|--top|2"
  CHECKS "-DSTDOUT_REGEX=10851 events over 5.009 s \\(tdtrace\\)")
tdiag_cli_test(leaks.growing_site FAMILY trace EXPECT_RC 0
  ARGS "trace|leaks|${leaking}|--format|json|-o|${out}/leaks.json"
  CHECKS "-DOUTPUT_FILE=${out}/leaks.json" -DJSON_COUNT=5
         "-DJSON_FIELDS=site=train.py:42 (train_step)|live_allocations=8|growth_per_iteration_bytes=2097152")
# An output that names a trace being read is refused before anything is written (the copy
# export makes is what would be lost).
tdiag_cli_test(export.own_copy FAMILY trace EXPECT_RC 0
  ARGS "trace|export|${leaking}|--tdtrace|${out}/own_copy.tdtrace" FIXTURE tdiag_cli_own_copy)
foreach(cmd summary leaks analyze)
  tdiag_cli_test(${cmd}.output_over_input FAMILY trace EXPECT_RC 2 NEEDS tdiag_cli_own_copy
    ARGS "trace|${cmd}|${out}/own_copy.tdtrace|-o|${out}/own_copy.tdtrace"
    CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=-o names a trace being read")
endforeach()
tdiag_cli_test(export.output_over_input FAMILY trace EXPECT_RC 2 NEEDS tdiag_cli_own_copy
  ARGS "trace|export|${out}/own_copy.tdtrace|--chrome|${out}/own_copy.tdtrace"
  CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=--chrome names a trace being read")
# A kernel named with terminal controls (clear screen, set title, carriage return) is shown
# escaped, as every report shows outside text.
tdiag_cli_test(analyze.controls_escaped FAMILY trace EXPECT_RC 0
  ARGS "trace|analyze|${fixtures}/kernel_name_controls.json"
  CHECKS "-DSTDOUT_REGEX=k\\\\x1b\\[2J\\\\x1b\\]0;title\\\\x07\\\\x0dEND")
tdiag_cli_test(leaks.top FAMILY trace EXPECT_RC 0 ARGS "trace|leaks|${leaking}|--top|1|--format|json"
  CHECKS -DJSON_COUNT=2 "-DJSON_FIELDS=live_bytes=76595200|live_allocations=26|sites=4")
tdiag_cli_test(diff.fixtures FAMILY trace EXPECT_RC 0
  ARGS "trace|diff|${leaking_short}|${leaking}|--format|json"
  CHECKS "-DJSON_FIELDS=live_bytes_a=68206592|live_bytes_b=76595200|sites_changed=1")
tdiag_cli_test(diff.one_input FAMILY trace EXPECT_RC 2 ARGS "trace|diff|${leaking}")

# Export: Chrome JSON, and a .tdtrace that reads back with the same counts.
tdiag_cli_test(export.chrome FAMILY trace EXPECT_RC 0
  ARGS "trace|export|${tdtrace}|--chrome|${out}/h200.chrome.json"
  CHECKS "-DOUTPUT_FILE=${out}/h200.chrome.json"
         "-DSTDOUT_REGEX=^wrote 11393 trace events to [^:]*: 510 kernels, 25 copies, 8965 host calls")
tdiag_cli_test(export.tdtrace FAMILY trace EXPECT_RC 0
  ARGS "trace|export|${leaking}|--tdtrace|${out}/leaking.tdtrace"
  CHECKS "-DOUTPUT_FILE=${out}/leaking.tdtrace" FIXTURE tdiag_cli_tdtrace)
tdiag_cli_test(export.tdtrace_reads_back FAMILY trace EXPECT_RC 0
  ARGS "trace|leaks|${out}/leaking.tdtrace|--format|json" NEEDS tdiag_cli_tdtrace
  CHECKS "-DJSON_FIELDS=live_bytes=76595200|live_allocations=26|sites=4")
tdiag_cli_test(convert.tdtrace FAMILY trace EXPECT_RC 0
  ARGS "trace|convert|${leaking}|--tdtrace|${out}/leaking.convert.tdtrace"
  CHECKS "-DOUTPUT_FILE=${out}/leaking.convert.tdtrace" "-DSTDOUT_REGEX=^wrote [0-9]+ events to ")
tdiag_cli_test(export.no_output FAMILY trace EXPECT_RC 2 ARGS "trace|export|${tdtrace}"
  CHECKS "-DSTDERR_REGEX=--chrome or --tdtrace is required")

# Bad input: exit status 2, one line naming the file.
tdiag_cli_test(bad_input.not_a_trace FAMILY trace EXPECT_RC 2
  ARGS "trace|summary|${PROJECT_SOURCE_DIR}/README.md"
  CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=README.md' is not a trace format tensordiag reads")
tdiag_cli_test(bad_input.missing FAMILY trace EXPECT_RC 2 ARGS "trace|oom|${out}/does-not-exist.pickle"
  CHECKS "-DSTDERR_REGEX=does-not-exist.pickle")
tdiag_cli_test(bad_input.negative_device FAMILY trace EXPECT_RC 2
  ARGS "trace|summary|${tdtrace}|--device|-1"
  CHECKS "-DSTDERR_REGEX=^--device: expected a device number >= 0, got -1\n[^0-9]*$")
# Issue 36: a leading 18 KiB "metadata" object and ROCm's numbers written as strings.
tdiag_cli_test(real_shapes.metadata_first FAMILY trace EXPECT_RC 0
  ARGS "trace|summary|${fixtures}/real_shapes/metadata_first.json|--format|json"
  CHECKS "-DJSON_FIELDS=format=kineto-json|kernels=3")

# --- on the shared traces (TDIAG_DATA_DIR) ---------------------------------------------------
set(oom "${TDIAG_DATA_DIR}/traces/oom_snapshot.pickle")
if(NOT EXISTS "${oom}")
  return()
endif()
tdiag_cli_test(summary.oom_snapshot FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|summary|${oom}|--format|json"
  CHECKS "-DJSON_FIELDS=device=0|peak_allocated_bytes=2215641088|final_allocated_bytes=1678770176|oom_events=1")
tdiag_cli_test(leaks.oom_snapshot FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|leaks|${oom}|--format|json"
  CHECKS "-DJSON_FIELDS=live_bytes=1678770176|live_allocations=9|sites=3")
# An OOM event is an error: exit status 1, and the verdict names the per-process cap.
tdiag_cli_test(oom.process_limit FAMILY trace EXPECT_RC 1 LABELS data
  ARGS "trace|oom|${oom}|--format|json"
  CHECKS -DJSON_COUNT=1 "-DJSON_FIELDS=verdict=process_limit|requested_bytes=3221225472")
tdiag_cli_test(oom.github FAMILY trace EXPECT_RC 1 LABELS data
  ARGS "trace|oom|${oom}|--format|github|-o|${out}/oom.github"
  CHECKS "-DGITHUB_FILE=${out}/oom.github")
# A trace without an OOM event: one note saying so, exit status 0.
tdiag_cli_test(oom.clean_trace FAMILY trace EXPECT_RC 0 ARGS "trace|oom|${leaking}"
  CHECKS "-DSTDOUT_REGEX=leaking_train_snapshot.pickle: the trace records no 'oom' event")

# Timeline: every way to name the instant means the same thing (units.hpp: bare = seconds).
set(at_700us "-DJSON_FIELDS=time_ns=700000|event_index=16|segments=11")
tdiag_cli_test(timeline.at_us FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|timeline|${oom}|--at|700us|--format|json" CHECKS "${at_700us}")
tdiag_cli_test(timeline.at_ms FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|timeline|${oom}|--at|0.7ms|--format|json" CHECKS "${at_700us}")
tdiag_cli_test(timeline.at_bare_seconds FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|timeline|${oom}|--at|0.0007|--format|json" CHECKS "${at_700us}")
tdiag_cli_test(timeline.at_percent FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|timeline|${oom}|--at|50%|--format|json"
  CHECKS "-DJSON_FIELDS=time_ns=939000|event_index=20")
tdiag_cli_test(timeline.event FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|timeline|${oom}|--event|16|--segments|2|--format|json"
  CHECKS "-DJSON_FIELDS=event_index=16|segments=11")
tdiag_cli_test(timeline.bad_time FAMILY trace EXPECT_RC 2 LABELS data
  ARGS "trace|timeline|${oom}|--at|soon" CHECKS "-DSTDERR_REGEX='soon' is not a time like 1.5s")
tdiag_cli_test(timeline.no_instant FAMILY trace EXPECT_RC 2 LABELS data
  ARGS "trace|timeline|${oom}" CHECKS "-DSTDERR_REGEX=--at or --event is required")
tdiag_cli_test(timeline.at_outside FAMILY trace EXPECT_RC 2 LABELS data
  ARGS "trace|timeline|${oom}|--at|150%"
  CHECKS "-DSTDERR_REGEX=--at: \\+2.82 ms lies outside the trace, which spans 1.88 ms")
tdiag_cli_test(timeline.negative_event FAMILY trace EXPECT_RC 2 LABELS data
  ARGS "trace|timeline|${oom}|--event|-1" CHECKS "-DSTDERR_REGEX=--event: expected N >= 0, got -1")

# Whole-job analysis and the op diff on HTA's traces: the figures HTA 0.6.1 computes
# (../shared/golden/hta/; tests/trace/job_analysis_test.cpp checks them all at the API).
set(hta "${TDIAG_DATA_DIR}/traces/hta")
tdiag_cli_test(analyze.critical_path_text FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/two_ranks|--hta-compat"
  CHECKS "-DSTDOUT_REGEX=critical path \\('ProfilerStep' instance 0\\): 301476 us over 3527 edges, bound by cpu_bound 300492 us")
# The 2-rank sample of a 128-rank job: 10 communication kernels have no partner (job_collectives).
tdiag_cli_test(analyze.unmatched_collectives FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/two_ranks"
  CHECKS "-DSTDOUT_REGEX=stragglers over 5 collectives matched on every rank of their group:.*10 communication kernels with no partner on some other rank")
# Clocks from the collectives by default, their residuals, and every straggler's cause.
tdiag_cli_test(analyze.clocks_text FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/two_ranks|--job-only"
  CHECKS "-DSTDOUT_REGEX=clocks: the collectives' ends \\(--align auto\\) \\(reference rank 0\\)[^\n]*\n  rank 0: \\+0.000 us; base time \\+0.000 us, collectives \\+0.000 us over 5, [^\n]*\n  rank 1: [-+][0-9.]+ us; base time [-+][0-9.]+ us, collectives [-+][0-9.]+ us over 5, .*latest arrivals and why")
tdiag_cli_test(analyze.clocks_json FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/two_ranks|--json|--align|base-time"
  CHECKS "-DSTDOUT_REGEX=\"clocks\": {\n *\"requested\": \"base-time\",\n *\"used\": \"base-time\".*\"cause\": {\n *\"kind\": \"(none|compute|host_gap|collective|copy)\"")
tdiag_cli_test(analyze.critical_path_json FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/critical_path_simple_add|--hta-compat|--json|--critical-path-annotation|measure|--critical-path-instance|1"
  CHECKS "-DSTDOUT_REGEX=\"graph_edges\": 415,[^}]*\"total_us\": 241724[^}]*\"bound_by_us\": {\n *\"cpu_bound\": 241190[^}]*\"gpu_compute_bound\": 508")
tdiag_cli_test(analyze.memory_bw_json FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/critical_path_simple_add|--json"
  CHECKS "-DSTDOUT_REGEX=\"memory_bw\": \\[\n *{\n *\"name\": \"Memcpy HtoD\",\n *\"gbps\": {\n *\"count\": 16,")
tdiag_cli_test(analyze.critical_path_no_annotation FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|analyze|${hta}/rocm_mi250|--critical-path-annotation|nowhere"
  CHECKS "-DSTDOUT_REGEX=critical path \\('nowhere' instance 1\\): not computed: no annotation contains 'nowhere'")
tdiag_cli_test(analyze.no_input FAMILY trace EXPECT_RC 2 ARGS "trace|analyze|${out}/no-such-folder"
  CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=no-such-folder: no such file or folder")
# The op diff of two runs (two files) and of two jobs (two folders).
tdiag_cli_test(diff.ops FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|diff|${hta}/two_ranks/sampled_rank-0.json.gz|${hta}/two_ranks/sampled_rank-1.json.gz|--format|json"
  CHECKS "-DJSON_FIELDS=ops_added=4|ops_removed=27|ops_increased=25|ops_decreased=41|ops_unchanged=306")
tdiag_cli_test(diff.jobs FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|diff|${hta}/two_ranks|${hta}/two_ranks|--format|json|--ops-json|${out}/ops.json"
  CHECKS "-DJSON_FIELDS=ops_added=0|ops_removed=0|ops_unchanged=403")
tdiag_cli_test(diff.ops_json FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|diff|${hta}/two_ranks/sampled_rank-0.json.gz|${hta}/two_ranks/sampled_rank-1.json.gz|--ops-json|${out}/ops01.json"
  CHECKS "-DOUTPUT_FILE=${out}/ops01.json" "-DJSON_MEMBERS=schema=tensordiag.op-diff/v1")
# Every command takes a job: one section per rank, each finding naming its rank.
tdiag_cli_test(summary.job FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|summary|${hta}/two_ranks|--top|1|--format|json"
  CHECKS "-DJSON_FIELDS=rank=0|kernels=1154|runtime_calls=1204")
tdiag_cli_test(summary.job_text FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|summary|${hta}/two_ranks/sampled_rank-*.json.gz|--top|1"
  CHECKS "-DSTDOUT_REGEX=note: rank 0: [^\n]*sampled_rank-0.json.gz: 4811 events[^\n]*\n.*note: rank 1: ")
tdiag_cli_test(export.job FAMILY trace EXPECT_RC 0 LABELS data
  ARGS "trace|export|${hta}/two_ranks|--chrome|${out}/two_ranks.json"
  CHECKS "-DOUTPUT_FILE=${out}/two_ranks.rank1.json"
         "-DSTDOUT_REGEX=wrote [0-9]+ trace events to [^\n]*two_ranks.rank0.json.*two_ranks.rank1.json")
