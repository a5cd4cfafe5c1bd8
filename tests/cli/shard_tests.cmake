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

# report: the hand-written MLP recording (tests/data/dtensor): the ranked lines, the fix, the JSON
# schema, and the findings in every report format; a malformed recording is one line, exit 2.
set(recording "${PROJECT_SOURCE_DIR}/tests/data/dtensor/mlp_recording.jsonl")
tdiag_cli_test(report.text FAMILY shard EXPECT_RC 0 ARGS "shard|report|${recording}"
  CHECKS "-DSTDOUT_REGEX=^15 records \\(600 op calls\\); 2 source lines redistributed 3.75 MiB per rank in 80 collectives \\([^\n]*mlp_recording.jsonl\\)\n.*  1      2.50 MiB      40  all_gather×40 +samples/dtensor_mlp/train.py:41 +aten.mm.default\n  2      1.25 MiB      40  all_reduce×40 +samples/dtensor_mlp/train.py:52 .*fix: produce `self` \\(arg 0\\) as R on mesh dim 1 \\(tp\\) \\(it arrives as S\\(1\\)\\), so aten.mm.default needs no all_gather: saves 64.00 KiB per rank per call × 40 calls; this is the placement PyTorch redistributes to, so whatever produces it would communicate instead\n.*propagation: 14 recorded ops checked, 14 agree with PyTorch, 0 findings; 1 not covered \\(aten.addcmul_.default ×1\\)")
tdiag_cli_test(report.top FAMILY shard EXPECT_RC 0 ARGS "shard|report|${recording}|--top|1"
  CHECKS "-DSTDOUT_REGEX=\\.\\.\\. 1 more lines \\(--top 0 lists all\\)")
tdiag_cli_test(report.json FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${recording}|--json|-o|${out}/mlp_report.json"
  CHECKS "-DOUTPUT_FILE=${out}/mlp_report.json"
         "-DJSON_MEMBERS=schema=tensordiag.shard_report/v1|records=15|calls=600|bytes=3932160|lines/0/line=41|lines/0/bytes=2621440|lines/0/causes/0/arg_name=self|lines/0/causes/0/redistributions/0/collective=all_gather|lines/0/causes/0/fix/placements/1=R|lines/1/line=52|propagation/agree=14")
tdiag_cli_test(report.sarif FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${recording}|--to|sarif|-o|${out}/mlp_report.sarif"
  CHECKS "-DOUTPUT_FILE=${out}/mlp_report.sarif" FIXTURE tdiag_cli_shard_sarif)
tdiag_cli_test(report.github FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${recording}|--to|github|-o|${out}/mlp_report.github"
  CHECKS "-DGITHUB_FILE=${out}/mlp_report.github")
tdiag_cli_test(report.core_text FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${recording}|--to|text|--top|1"
  CHECKS "-DSTDOUT_REGEX=^samples/dtensor_mlp/train.py:41: warning: this line redistributes 2.50 MiB per rank in 40 collectives \\(all_gather×40\\) before aten.mm.default \\[TDIAG-DT-401\\]\n.*  hint: produce `self` \\(arg 0\\) as R on mesh dim 1 \\(tp\\)")
tdiag_cli_test(report.core_json FAMILY shard EXPECT_RC 0 ARGS "shard|report|${recording}|--to|json"
  CHECKS -DJSON_COUNT=2 "-DJSON_FIELDS=rank=1|bytes=2621440|count=40")
tdiag_cli_test(report.malformed FAMILY shard EXPECT_RC 2
  ARGS "shard|report|${cases}/bad_recording.jsonl"
  CHECKS -DONE_LINE_ERROR=ON
         "-DSTDERR_REGEX=bad_recording.jsonl:1: malformed case 'r1': calls must be an integer\n$")
tdiag_cli_test(report.json_and_to FAMILY shard EXPECT_RC 2
  ARGS "shard|report|${recording}|--json|--to|sarif")
# report's modules (tests/data/dtensor/modules_recording.jsonl): FSDP2's collectives and DTensor's
# by module and phase, after the lines; --top limits both tables and the JSON's arrays.
set(modules_recording "${PROJECT_SOURCE_DIR}/tests/data/dtensor/modules_recording.jsonl")
tdiag_cli_test(report.modules FAMILY shard EXPECT_RC 0 ARGS "shard|report|${modules_recording}"
  CHECKS "-DSTDOUT_REGEX=\nmodules: 7 module phases moved 38.96 KiB per rank in 12 collectives\n\n  #    bytes/rank   count  phase     collectives                         module\n  1     24.00 KiB       3  backward  reduce_scatter×3                    Model.blocks.0\n  2     12.00 KiB       3  forward   all_gather×3                        Model.blocks.0\n  3      1.95 KiB       2  forward   all_reduce×2                        Model.blocks.1.down\n  4         500 B       1  forward   broadcast×1                         Model.blocks.1\n  5         500 B       1  forward   broadcast×1                         Model.blocks.2\n  6          16 B       1  backward  reduce_scatter×1                    <top level>\n  7          10 B       1            all_gather×1                        <top level>\n")
tdiag_cli_test(report.modules_top FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${modules_recording}|--top|2"
  CHECKS "-DSTDOUT_REGEX=  2     12.00 KiB       3  forward   all_gather×3 +Model.blocks.0\n  \\.\\.\\. 5 more module phases \\(--top 0 lists all\\)\n")
tdiag_cli_test(report.modules_json FAMILY shard EXPECT_RC 0
  ARGS "shard|report|${modules_recording}|--json|--top|2|-o|${out}/modules_report.json"
  CHECKS "-DOUTPUT_FILE=${out}/modules_report.json"
         "-DJSON_MEMBERS=schema=tensordiag.shard_report/v1|modules/0/rank=1|modules/0/module=Model.blocks.0|modules/0/phase=backward|modules/0/bytes=24576|modules/0/count=3|modules/0/collectives/reduce_scatter=3|modules/1/lines/train.py:12=12288|modules/1/ops/c10d._allgather_base_.default=3")
# check works on a recording: the op without a rule is its one rejection.
tdiag_cli_test(check.recording FAMILY shard EXPECT_RC 1 ARGS "shard|check|${recording}|--score"
  CHECKS "-DSTDERR_REGEX=score: 14/15 cases agree.*15 cases, 1 rejected, 0 malformed lines")
if(TDIAG_PYTHON3)
  add_test(NAME tensordiag.test.cli.shard.report.sarif_schema
           COMMAND "${TDIAG_PYTHON3}" "${CMAKE_CURRENT_SOURCE_DIR}/validate_json.py"
                   "${PROJECT_SOURCE_DIR}/tests/data/sarif-schema-2.1.0.json"
                   "${out}/mlp_report.sarif")
  set_tests_properties(tensordiag.test.cli.shard.report.sarif_schema PROPERTIES
                       LABELS cli FIXTURES_REQUIRED tdiag_cli_shard_sarif SKIP_RETURN_CODE 77)
endif()
