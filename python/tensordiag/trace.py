# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Traces: PyTorch memory snapshots, Kineto/Chrome JSON (plain or gzip) and ``.tdtrace``.

``load(path)`` detects the format from the content and returns a :class:`Trace` whose analyses
are those of ``tdiag trace``; every result carries the figures as attributes and the same
report ``tdiag`` prints. Event columns are NumPy views over the trace's own records (no copy
per event), so ``pandas.DataFrame(trace.kernels)`` works. Loads and analyses release the GIL.
"""

from __future__ import annotations

import json
import numbers
import os
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from . import _arrow, _display, _frames
from ._core import INT32_MAX, INT64_MAX, core, int_arg, native_path, require_numpy
from ._warnings import LoadWarning, report_load_warnings

#: The columns of one event kind: column name -> read-only numpy.ndarray view.
Columns = Dict[str, Any]

EVENT_KINDS = (
    "kernels", "copies", "api_calls", "ranges", "markers", "memory", "assertions", "flows",
    "counters",
)


class Result:
    """An analysis result: its figures as attributes, and ``report`` (a Report) with the
    same ``to_text()``, ``to_json()``, ``to_sarif()``, ``to_junit()``, ``to_github()``.

    ``print(result)`` shows the top lines ``tdiag`` prints, Jupyter an HTML table, and
    ``to_pandas(table)`` a DataFrame of one of its ``tables`` with the JSON report's column names
    (sizes ``*_bytes``, instants and durations ``*_ns`` integers, instants since the trace's
    start)."""

    #: The tables of this kind of result, the first one the default of to_pandas().
    TABLES: Dict[str, _frames.Table] = {}
    #: Figures shown above the tables: (name in the report, name in the result).
    FIELDS: Tuple[Tuple[str, str], ...] = ()

    def __init__(self, data: Dict[str, Any], report, origin: int = 0) -> None:
        self._data = data
        self.report = report
        self._origin = int(origin)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_data"][name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}") from None

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def as_dict(self) -> Dict[str, Any]:
        """The figures as a plain dict."""
        return dict(self._data)

    def to_text(self, color: bool = False) -> str:
        return self.report.to_text(color)

    def to_json(self) -> str:
        return self.report.to_json()

    def to_sarif(self) -> str:
        return self.report.to_sarif()

    def to_junit(self) -> str:
        return self.report.to_junit()

    def to_github(self) -> str:
        return self.report.to_github()

    @property
    def tables(self) -> List[str]:
        """The names of the tables ``to_pandas()`` and ``rows()`` give."""
        return list(self.TABLES)

    def rows(self, table: Optional[str] = None) -> List[Dict[str, Any]]:
        """One table as a list of dicts (the DataFrame's rows, without pandas)."""
        return self._table(table).rows(self._data, self._origin)

    def to_pandas(self, table: Optional[str] = None):
        """One table (default: the first of ``tables``) as a pandas DataFrame."""
        spec = self._table(table)
        return _frames.frame(spec.rows(self._data, self._origin), spec.names,
                             f"{type(self).__name__}.to_pandas()")

    def to_arrow(self, table: Optional[str] = None):
        """One table (as ``to_pandas``) as a pyarrow Table; missing values are nulls."""
        spec = self._table(table)
        return _arrow.table(spec.rows(self._data, self._origin), spec.names,
                            f"{type(self).__name__}.to_arrow()")

    def to_polars(self, table: Optional[str] = None):
        """One table (as ``to_pandas``) as a polars DataFrame, from ``to_arrow``."""
        return _arrow.to_polars(lambda: self.to_arrow(table), f"{type(self).__name__}.to_polars()")

    def _table(self, table: Optional[str]) -> _frames.Table:
        if not self.TABLES:
            raise ValueError(f"{type(self).__name__} has no tables")
        name = table or next(iter(self.TABLES))
        if name not in self.TABLES:
            raise ValueError(f"{type(self).__name__} has no table {name!r} "
                             f"(tables: {', '.join(self.TABLES)})")
        return self.TABLES[name]

    def _fields(self) -> Dict[str, Any]:
        out = {}
        for shown, key in self.FIELDS:
            if key in self._data:
                out[shown] = self._data[key]
        return out

    def __str__(self) -> str:
        return _display.top_lines(self.to_text())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        text = self.to_text().splitlines()
        tables = [(spec.title, spec.rows(self._data, self._origin), spec.names)
                  for spec in self.TABLES.values()]
        return _display.html_block(type(self).__name__, text[0] if text else "", self._fields(),
                                   tables)


_F = _frames.field
_I = _frames.instant


class Summary(Result):
    """``tdiag trace summary``: counts, span, gpu_span, memory, kernels, streams."""

    TABLES = {
        "kernels": _frames.Table("kernels", [
            ("kernel", _F("kernel", "name")), ("count", _F("count")),
            ("total_ns", _F("total_ns")), ("mean_ns", _F("mean_ns")), ("max_ns", _F("max_ns"))]),
        "streams": _frames.Table("streams", [
            ("device", _F("device")), ("stream", _F("stream")), ("kernels", _F("kernels")),
            ("copies", _F("copies")), ("busy_ns", _F("busy_ns")),
            ("busy_fraction", _F("busy_fraction"))]),
        "memory": _frames.Table("memory", [
            ("device", _F("device")), ("memory_events", _F("memory_events", "events")),
            ("peak_allocated_bytes", _F("peak_allocated_bytes", "peak_allocated")),
            ("peak_allocated_time_ns", _I("peak_allocated_time_ns", "peak_allocated_time")),
            ("peak_reserved_bytes", _F("peak_reserved_bytes", "peak_reserved")),
            ("peak_reserved_time_ns", _I("peak_reserved_time_ns", "peak_reserved_time")),
            ("final_allocated_bytes", _F("final_allocated_bytes", "final_allocated")),
            ("final_reserved_bytes", _F("final_reserved_bytes", "final_reserved")),
            ("oom_events", _F("oom_events")),
            ("mismatched_events", _F("mismatched_events"))]),
    }

    def _fields(self) -> Dict[str, Any]:
        out: Dict[str, Any] = dict(self._data.get("counts", {}))
        span = self._data.get("span")
        if span:
            out["span_ns"] = span[1] - span[0]
        return out


class Leaks(Result):
    """``tdiag trace leaks``: live_bytes, live_count, iterations, iteration_source, sites;
    open_not_in_dump(_bytes): allocations the events leave open that a dump does not hold."""

    FIELDS = (("live_bytes", "live_bytes"), ("live_allocations", "live_count"),
              ("iterations", "iterations"), ("iteration_source", "iteration_source"))
    TABLES = {
        "sites": _frames.Table("sites", [
            ("site", _F("site")), ("live_bytes", _F("live_bytes")),
            ("live_allocations", _F("live_allocations", "live_count")),
            ("growing", _F("growing")),
            ("growth_per_iteration_bytes",
             _F("growth_per_iteration_bytes", "growth_per_iteration")),
            ("iterations", _F("iterations")), ("stacks", _F("stacks")),
            ("first_alloc_ns", _I("first_alloc_ns", "first_time")),
            ("last_alloc_ns", _I("last_alloc_ns", "last_time"))]),
    }


def _oom_sites(data: Dict[str, Any]) -> Dict[str, Any]:
    rows = []
    for index, finding in enumerate(data.get("findings", [])):
        for site in finding.get("sites", []):
            rows.append({"finding": index, **site})
    return {"sites": rows}


class Oom(Result):
    """``tdiag trace oom``: findings, one per out-of-memory event, each with its verdict."""

    TABLES = {
        "findings": _frames.Table("findings", [
            ("time_ns", _I("time_ns", "time")), ("device", _F("device")),
            ("verdict", _F("verdict")),
            ("requested_bytes", _F("requested_bytes", "requested")),
            ("segment_bytes", _F("segment_bytes", "segment")),
            ("device_free_bytes", _F("device_free_bytes", "device_free")),
            ("reserved_bytes", _F("reserved_bytes", "reserved")),
            ("allocated_bytes", _F("allocated_bytes", "allocated")),
            ("free_in_reserved_bytes", _F("free_in_reserved_bytes", "free_in_reserved")),
            ("largest_free_block_bytes", _F("largest_free_block_bytes", "largest_free_block")),
            ("fragmentation", _F("fragmentation")),
            ("peak_reserved_bytes", _F("peak_reserved_bytes", "peak_reserved")),
            ("released_before_bytes", _F("released_before_bytes", "released_before")),
            ("live_sites", _F("live_sites", "site_count"))]),
    }

    def rows(self, table: Optional[str] = None) -> List[Dict[str, Any]]:
        if table == "sites":
            return _frames.Table("sites", self._SITES).rows(_oom_sites(self._data), 0)
        return super().rows(table)

    def to_pandas(self, table: Optional[str] = None):
        """``"findings"`` (default) or ``"sites"`` (the live allocation sites of each finding,
        its index in ``finding``) as a pandas DataFrame."""
        if table == "sites":
            return _frames.frame(self.rows("sites"), [n for n, _ in self._SITES],
                                 "Oom.to_pandas('sites')")
        return super().to_pandas(table)

    def to_arrow(self, table: Optional[str] = None):
        """``"findings"`` (default) or ``"sites"`` as a pyarrow Table."""
        if table == "sites":
            return _arrow.table(self.rows("sites"), [n for n, _ in self._SITES],
                                "Oom.to_arrow('sites')")
        return super().to_arrow(table)

    @property
    def tables(self) -> List[str]:
        return ["findings", "sites"]

    _SITES = [("finding", _F("finding")), ("site", _F("site")),
              ("live_bytes", _F("live_bytes", "bytes")),
              ("live_allocations", _F("live_allocations", "count"))]


class Timeline(Result):
    """``tdiag trace timeline``: time, and per memory lane its allocator totals."""

    TABLES = {
        "lanes": _frames.Table("lanes", [
            ("device", _F("device")), ("event_index", _F("event_index")),
            ("event_count", _F("event_count")), ("segments", _F("segments")),
            ("reserved_bytes", _F("reserved_bytes")), ("allocated_bytes", _F("allocated_bytes"))]),
    }

    def _fields(self) -> Dict[str, Any]:
        return {"time_ns": int(self._data.get("time", 0)) - self._origin}


class Diff(Result):
    """``tdiag trace diff``: sites, kernels, live_a/live_b and the peaks of both traces."""

    FIELDS = (("live_bytes_a", "live_a"), ("live_bytes_b", "live_b"),
              ("peak_allocated_bytes_a", "peak_allocated_a"),
              ("peak_allocated_bytes_b", "peak_allocated_b"),
              ("peak_reserved_bytes_a", "peak_reserved_a"),
              ("peak_reserved_bytes_b", "peak_reserved_b"))
    TABLES = {
        "sites": _frames.Table("sites", [
            ("site", _F("site", "key")), ("bytes_a", _F("bytes_a", "a")),
            ("bytes_b", _F("bytes_b", "b")), ("delta_bytes", _F("delta_bytes", "delta")),
            ("count_a", _F("count_a")), ("count_b", _F("count_b"))]),
        "kernels": _frames.Table("kernels", [
            ("kernel", _F("kernel", "key")), ("total_ns_a", _F("total_ns_a", "a")),
            ("total_ns_b", _F("total_ns_b", "b")), ("delta_ns", _F("delta_ns", "delta")),
            ("count_a", _F("count_a")), ("count_b", _F("count_b"))]),
    }


class Trace:
    """A loaded trace. Immutable; the event columns stay valid while any of them is alive."""

    def __init__(self, handle) -> None:
        # Trace(None), or anything but what load() returns, would reach the C++ analyses as a
        # null trace: refused here with a TypeError (the bindings refuse None again).
        if not isinstance(handle, core.Trace):
            raise TypeError(f"Trace({type(handle).__name__}): open a trace with "
                            "tensordiag.trace.load(path)")
        self._handle = handle
        self._tables = _frames.EventTables(core, handle)

    path = property(lambda self: self._handle.path, doc="The file it was loaded from.")
    format = property(lambda self: self._handle.format,
                      doc="'torch-snapshot', 'kineto-json', 'tdtrace', ...")
    warnings = property(lambda self: self._handle.warnings,
                        doc="Diagnostics of what the load skipped or repaired.")
    event_count = property(lambda self: self._handle.event_count, doc="Events of every kind.")
    span = property(lambda self: self._handle.span, doc="(begin, end) ns on the trace's axis.")
    time_origin_ns = property(lambda self: self._handle.time_origin_ns)
    properties = property(lambda self: self._handle.properties,
                          doc="Metadata key/value pairs the source carried.")

    def string(self, string_id: int) -> str:
        """The text of a string id (the ``name_id`` columns)."""
        return self._handle.string(int_arg("string_id", string_id, 0, 2**32 - 1))

    def events(self, kind: str) -> Dict[str, Any]:
        """The columns of one event kind (see EVENT_KINDS) as a dict of read-only NumPy arrays."""
        require_numpy(f"Trace.events({kind!r})")
        return self._handle.columns(kind)

    def to_pandas(self, kind: str = "kernels", resolve: bool = True):
        """One event kind as a pandas DataFrame: the columns of ``events(kind)`` and, with
        ``resolve``, categoricals beside the ids: ``name`` (from ``name_id``; ``category``,
        ``message``, ``user_metadata``, ``site`` likewise), ``lane_name``, ``stack`` (frames,
        innermost first), ``kind_name``/``action_name``/``src_kind_name``/``dst_kind_name``
        (the codes' names), and for kernels of a collective ``process_group``,
        ``process_group_ranks``, ``collective``, ``group_size`` and ``seq``. Instants are on the
        trace's axis (``span``), as in the columns."""
        require_numpy(f"Trace.to_pandas({kind!r})")
        return _frames.event_frame(kind, self._handle.columns(kind), self._tables, resolve)

    def to_arrow(self, kind: str = "kernels", resolve: bool = True):
        """One event kind as a pyarrow Table, the columns of ``to_pandas(kind, resolve)``: the
        NumPy columns as Arrow arrays (their buffers, no copy, where contiguous) and, with
        ``resolve``, ``name``, ``lane_name``, ``stack``, ``kind_name``, ... as dictionary
        arrays over the trace's strings, lanes, stacks and codes."""
        what = f"Trace.to_arrow({kind!r})"
        _arrow.require_pyarrow(what)
        require_numpy(what)
        return _arrow.event_table(kind, self._handle.columns(kind), self._tables, resolve, what)

    def to_polars(self, kind: str = "kernels", resolve: bool = True):
        """One event kind as a polars DataFrame (``to_arrow``'s table; dictionary columns
        become polars Categoricals)."""
        return _arrow.to_polars(lambda: self.to_arrow(kind, resolve), f"Trace.to_polars({kind!r})")

    def kernel_ops(self):
        """The kernel <-> operator link, one row per kernel (the index of ``to_pandas("kernels")``):
        the launch call with the kernel's correlation id (``launch``, its row ``launch_index`` in
        ``to_pandas("api_calls")``) and the innermost ``cpu_op`` on the launching thread whose
        span holds the launch (``op``, ``op_index``, ``op_start_ns``); -1 and None where the
        trace has no such call or operator."""
        pandas = _frames.require_pandas("Trace.kernel_ops()")
        return _frames.kernel_ops(pandas, self.to_pandas("kernels", resolve=False),
                                  self.to_pandas("api_calls"))

    def strings(self) -> List[str]:
        """Every string of the trace, indexed by string id (``name_id``, ...)."""
        return list(self._tables.strings())

    def lanes(self):
        """The lanes as a DataFrame indexed by lane id: kind, group (device or process), id
        (stream or thread), name, label."""
        pandas = _frames.require_pandas("Trace.lanes()")
        df = pandas.DataFrame(self._tables.lanes(), columns=["kind", "group", "id", "name"])
        df["label"] = self._tables.lane_labels()
        df.index.name = "lane"
        return df

    def stacks(self) -> List[List[str]]:
        """The stacks, indexed by stack id: each a list of frames (``function (file:line)``),
        innermost first; stack 0 is empty."""
        frames = [_frames.frame_label(*f) for f in self._tables.frames()]
        return [[frames[i] for i in stack] for stack in self._tables.stacks()]

    def collectives(self):
        """The communication kernels' collectives (Kineto's process group, ranks, collective
        name, group size, ``Seq``) as a DataFrame keyed by the kernel's ``correlation``."""
        pandas = _frames.require_pandas("Trace.collectives()")
        return pandas.DataFrame(self._tables.collectives(), columns=[
            "correlation", "process_group", "process_group_ranks", "collective", "group_size",
            "seq"])

    def plot_memory(self, device: Optional[int] = None, ax=None):
        """The allocator's allocated and reserved bytes over time (matplotlib, imported here);
        returns the Axes."""
        from .plot import memory_timeline

        return memory_timeline(self, device=device, ax=ax)

    kernels = property(lambda self: self.events("kernels"), doc="Kernel columns (start_ns, ...).")
    copies = property(lambda self: self.events("copies"), doc="Memcpy/memset columns.")
    api_calls = property(lambda self: self.events("api_calls"), doc="Host API call columns.")
    ranges = property(lambda self: self.events("ranges"), doc="Annotation range columns.")
    markers = property(lambda self: self.events("markers"), doc="Instant marker columns.")
    memory = property(lambda self: self.events("memory"), doc="Allocator event columns.")
    assertions = property(lambda self: self.events("assertions"), doc="Device assertion columns.")
    flows = property(lambda self: self.events("flows"), doc="Launch flow columns.")
    counters = property(lambda self: self.events("counters"), doc="Counter sample columns.")

    def summary(self, top: int = 10) -> Summary:
        """Event counts, time span, peak memory per device, the ``top`` kernels, streams."""
        return Summary(*core.summary(self._handle, int_arg("top", top, 0, INT64_MAX)),
                       origin=self.span[0])

    def leaks(self, top: int = 10) -> Leaks:
        """Allocations alive at the end by allocation site, growing sites first."""
        return Leaks(*core.leaks(self._handle, int_arg("top", top, 0, INT64_MAX)),
                     origin=self.span[0])

    def oom(self) -> Oom:
        """Each out-of-memory event explained: fragmentation, a process limit or a full device."""
        findings, report = core.oom(self._handle)
        return Oom({"findings": findings}, report, origin=self.span[0])

    def timeline(self, at: Union[str, int, None] = None, event: Optional[int] = None,
                 segments: int = 20) -> Timeline:
        """The allocator state at ``at`` (a duration since the start such as ``"1.5s"``, or ns),
        or after the first ``event`` memory events: ``tdiag trace timeline --at/--event``. Raises
        TypeError for an ``at`` that is neither (a float: write "1.5s") and ValueError for one
        out of range."""
        if at is not None and not isinstance(at, str):
            if isinstance(at, bool) or not isinstance(at, numbers.Integral):
                raise TypeError(f"at={at!r}: give a time since the start such as '1.5s' or "
                                "'40%', or an integer of nanoseconds")
            # Only what fits the binding's int64: the library refuses a time outside the trace.
            at = int_arg("at", at, -INT64_MAX - 1, INT64_MAX)
        if event is not None:
            event = int_arg("event", event, 0, INT64_MAX)
        return Timeline(*core.timeline(self._handle, at, event,
                                       int_arg("segments", segments, 0, INT64_MAX)),
                        origin=self.span[0])

    def diff(self, other: "Trace", top: int = 10) -> Diff:
        """What grew and shrank from this trace to ``other``, by site and by kernel."""
        if not isinstance(other, Trace):
            raise TypeError(f"diff({type(other).__name__}): expected a Trace "
                            "(tensordiag.trace.load(path))")
        return Diff(*core.diff(self._handle, other._handle, int_arg("top", top, 0, INT64_MAX)),
                    origin=self.span[0])

    def __repr__(self) -> str:
        return f"<Trace {self.format} {self.path!r}: {self.event_count} events>"

    def _repr_html_(self) -> str:
        counts = {kind: len(next(iter(self._handle.columns(kind).values()), ()))
                  for kind in EVENT_KINDS} if _has_numpy() else {}
        fields: Dict[str, Any] = {"format": self.format, "events": self.event_count,
                                  "span_ns": self.span[1] - self.span[0],
                                  "warnings": len(self.warnings)}
        fields.update({k: v for k, v in counts.items() if v})
        return _display.html_block("Trace", self.path, fields, [])


class Analysis(dict):
    """``tdiag trace analyze --json``: the whole-job analyses as the JSON's structure (schema
    ``tensordiag.analysis/v1``, docs/analysis.md): ``analysis["ranks"][0]["idle_time_us"]``,
    ``analysis["stragglers"]``, ... ``warnings`` holds every trace's import diagnostics.

    ``to_pandas(table)`` gives one of its ``tables`` (``"ranks"``, ``"steps"``,
    ``"stragglers.per_rank"``, ``"ranks.kernels"``: a per-rank list with a ``rank`` column, ...)
    as a DataFrame whose ``*_us`` figures are ``*_ns`` integers, the package's one unit."""

    def __init__(self, data: Dict[str, Any], warnings: List[Any]) -> None:
        super().__init__(data)
        self.warnings = warnings

    @property
    def tables(self) -> List[str]:
        """The tables ``to_pandas()`` gives: every list of objects, per-rank ones as ranks.X."""
        paths = _frames.list_paths(self)
        ranks = self.get("ranks") or []
        if ranks:
            paths += [f"ranks.{p}" for p in _frames.list_paths(ranks[0])]
        return paths

    def rows(self, table: str = "ranks") -> List[Dict[str, Any]]:
        """One table as flat dicts (nested objects as ``parent_child`` columns, ``*_ns``)."""
        if table.startswith("ranks.") and table not in ("ranks",):
            inner = table[len("ranks."):]
            rows = []
            for rank in self.get("ranks") or []:
                for row in _frames.resolve_path(rank, inner) or []:
                    rows.append({"rank": rank.get("rank"), **row})
            return _frames.normalize(rows)
        value = _frames.resolve_path(self, table)
        if not isinstance(value, list):
            raise ValueError(f"{table!r} is not a table of the analysis (tables: "
                             f"{', '.join(self.tables)})")
        # The rank table keeps its figures; its per-rank lists are tables of their own.
        return _frames.normalize(value, keep_lists=table != "ranks")

    def to_pandas(self, table: str = "ranks"):
        """One table as a pandas DataFrame (see ``tables``)."""
        pandas = _frames.require_pandas("Analysis.to_pandas()")
        return pandas.DataFrame(self.rows(table))

    def to_arrow(self, table: str = "ranks"):
        """One table (see ``tables``) as a pyarrow Table."""
        return _arrow.table_of_rows(self.rows(table), "Analysis.to_arrow()")

    def to_polars(self, table: str = "ranks"):
        """One table (see ``tables``) as a polars DataFrame, from ``to_arrow``."""
        return _arrow.to_polars(lambda: self.to_arrow(table), "Analysis.to_polars()")

    def _lines(self) -> List[str]:
        ranks = self.get("ranks") or []
        lines = [f"whole-job analysis of {len(ranks)} rank(s) ({self.get('schema', '')})"]
        for rank in ranks:
            def ns(key: str) -> str:
                value = rank.get(key)
                return "-" if value is None else _display.format_ns(value * 1000)

            lines.append(f"  rank {rank.get('rank')}: kernel time {ns('kernel_time_us')}, "
                         f"compute {ns('compute_time_us')}, non-compute "
                         f"{ns('non_compute_time_us')}, idle {ns('idle_time_us')}, "
                         f"{rank.get('num_launches', 0)} launches")
        per_rank = (self.get("stragglers") or {}).get("per_rank") or []
        if per_rank:
            waits = ", ".join(f"rank {w.get('rank')} waited "
                              f"{_display.format_ns((w.get('wait_us') or 0) * 1000)}"
                              for w in per_rank)
            lines.append(f"  stragglers: {waits}")
        if self.warnings:
            lines.append(f"  {len(self.warnings)} load warning(s) (.warnings)")
        return lines

    def __str__(self) -> str:
        return _display.top_lines("\n".join(self._lines()))

    def __repr__(self) -> str:
        return str(self)

    def plot_breakdown(self, ax=None):
        """Compute, non-compute and idle time per rank (tensordiag.plot.rank_breakdown)."""
        from .plot import rank_breakdown

        return rank_breakdown(self, ax=ax)

    def plot_stragglers(self, ax=None):
        """Time each rank waited at collectives (tensordiag.plot.stragglers)."""
        from .plot import stragglers

        return stragglers(self, ax=ax)

    def _repr_html_(self) -> str:
        tables = []
        for name in ("ranks", "stragglers.per_rank", "steps"):
            try:
                rows = self.rows(name)
            except (KeyError, ValueError):
                continue
            columns = list(dict.fromkeys(k for row in rows for k in row
                                         if not isinstance(row[k], list)))
            tables.append((name, rows, columns))
        return _display.html_block("Analysis", self._lines()[0], {}, tables)


def _has_numpy() -> bool:
    try:
        import numpy  # noqa: F401
    except ImportError:
        return False
    return True


PathArg = Union[str, bytes, "os.PathLike[str]"]


def analyze(paths: Union[PathArg, Iterable[PathArg]], hta_compat: bool = False,
            rank_from: str = "auto", align: str = "auto",
            critical_path_annotation: Optional[str] = None,
            critical_path_instance: Optional[int] = None,
            critical_path_data_load: Iterable[str] = (), device: Optional[int] = None,
            window: Optional[str] = None, job_only: bool = False) -> Analysis:
    """The whole-job analyses of one trace per rank (files, folders or globs), computed by the
    library exactly as ``tdiag trace analyze PATH... --json`` does: HTA's figures per rank
    (``hta_compat=True``: HTA's ns rounding and last-step filtering), stragglers, steps, rank
    deviations. ``rank_from``: 'auto', 'distributed', 'file-name', 'position'; ``align``:
    'auto' (the collectives where the ranks share matched ones, else Kineto's base time),
    'base-time' or 'collectives' (``analysis["clocks"]`` says which was used, with the
    offsets' residuals); every collective's last rank comes with its cause
    (``analysis["stragglers"]["collectives"][i]["cause"]``); ``job_only=True`` skips the
    per-rank HTA figures (``--job-only``); the critical path's window is the
    ``critical_path_instance``-th range whose name contains ``critical_path_annotation``
    ("" = the whole trace; None = HTA's rule); host rows whose name contains one of
    ``critical_path_data_load`` (HTA's data_load_events) are its ``data_loading``. ``device`` and
    ``window`` open part of every rank, as ``--device`` and ``--window`` do (see load()). Raises
    InputError for unreadable input and ValueError for a bad option. ``warnings`` also holds
    the clock warning (TDIAG-TR-263). Releases the GIL."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [native_path(p) for p in paths]
    if critical_path_instance is not None:
        critical_path_instance = int_arg("critical_path_instance", critical_path_instance, 0,
                                         INT32_MAX)
    if device is not None:
        device = int_arg("device", device, 0, INT32_MAX)
    text, warnings = core.analyze(paths, bool(hta_compat), rank_from, align,
                                  critical_path_annotation, critical_path_instance,
                                  [str(p) for p in critical_path_data_load], device, window,
                                  bool(job_only))
    report_load_warnings(", ".join(os.fsdecode(p) for p in paths), warnings)
    return Analysis(json.loads(text), warnings)


def load(path: PathArg, device: Optional[int] = None,
         window: Optional[str] = None) -> Trace:
    """Opens any trace tensordiag reads (format from the content), or part of it, as
    ``tdiag trace ... --device N --window A:B`` does: ``device`` keeps GPU ``device``'s streams
    and allocator and every host thread; ``window`` ("2s:2.5s", "40%:60%", ":100ms") keeps the
    events of that window, the allocator replayed exactly to both ends. Raises InputError for
    unreadable input or a device the trace lacks, ValueError for a malformed window or device.
    ``path`` may be str, bytes or os.PathLike, and name a file whose name is not UTF-8."""
    native = native_path(path)
    if device is not None:
        device = int_arg("device", device, 0, INT32_MAX)
    trace = Trace(core.load(native, device, window))
    report_load_warnings(os.fsdecode(native), trace.warnings)
    return trace


__all__ = ["EVENT_KINDS", "LoadWarning", "Trace", "Result", "Summary", "Leaks", "Oom", "Timeline", "Diff",
           "Analysis", "analyze", "load"]
