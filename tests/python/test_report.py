# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.report against `tdiag report convert/merge`."""

import json

import pytest

import tensordiag
from tensordiag import report, trace
from conftest import without_metadata


@pytest.fixture()
def reports(shared, tmp_path):
    """Two report files: a summary and an oom report (with an error)."""
    a = trace.load(shared / "traces/train_trace_small.json.gz").summary().report
    b = trace.load(shared / "traces/oom_snapshot.pickle").oom().report
    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for r, p in zip((a, b), paths):
        p.write_text(r.to_json())
    return paths


def test_round_trip_and_formats(reports, tdiag):
    r = report.load(reports[1])
    assert r.to_json() == reports[1].read_text()
    assert r.has_errors and r.count("error") == 1
    d = r.diagnostics[0]
    assert d.code == "TDIAG-TR-220" and d.severity == "error" and d.fields["verdict"] == "process_limit"
    for fmt, method in [("text", r.to_text), ("json", r.to_json), ("sarif", r.to_sarif),
                        ("junit", r.to_junit), ("github", r.to_github)]:
        cli = tdiag("report", "convert", reports[1], "--to", fmt, "--color", "never")
        assert cli.returncode == 1  # the report holds an error
        assert method() == cli.stdout, fmt
        assert r.render(fmt) == cli.stdout


def test_merge_matches_cli(reports, tdiag):
    merged = report.merge([report.load(p) for p in reports])
    cli = tdiag("report", "merge", *reports, "--to", "json")
    assert json.loads(merged.to_json()) == json.loads(cli.stdout)
    assert len(merged) == sum(len(report.load(p)) for p in reports)


def test_bad_report_is_the_cli_line(tmp_path, tdiag):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": 3}')
    with pytest.raises(tensordiag.InputError) as info:
        report.load(bad)
    cli = tdiag("report", "convert", bad, check_status=2)
    assert cli.stderr.strip() == f"tdiag: {info.value}"
    assert info.value.code and info.value.code.startswith("TDIAG-")
    with pytest.raises(tensordiag.InputError, match="<here>"):
        report.from_json("{", source="<here>")


def test_bad_format_name():
    with pytest.raises(ValueError):
        report.Report().render("pdf")
