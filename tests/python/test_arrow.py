# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Results and event tables as pyarrow Tables and polars DataFrames (to_arrow(), to_polars()):
the columns and values of to_pandas(), categoricals as dictionary arrays, and a clear
ImportError naming the pip package where pyarrow or polars is missing. pyarrow and polars are
optional: without them their tests skip, saying so."""

import sys
import warnings

import pytest

from tensordiag import _arrow, fr, trace
from tensordiag.trace import LoadWarning

SMALL = "traces/train_trace_small.json.gz"
SNAPSHOT = "traces/train_snapshot.pickle"


def _have(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


needs_pyarrow = pytest.mark.skipif(not _have("pyarrow"),
                                   reason="pyarrow is not installed (pip install pyarrow)")
needs_polars = pytest.mark.skipif(not (_have("pyarrow") and _have("polars")),
                                  reason="pyarrow and polars are not both installed "
                                         "(pip install pyarrow polars)")


@pytest.fixture(scope="module")
def small(shared):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LoadWarning)
        return trace.load(shared / SMALL)


@pytest.fixture(scope="module")
def snapshot(shared):
    return trace.load(shared / SNAPSHOT)


@pytest.fixture
def no_arrow(monkeypatch):
    """pyarrow and polars made unimportable, as on a machine without them."""
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "polars", None)


def test_missing_pyarrow_or_polars_is_a_clear_import_error(no_arrow, snapshot):
    leaks = snapshot.leaks()
    with pytest.raises(ImportError, match=r"Leaks.to_arrow\(\) needs pyarrow.*pip install pyarrow"):
        leaks.to_arrow()
    with pytest.raises(ImportError, match=r"Leaks.to_polars\(\) needs polars.*pip install polars"):
        leaks.to_polars()
    with pytest.raises(ImportError, match=r"Trace.to_arrow\('kernels'\) needs pyarrow"):
        snapshot.to_arrow("kernels")
    with pytest.raises(ImportError, match=r"Trace.to_polars\('memory'\) needs polars"):
        snapshot.to_polars("memory")
    verdict = fr.Verdict({"culprits": [{"rank": 3, "cause": "missing"}]}, "", None)
    with pytest.raises(ImportError, match=r"Verdict.to_arrow\(\) needs pyarrow"):
        verdict.to_arrow()
    with pytest.raises(ImportError, match=r"pip install polars"):
        trace.Analysis({"ranks": []}, []).to_polars()


@needs_pyarrow
def test_result_tables_as_arrow_match_pandas(snapshot):
    import pyarrow as pa
    leaks = snapshot.leaks()
    table = leaks.to_arrow()
    assert isinstance(table, pa.Table)
    assert table.column_names == ["site", "live_bytes", "live_allocations", "growing",
                                  "growth_per_iteration_bytes", "iterations", "stacks",
                                  "first_alloc_ns", "last_alloc_ns"]
    rows = leaks.rows()
    assert table.num_rows == len(rows)
    assert table.column("site").to_pylist() == [r["site"] for r in rows]
    assert table.column("live_bytes").to_pylist() == [r["live_bytes"] for r in rows]
    # An unknown instant is a null, and the column stays int64.
    assert table.schema.field("first_alloc_ns").type == pa.int64()
    assert table.column("first_alloc_ns").to_pylist() == [r["first_alloc_ns"] for r in rows]
    memory = snapshot.summary().to_arrow("memory")
    assert memory.column_names[:3] == ["device", "memory_events", "peak_allocated_bytes"]
    with pytest.raises(ValueError, match="tables: sites"):
        leaks.to_arrow("nope")


@needs_pyarrow
def test_event_tables_as_arrow_are_dictionary_encoded(small, snapshot):
    import numpy
    import pyarrow as pa
    kernels = small.to_arrow("kernels")
    columns = small.events("kernels")
    for name, column in columns.items():
        assert numpy.array_equal(kernels.column(name).to_numpy(), column), name
    names = kernels.column("name").combine_chunks()
    assert pa.types.is_dictionary(names.type)
    assert names.to_pylist() == [small.string(i) for i in columns["name_id"]]
    assert len(names.dictionary) == len(set(names.dictionary.to_pylist()))
    lanes = kernels.column("lane_name").to_pylist()
    assert all("stream" in lane for lane in lanes)
    memory = snapshot.to_arrow("memory")
    assert "alloc" in set(memory.column("action_name").to_pylist())
    assert pa.types.is_dictionary(memory.schema.field("stack").type)
    raw = small.to_arrow("kernels", resolve=False)
    assert "name" not in raw.column_names and raw.num_rows == kernels.num_rows
    # The same columns as to_pandas(), in the same order, where pandas is installed.
    pd = pytest.importorskip("pandas")
    frame = small.to_pandas("kernels")
    assert kernels.column_names == list(frame.columns)
    assert kernels.column("name").to_pylist() == list(frame["name"].astype(str))
    assert isinstance(frame["name"].dtype, pd.CategoricalDtype)


@needs_pyarrow
def test_dictionary_codes_out_of_range_are_null():
    import pyarrow as pa
    array = _arrow.dictionary(pa, [0, 2, 5, -1, 1], ["a", "b", "a"])
    assert array.to_pylist() == ["a", "a", None, None, "b"]
    assert array.dictionary.to_pylist() == ["a", "b"]


@needs_pyarrow
def test_verdict_and_analysis_tables_as_arrow(shared):
    verdict = fr.Verdict({"culprits": [{"rank": 3, "cause": "missing", "pg": {"name": "0"}},
                                       {"rank": 5, "cause": "stuck", "seq": 12}]}, "", None)
    table = verdict.to_arrow()
    assert table.column_names == ["rank", "cause", "pg_name", "seq"]
    assert table.column("rank").to_pylist() == [3, 5]
    assert table.column("seq").to_pylist() == [None, 12]
    job = trace.analyze(shared / "traces/hta/two_ranks", hta_compat=True)
    ranks = job.to_arrow("ranks")
    assert ranks.column("idle_time_ns").to_pylist()[0] == round(
        job["ranks"][0]["idle_time_us"] * 1000)
    assert job.to_arrow("stragglers.per_rank").column("rank").to_pylist() == [0, 1]


@needs_polars
def test_polars_frames_from_arrow(small, snapshot):
    import polars as pl
    leaks = snapshot.leaks()
    frame = leaks.to_polars()
    assert isinstance(frame, pl.DataFrame)
    assert frame.columns == leaks.to_arrow().column_names
    assert frame["live_bytes"].to_list() == [r["live_bytes"] for r in leaks.rows()]
    kernels = small.to_polars("kernels")
    assert kernels.schema["name"] == pl.Categorical
    assert kernels["name"].cast(pl.Utf8).to_list() == [
        small.string(i) for i in small.events("kernels")["name_id"]]
    assert kernels.height == len(small.events("kernels")["name_id"])
    verdict = fr.Verdict({"culprits": [{"rank": 3, "cause": "missing"}]}, "", None)
    assert verdict.to_polars()["cause"].to_list() == ["missing"]
