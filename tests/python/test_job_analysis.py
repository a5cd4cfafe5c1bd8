# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.trace.analyze against `tdiag trace analyze --json` on the shared HTA traces: the
same document, computed by the library (HTA's figures themselves are checked in
tests/trace/job_analysis_test.cpp)."""

import json

import pytest

import tensordiag
from tensordiag import trace

TWO_RANKS = "traces/hta/two_ranks"
SIMPLE_ADD = "traces/hta/critical_path_simple_add"


def cli_analysis(tdiag, *args):
    result = tdiag("trace", "analyze", *args, "--json", check_status=0)
    return json.loads(result.stdout)


@pytest.mark.parametrize("compat", [False, True])
def test_two_ranks_match_cli(shared, tdiag, compat):
    flags = ["--hta-compat"] if compat else []
    expected = cli_analysis(tdiag, shared / TWO_RANKS, *flags)
    got = trace.analyze(shared / TWO_RANKS, hta_compat=compat)
    assert got == expected
    assert got["schema"] == "tensordiag.analysis/v1"
    assert got["hta_compat"] is compat
    assert [r["rank"] for r in got["ranks"]] == [0, 1]
    rank0 = got["ranks"][0]
    assert rank0["kernel_time_us"] == pytest.approx(
        rank0["idle_time_us"] + rank0["compute_time_us"] + rank0["non_compute_time_us"])
    assert got["stragglers"]["collectives"], "the two ranks share NCCL collectives"


def test_files_glob_and_options_match_cli(shared, tdiag):
    files = sorted(str(p) for p in (shared / TWO_RANKS).glob("*.json.gz"))
    expected = cli_analysis(tdiag, *files, "--rank-from", "position", "--align", "collectives",
                            "--critical-path-annotation", "", "--critical-path-instance", "0",
                            "--critical-path-data-load", "DataLoader")
    got = trace.analyze(files, rank_from="position", align="collectives",
                        critical_path_annotation="", critical_path_instance=0,
                        critical_path_data_load=["DataLoader"])
    assert got == expected
    path = got["ranks"][0]["critical_path"]
    assert path["annotation"] == ""
    assert set(path["bound_by_us"]) >= {"cpu_bound", "data_loading", "none"}
    glob = trace.analyze(str(shared / TWO_RANKS / "sampled_rank-*.json.gz"))
    assert [r["source"] for r in glob["ranks"]] == [r["source"] for r in got["ranks"]]


def test_one_trace_and_its_warnings(shared, tdiag):
    got = trace.analyze(shared / SIMPLE_ADD)
    assert got == cli_analysis(tdiag, shared / SIMPLE_ADD)
    assert len(got["ranks"]) == 1
    assert isinstance(got.warnings, list)
    assert all(w.code.startswith("TDIAG-") for w in got.warnings)


def test_bad_input_and_options(tmp_path):
    with pytest.raises(tensordiag.InputError) as e:
        trace.analyze(tmp_path / "missing-*.json")
    assert e.value.code == "TDIAG-TR-260"
    with pytest.raises(ValueError, match="rank_from"):
        trace.analyze(tmp_path, rank_from="hostname")
    with pytest.raises(ValueError, match="align"):
        trace.analyze(tmp_path, align="clocks")


def test_clocks_and_straggler_causes(shared, tdiag):
    got = trace.analyze(shared / TWO_RANKS)
    assert got == cli_analysis(tdiag, shared / TWO_RANKS)
    clocks = got["clocks"]
    assert clocks["requested"] == "auto" and clocks["used"] == "collectives"
    assert [r["offset_ns"] for r in clocks["ranks"]] == got["clock_offsets_ns"]
    assert clocks["ranks"][1]["collectives"] == 5
    causes = [c["cause"] for c in got["stragglers"]["collectives"]]
    assert all(c["kind"] in ("none", "compute", "host_gap", "collective", "copy") for c in causes)
    assert {"late_us", "late_by_cause_us", "late_by_step"} <= set(got["stragglers"]["per_rank"][0])
    base = trace.analyze(shared / TWO_RANKS, align="base-time", job_only=True)
    assert base["clocks"]["used"] == "base-time"
    assert base["ranks"][0]["kernels"] == [] and base["ranks"][0]["gpu_rows"] > 0
    assert base["stragglers"]["collectives"], "the job-wide analyses still run"
