# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of `tdiag fr analyze` on the synthetic Flight Recorder dumps of tests/data/fr
# (make_dumps.py; truth.json in each folder): exit statuses, the verdict in text and in
# tensordiag.fr/v1, the report formats, and one-line errors.
if(NOT TARGET tensordiag::trace_fr)
  return()
endif()
set(dumps "${PROJECT_SOURCE_DIR}/tests/data/fr")
set(out "${CMAKE_CURRENT_BINARY_DIR}/fr")
file(MAKE_DIRECTORY "${out}")

tdiag_cli_test(analyze.clean FAMILY fr EXPECT_RC 0 ARGS "fr|analyze|${dumps}/all_matched"
  CHECKS "-DSTDOUT_REGEX=every collective matched")
tdiag_cli_test(analyze.host_stuck FAMILY fr EXPECT_RC 1 ARGS "fr|analyze|${dumps}/host_stuck"
  CHECKS "-DSTDOUT_REGEX=culprits \\(1\\):\n  rank 2: not_reached in group 0 #5")
tdiag_cli_test(analyze.json FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/skipped_collective|--json|-o|${out}/skipped.json"
  CHECKS "-DOUTPUT_FILE=${out}/skipped.json"
         "-DJSON_MEMBERS=schema=tensordiag.fr/v1|culprits/0/rank=2|culprits/0/cause=desync|culprits/0/op=nccl:all_reduce|mismatches/0/state=COLLECTIVE_TYPE_MISMATCH")
tdiag_cli_test(analyze.glob FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/missing_dump/_dump_*|--json"
  CHECKS "-DJSON_MEMBERS=culprits/0/rank=3|culprits/0/cause=no_dump|ranks/3/dump=missing")
tdiag_cli_test(analyze.report FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/not_started|--format|json|-o|${out}/not_started.report.json"
  CHECKS "-DOUTPUT_FILE=${out}/not_started.report.json"
         "-DJSON_FIELDS=rank=1|cause=not_completed|seq=5")
tdiag_cli_test(analyze.github FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/empty_dump|--format|github|-o|${out}/empty_dump.github"
  CHECKS "-DGITHUB_FILE=${out}/empty_dump.github")
tdiag_cli_test(analyze.not_a_dump FAMILY fr EXPECT_RC 2
  ARGS "fr|analyze|${PROJECT_SOURCE_DIR}/tests/cli/data/rank0.json" CHECKS -DONE_LINE_ERROR=ON
       "-DSTDERR_REGEX=TDIAG-FR-002|not a Flight Recorder dump")
tdiag_cli_test(analyze.nothing FAMILY fr EXPECT_RC 2 ARGS "fr|analyze|${out}/no-such-dump-*"
  CHECKS -DONE_LINE_ERROR=ON)
# Beside the job's traces (tests/data/fr_traces/make_traces.py: rank 2 computes longer before
# every all-reduce and never launches the last): its last kernels and the stragglers.
set(fr_traces "${PROJECT_SOURCE_DIR}/tests/data/fr_traces")
tdiag_cli_test(analyze.traces FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/host_stuck|--traces|${fr_traces}/host_stuck"
  CHECKS "-DSTDOUT_REGEX=the job's traces \\([^\n]*host_stuck\\): 4 rank\\(s\\), 2 collective\\(s\\) matched\n  rank 2 \\([^\n]*rank-2.json\\): 5 last kernel\\(s\\) before the end of its trace at [^\n]*\n(    [^\n]*\n)*    \\+[^\n]* on stream 7  embedding_backward_kernel\n  stragglers \\(trace analyze\\):\n    rank 2 \\(a culprit\\): arrived last 2 time\\(s\\)[^\n]*mostly compute")
tdiag_cli_test(analyze.traces_json FAMILY fr EXPECT_RC 1
  ARGS "fr|analyze|${dumps}/host_stuck|--traces|${fr_traces}/host_stuck|--json|-o|${out}/traces.json"
  CHECKS "-DOUTPUT_FILE=${out}/traces.json"
         "-DJSON_MEMBERS=schema=tensordiag.fr/v1|culprits/0/rank=2|traces/ranks=4|traces/culprits/0/rank=2|traces/culprits/0/last_kernels/4/name=embedding_backward_kernel|traces/culprits/0/last_kernels/4/stream=7|traces/stragglers/0/rank=2|traces/stragglers/0/cause=compute")
tdiag_cli_test(analyze.traces_missing FAMILY fr EXPECT_RC 2
  ARGS "fr|analyze|${dumps}/host_stuck|--traces|${out}/no-such-run"
  CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=--traces: [^\n]*no-such-run: no such file or folder")
