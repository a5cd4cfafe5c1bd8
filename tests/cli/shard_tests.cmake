# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
# End-to-end tests of every `tdiag shard` subcommand: check (on the shared golden corpus, label
# data, and on a malformed fixture), explain and validate.
if(NOT TARGET tensordiag::dtensor_checks)
  return()
endif()
set(out "${CMAKE_CURRENT_BINARY_DIR}/shard")
file(MAKE_DIRECTORY "${out}")
set(cases "${CMAKE_CURRENT_SOURCE_DIR}/data/shard")

# check: answers as JSONL on stdout, a report with -o; rejected cases give exit status 1.
tdiag_cli_test(check.fixture FAMILY shard EXPECT_RC 1 ARGS "shard|check|${cases}/two_cases.jsonl"
  CHECKS "-DSTDOUT_REGEX=^{\"id\":\"ok-mm\",\"ok\":true.*{\"id\":\"bad-relu_\",\"ok\":false"
         "-DSTDERR_REGEX=2 cases, 1 rejected, 0 malformed lines")
tdiag_cli_test(check.fixture_report FAMILY shard EXPECT_RC 1
  ARGS "shard|check|${cases}/two_cases.jsonl|--format|json|-o|${out}/two_cases.json"
  CHECKS "-DOUTPUT_FILE=${out}/two_cases.json" -DJSON_COUNT=1)
tdiag_cli_test(check.malformed FAMILY shard EXPECT_RC 2 ARGS "shard|check|${cases}/malformed.jsonl"
  CHECKS "-DSTDERR_REGEX=malformed.jsonl:1: malformed case")
set(golden "${TDIAG_DATA_DIR}/golden/dtensor_cases.jsonl")
if(EXISTS "${golden}")
  tdiag_cli_test(check.golden FAMILY shard EXPECT_RC 1 LABELS data
    ARGS "shard|check|${golden}|--format|json|-o|${out}/golden.json"
    CHECKS "-DOUTPUT_FILE=${out}/golden.json" -DJSON_COUNT=145
           "-DSTDERR_REGEX=2480 cases, 145 rejected, 0 malformed lines")
endif()

# explain: the candidates of one call; an op without a rule is bad usage (2).
tdiag_cli_test(explain.text FAMILY shard EXPECT_RC 0
  ARGS "shard|explain|mm|--mesh|2,4|--arg|f32[12,8] (S(0),R)|--arg|f32[8,4] (R,R)"
  CHECKS "-DSTDOUT_REGEX=^aten.mm.default on mesh \\(2, 4\\) \\(matrix rule\\)")
tdiag_cli_test(explain.json FAMILY shard EXPECT_RC 0
  ARGS "shard|explain|mm|--mesh|2,4|--arg|f32[12,8] (S(0),R)|--arg|f32[8,4] (R,R)|--format|json"
  CHECKS "-DJSON_MEMBERS=op=aten.mm.default|family=matrix")
tdiag_cli_test(explain.unknown_op FAMILY shard EXPECT_RC 2 ARGS "shard|explain|nosuchop|--mesh|2"
  CHECKS -DONE_LINE_ERROR=ON "-DSTDERR_REGEX=no sharding rule for aten.nosuchop")

# validate: every strategy of mm on a 2x2 mesh is right; the built-in wrong rules are caught.
tdiag_cli_test(validate.mm FAMILY shard EXPECT_RC 0 ARGS "shard|validate|--op|mm|--mesh|2,2"
  CHECKS "-DSTDERR_REGEX=validated 127 strategies of 1 ops: 0 wrong")
tdiag_cli_test(validate.mutations FAMILY shard EXPECT_RC 0 ARGS "shard|validate|--mutations"
  CHECKS "-DSTDERR_REGEX=16 of 16 wrong rules caught")
tdiag_cli_test(validate.unknown_op FAMILY shard EXPECT_RC 2 ARGS "shard|validate|--op|nosuch"
  CHECKS "-DSTDERR_REGEX=no sharding rule for nosuch")
