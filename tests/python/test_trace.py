# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""tensordiag.trace against `tdiag trace` on the shared traces: the same figures."""

import os
import shutil
import threading
from pathlib import Path

import pytest

import tensordiag
from tensordiag import trace
from conftest import SOURCE_DIR, without_metadata

SMALL = "traces/train_trace_small.json.gz"
SNAPSHOT = "traces/train_snapshot.pickle"
OOM = "traces/oom_snapshot.pickle"


@pytest.fixture(scope="module")
def small(shared):
    return trace.load(shared / SMALL)


@pytest.fixture(scope="module")
def snapshot(shared):
    return trace.load(shared / SNAPSHOT)


def cli_json(tdiag, *args):
    result = tdiag("trace", *args, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    return without_metadata(result.stdout)


def test_load_detects_format(small, snapshot):
    assert small.format == "kineto-json"
    assert snapshot.format == "torch-snapshot"
    assert small.event_count > 0
    begin, end = small.span
    assert end > begin
    # 85 flow ends without their partner carry nothing: counted, not a warning (issue 36).
    assert not any(w.code == "TDIAG-TR-124" for w in small.warnings)
    assert small.properties["kineto.unpaired_flows"] == "85"


@pytest.mark.parametrize("path", [SMALL, SNAPSHOT, OOM])
def test_summary_matches_cli(shared, tdiag, path):
    t = trace.load(shared / path)
    s = t.summary()
    assert without_metadata(s.to_json()) == cli_json(tdiag, "summary", shared / path)
    cli_text = tdiag("trace", "summary", shared / path, "--color", "never").stdout
    # The last line names the run's time; everything above it is the same text.
    assert s.to_text().splitlines()[:-1] == cli_text.splitlines()[:-1]
    assert s.to_text().splitlines()[-1].endswith(cli_text.splitlines()[-1].split(": ", 1)[1])


def test_summary_figures(shared, tdiag, small):
    s = small.summary(top=3)
    doc = cli_json(tdiag, "summary", shared / SMALL, "--top", "3")
    overview = {f["name"]: f["value"] for f in doc["diagnostics"][0]["fields"]}
    assert overview["kernels"] == s.counts["kernels"] == len(small.kernels["start_ns"])
    assert overview["span_ns"] == s.span[1] - s.span[0]
    assert len(s.kernels) >= 1 and s.kernels[0]["total_ns"] >= s.kernels[-1]["total_ns"]


def test_leaks_match_cli(shared, tdiag, snapshot):
    leaks = snapshot.leaks()
    assert without_metadata(leaks.to_json()) == cli_json(tdiag, "leaks", shared / SNAPSHOT)
    assert leaks.live_bytes == sum(s["live_bytes"] for s in leaks.sites) or leaks.sites
    assert leaks.sites and isinstance(leaks.sites[0]["site"], str)


def test_leaks_say_when_the_dump_and_its_history_disagree(tmp_path):
    import pickle
    address = 0x7F0000000000
    frames = [{"name": "f", "filename": "m.py", "line": 3}]
    events = [{"action": "segment_alloc", "addr": address, "size": 2 << 20, "stream": 0,
               "time_us": 1, "frames": []},
              {"action": "alloc", "addr": address, "size": 1 << 20, "stream": 0, "time_us": 2,
               "frames": frames}]
    path = tmp_path / "disagree.pickle"
    path.write_bytes(pickle.dumps({"segments": [], "device_traces": [events]}, protocol=4))
    leaks = trace.load(path).leaks()
    assert leaks.live_bytes == 0  # the dump holds nothing
    assert (leaks.open_not_in_dump, leaks.open_not_in_dump_bytes) == (1, 1 << 20)
    import json
    codes = [d["code"] for d in json.loads(leaks.to_json())["diagnostics"]]
    assert "TDIAG-TR-213" in codes


def test_oom_matches_cli(shared, tdiag):
    t = trace.load(shared / OOM)
    oom = t.oom()
    assert without_metadata(oom.to_json()) == cli_json(tdiag, "oom", shared / OOM)
    assert len(oom.findings) == 1
    finding = oom.findings[0]
    assert finding["verdict"] == "process_limit"
    assert finding["requested"] == 3221225472
    assert oom.report.has_errors
    # The live sites as the report's notes word them, from the finding itself.
    notes = [n[len("live: "):] for n in oom.report.diagnostics[0].notes if n.startswith("live: ")]
    assert notes and [s["text"] for s in finding["sites"][: len(notes)]] == notes


def test_timeline_matches_cli(shared, tdiag, snapshot):
    at = snapshot.timeline(at="1ms")
    assert without_metadata(at.to_json()) == cli_json(tdiag, "timeline", shared / SNAPSHOT,
                                                      "--at", "1ms")
    assert at.lanes[0]["event_index"] == 4
    assert snapshot.summary().memory[0]["peak_requested"] == 853600280  # as the C++ summary
    by_event = snapshot.timeline(event=100)
    assert without_metadata(by_event.to_json()) == cli_json(tdiag, "timeline", shared / SNAPSHOT,
                                                            "--event", "100")
    assert snapshot.timeline(at=1_000_000).lanes == at.lanes
    with pytest.raises(ValueError):
        snapshot.timeline()
    with pytest.raises(ValueError, match="'soon' is not a time like .* or 40% of the span"):
        snapshot.timeline(at="soon")
    # The CLI's grammar: a share of the span, and a bare number of seconds.
    assert without_metadata(snapshot.timeline(at="40%").to_json()) == cli_json(
        tdiag, "timeline", shared / SNAPSHOT, "--at", "40%")
    assert snapshot.timeline(at="0.001").lanes == at.lanes


def test_timeline_of_a_snapshot_without_times(tdiag):
    # Every event at one instant: a share is of the events, as in the CLI; a time names nothing.
    path = SOURCE_DIR / "tests" / "data" / "trace" / "real_shapes" / "pt21_no_time_us_p3.pickle"
    t = trace.load(path)
    half = t.timeline(at="40%")
    assert half.lanes[0]["event_index"] == 2
    assert without_metadata(half.to_json()) == cli_json(tdiag, "timeline", path, "--at", "40%")
    with pytest.raises(ValueError, match="carry no times .* give a share of them"):
        t.timeline(at="2ms")


def test_diff_matches_cli(shared, tdiag, small, snapshot):
    d = small.diff(snapshot)
    assert without_metadata(d.to_json()) == cli_json(tdiag, "diff", shared / SMALL,
                                                     shared / SNAPSHOT)
    assert d.live_a == small.diff(small).live_b


def test_report_formats_are_the_cli_formats(shared, tdiag, small):
    s = small.summary()
    for fmt, method in [("sarif", s.to_sarif), ("junit", s.to_junit), ("github", s.to_github)]:
        cli = tdiag("trace", "summary", shared / SMALL, "--format", fmt).stdout
        if fmt != "github":  # SARIF and JUnit carry the run's time
            assert len(method().splitlines()) == len(cli.splitlines())
        else:
            assert method() == cli


def test_columns_are_views_without_copies(small):
    np = pytest.importorskip("numpy")
    cols = small.kernels
    start, end = cols["start_ns"], cols["end_ns"]
    assert start.dtype == np.int64 and len(start) == small.summary().counts["kernels"]
    assert (end >= start).all()
    assert not start.flags.owndata and not start.flags.writeable
    assert start.strides == (88,)  # one kernel record
    name = small.string(int(cols["name_id"][0]))
    assert name and name in {k["name"] for k in small.summary(top=1000).kernels}
    assert set(small.memory) >= {"time_ns", "action", "size", "total_allocated"}
    # Every field of the record (trace-format.md's table), the copy bandwidth included.
    assert {"grid_x", "grid_z", "launch_id"} <= set(cols)
    assert {"bytes", "bandwidth_gbps"} <= set(small.copies)
    assert small.copies["bandwidth_gbps"].dtype == np.float32
    with pytest.raises(ValueError, match="no event kind"):
        small.events("widgets")


def test_columns_outlive_the_trace(shared):
    pytest.importorskip("numpy")
    cols = trace.load(shared / SMALL).kernels  # the Trace goes away; the arrays keep it alive
    import gc

    gc.collect()
    assert int(cols["end_ns"].max()) > 0


def test_dataframe(small):
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(small.kernels)
    assert len(df) == small.summary().counts["kernels"]
    assert (df["end_ns"] - df["start_ns"]).sum() > 0


def test_bad_input_is_the_cli_line(tmp_path, tdiag):
    bad = tmp_path / "garbage.json"
    bad.write_text("garbage\n")
    with pytest.raises(tensordiag.InputError) as info:
        trace.load(bad)
    cli = tdiag("trace", "summary", bad)
    assert cli.returncode == 2
    assert cli.stderr.strip().splitlines()[-1] == f"tdiag: {info.value}"
    assert info.value.code == "TDIAG-TR-002"
    assert info.value.report.diagnostics[0].code == info.value.code
    assert isinstance(info.value, tensordiag.Error)


def test_part_of_a_trace_is_what_the_cli_opens(shared, tdiag, small):
    part = trace.load(shared / SMALL, device=0, window="25%:50%")
    assert 0 < part.event_count < small.event_count
    begin, end = part.span
    whole_begin, whole_end = small.span
    assert whole_begin <= begin and end <= whole_end
    assert without_metadata(part.summary().to_json()) == cli_json(
        tdiag, "summary", shared / SMALL, "--device", "0", "--window", "25%:50%")
    with pytest.raises(ValueError, match="is not A:B"):
        trace.load(shared / SMALL, window="25%")
    with pytest.raises(tensordiag.InputError) as info:
        trace.load(shared / SMALL, device=7)
    assert info.value.code == "TDIAG-TR-004"
    assert "has no device 7" in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(tensordiag.InputError) as info:
        trace.load(tmp_path / "absent.pickle")
    assert info.value.code == "TDIAG-CORE-004"
    assert "absent.pickle" in str(info.value)


def test_loads_release_the_gil(shared):
    # Two loads in threads while this thread counts, but only while a load is inside the C++
    # call: had the load held the GIL, this thread could not run until the call returned.
    path = shared / "traces/train_trace_large.json.gz"
    results, errors, loading = {}, [], [False, False]

    def work(key):
        try:
            loading[key] = True
            t = trace.load(path)
            loading[key] = False
            results[key] = t.summary().counts["kernels"]
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    ticks = 0
    while any(th.is_alive() for th in threads):
        if loading[0] or loading[1]:
            ticks += 1
    for th in threads:
        th.join()
    assert not errors
    assert results[0] == results[1] > 0
    assert ticks > 1000, f"only {ticks} iterations ran during two loads: the GIL was held"


@pytest.mark.parametrize("call", [
    lambda t: t.summary(), lambda t: t.leaks(), lambda t: t.oom(),
    lambda t: t.timeline(at="1ms"), lambda t: t.diff(t)])
def test_empty_handle_raises_not_crashes(call):
    # Trace(None).summary() killed the interpreter with SIGSEGV (issue 36).
    with pytest.raises(TypeError):
        call(trace.Trace(None))


def test_core_functions_refuse_none():
    from tensordiag._core import core
    with pytest.raises(TypeError):
        core.summary(None, 5)
    with pytest.raises(TypeError):
        core.diff(None, None, 5)


def test_summary_memory_counts_mismatched_events(tdiag):
    # An allocation at an address already live (a hostile sweep's input): the library counts it,
    # the table and the CLI's JSON say the same.
    seed = (Path(__file__).resolve().parents[1] / "trace" / "fuzz" / "corpus" / "snapshot_import"
            / "alloc_twice_at_one_address.pickle")
    s = trace.load(seed).summary()
    rows = s.rows("memory")
    assert [r["mismatched_events"] for r in rows] == [1]
    doc = cli_json(tdiag, "summary", seed)
    fields = {f["name"]: f["value"] for f in doc["diagnostics"][1]["fields"]}
    assert fields["mismatched_events"] == 1


FIXTURE = Path(__file__).resolve().parents[1] / "data" / "trace" / "leaking_train_snapshot.pickle"


def test_a_name_that_is_not_utf8_loads(tmp_path):
    # os.listdir gives such a name as a str with surrogate escapes; pybind11 refused it.
    raw = os.fsencode(tmp_path) + b"/snap_\xff.pickle"
    shutil.copyfile(FIXTURE, raw)
    events = trace.load(FIXTURE).event_count
    for path in (os.fsdecode(raw), raw, Path(os.fsdecode(raw))):
        assert trace.load(path).event_count == events
    assert trace.analyze([os.fsdecode(raw)], job_only=True)


@pytest.mark.parametrize("call, error, text", [
    (lambda t: t.timeline(at=1.5), TypeError, "at=1.5: give a time since the start"),
    (lambda t: t.timeline(at=[1]), TypeError, "at=\\[1\\]"),
    (lambda t: t.timeline(at=2**63), ValueError, "at=9223372036854775808: expected an integer"),
    (lambda t: t.timeline(event=-1), ValueError, "event=-1"),
    (lambda t: t.summary(top=-1), ValueError, "top=-1"),
    (lambda t: t.leaks(top=2**100), ValueError, "top=1267650600228229401496703205376"),
    (lambda t: t.string(-1), ValueError, "string_id=-1"),
    (lambda t: t.string(2**32), ValueError, "string_id=4294967296"),
    (lambda t: t.diff(None), TypeError, "expected a Trace"),
    (lambda t: trace.load(FIXTURE, device=2**64), ValueError, "device=18446744073709551616"),
    (lambda t: trace.load(3.5), TypeError, "expected a path"),
])
def test_bad_arguments_name_themselves(call, error, text):
    # Each reached pybind11's conversion: "incompatible function arguments" or "Unable to cast".
    with pytest.raises(error, match=text):
        call(trace.load(FIXTURE))


def test_a_time_outside_the_trace_is_refused_as_the_cli_refuses_it():
    # 2**62 ns was added to the start unchecked (an overflow past 2**63); -1s and 150% were
    # clamped silently, where --window refuses them.
    t = trace.load(FIXTURE)
    for at in (2**62, -1, "-1s", "150%"):
        with pytest.raises(ValueError, match="lies outside the trace, which spans"):
            t.timeline(at=at)
    assert t.timeline(at="100%").lanes
