# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Results in a notebook: what print() and Jupyter show, DataFrames with the JSON report's
column names and one unit convention, resolved event tables, plots."""

import logging
import warnings

import pytest

from tensordiag import trace
from tensordiag.trace import LoadWarning

pd = pytest.importorskip("pandas")

SMALL = "traces/train_trace_small.json.gz"
SNAPSHOT = "traces/train_snapshot.pickle"
OOM = "traces/oom_snapshot.pickle"


@pytest.fixture(scope="module")
def small(shared):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return trace.load(shared / SMALL)


@pytest.fixture(scope="module")
def snapshot(shared):
    return trace.load(shared / SNAPSHOT)


def test_print_shows_the_reports_top_lines(snapshot):
    leaks = snapshot.leaks()
    text = str(leaks)
    assert text == repr(leaks)
    assert text.splitlines()[0] == leaks.to_text().splitlines()[0]
    assert "<Leaks" not in text and "live" in text
    assert len(text.splitlines()) <= 13


def test_html_tables(snapshot, small):
    html = snapshot.leaks()._repr_html_()
    assert html.count("<table>") == 2 and "first_alloc_ns" in html and "MiB" in html
    summary = small.summary()._repr_html_()
    assert "<th>kernel</th>" in summary and "<th>busy_ns</th>" in summary
    assert "<table>" in small._repr_html_()


def test_result_frames_use_the_reports_names(snapshot, shared):
    leaks = snapshot.leaks()
    sites = leaks.to_pandas()
    assert list(sites.columns) == ["site", "live_bytes", "live_allocations", "growing",
                                   "growth_per_iteration_bytes", "iterations", "stacks",
                                   "first_alloc_ns", "last_alloc_ns"]
    report_sites = [d for d in leaks.report.diagnostics
                    if any(f == "first_alloc_ns" for f in d.fields)]
    assert report_sites, "the leak report names first_alloc_ns"
    first = report_sites[0].fields
    row = sites[sites["site"] == first["site"]].iloc[0]
    assert row["first_alloc_ns"] == first["first_alloc_ns"]
    assert row["live_bytes"] == first["live_bytes"]
    assert int(sites["live_bytes"].sum()) <= leaks.live_bytes
    assert str(sites["first_alloc_ns"].dtype) in ("int64", "Int64")  # unknown: <NA>, not -2**63
    assert (sites["first_alloc_ns"].dropna() >= 0).all()

    oom = trace.load(shared / OOM).oom()
    findings = oom.to_pandas()
    assert findings.loc[0, "verdict"] == "process_limit"
    fields = oom.report.diagnostics[0].fields
    for column in ("requested_bytes", "reserved_bytes", "time_ns"):
        if column in fields:
            assert findings.loc[0, column] == fields[column], column
    assert set(oom.to_pandas("sites").columns) == {"finding", "site", "live_bytes",
                                                  "live_allocations"}
    assert list(snapshot.summary().to_pandas("memory").columns)[:3] == [
        "device", "memory_events", "peak_allocated_bytes"]
    assert "allocated_bytes" in snapshot.timeline(at="1ms").to_pandas().columns
    diff = snapshot.diff(trace.load(shared / OOM))
    assert list(diff.to_pandas().columns)[:4] == ["site", "bytes_a", "bytes_b", "delta_bytes"]
    assert diff.tables == ["sites", "kernels"]
    with pytest.raises(ValueError, match="tables: sites"):
        leaks.to_pandas("nope")


def test_event_frames_resolve_ids(small, snapshot):
    kernels = small.to_pandas("kernels")
    assert isinstance(kernels["name"].dtype, pd.CategoricalDtype)
    assert (kernels["name"].astype(str) == [small.string(i) for i in kernels["name_id"]]).all()
    assert kernels["lane_name"].astype(str).str.contains("stream").all()
    memory = snapshot.to_pandas("memory")
    assert "alloc" in set(memory["action_name"].astype(str))
    with_stack = memory[memory["stack_id"] > 0]
    if len(with_stack):
        stack = snapshot.stacks()[int(with_stack["stack_id"].iloc[0])]
        assert str(with_stack["stack"].iloc[0]) == " <- ".join(stack)
    lanes = small.lanes()
    assert lanes.index.name == "lane" and {"kind", "label"} <= set(lanes.columns)
    assert small.strings()[0] == ""
    raw = small.to_pandas("kernels", resolve=False)
    assert "name" not in raw.columns and len(raw) == len(kernels)


def test_analysis_frames_in_ns(shared):
    job = trace.analyze(shared / "traces/hta/two_ranks", hta_compat=True)
    ranks = job.to_pandas("ranks")
    assert ranks.loc[0, "idle_time_ns"] == round(job["ranks"][0]["idle_time_us"] * 1000)
    assert not any(c.endswith("_us") for c in ranks.columns)
    per_rank = job.to_pandas("stragglers.per_rank")
    assert list(per_rank["rank"]) == [0, 1]
    assert "ranks.kernels" in job.tables
    kernels = job.to_pandas("ranks.kernels")
    assert {"rank", "name", "sum_ns"} <= set(kernels.columns)
    text = str(job)
    assert text.startswith("whole-job analysis of 2 rank(s)") and "stragglers" in text
    assert "<table>" in job._repr_html_()


def test_load_warnings_reach_warnings_and_logging(tmp_path, caplog):
    # An event of a phase no Kineto writer uses is skipped, and the skip is a load warning.
    path = tmp_path / "unknown_phase.json"
    path.write_text('{"traceEvents": ['
                    '{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1,'
                    ' "dur": 2, "args": {"stream": 7, "device": 0}},'
                    '{"ph": "Q", "name": "odd", "pid": 0, "tid": 7, "ts": 1}]}')
    with caplog.at_level(logging.WARNING, logger="tensordiag"):
        with pytest.warns(LoadWarning, match="load warning"):
            t = trace.load(path)
    assert any("TDIAG-TR-124" in r.getMessage() for r in caplog.records)
    assert t.warnings


def test_memory_curves_replay_the_allocator(snapshot):
    from tensordiag.plot import memory_curves

    memory = snapshot.memory
    allocated, reserved = memory_curves(memory, memory["device"] == 0)
    peaks = snapshot.summary().to_pandas("memory").iloc[0]
    assert reserved.max() == peaks["peak_reserved_bytes"]
    # Blocks allocated before the snapshot's history began are not in its events.
    assert 0.99 * peaks["peak_allocated_bytes"] <= allocated.max() <= peaks["peak_allocated_bytes"]


def test_plots(snapshot, shared):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    assert snapshot.plot_memory().get_ylabel() == "GiB"
    job = trace.analyze(shared / "traces/hta/two_ranks")
    assert len(job.plot_breakdown().patches) == 6
    assert job.plot_stragglers().get_title().startswith("stragglers")


def test_kernel_op_link(small):
    link = small.kernel_ops()
    kernels = small.to_pandas("kernels")
    assert len(link) == len(kernels)
    linked = link[link["launch_index"] >= 0]
    assert len(linked) > 0.9 * len(kernels)
    assert linked["launch"].astype(str).str.contains("Launch|Memcpy|Memset", regex=True).any()
    with_op = link[link["op_index"] >= 0]
    assert len(with_op) > 0 and with_op["op"].astype(str).str.startswith("aten::").any()
