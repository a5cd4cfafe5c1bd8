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
import os
from typing import Any, Dict, Iterable, List, Optional, Union

from ._core import core, require_numpy

EVENT_KINDS = (
    "kernels", "copies", "api_calls", "ranges", "markers", "memory", "assertions", "flows",
    "counters",
)


class Result:
    """An analysis result: its figures as attributes, and ``report`` (a Report) with the
    same ``to_text()``, ``to_json()``, ``to_sarif()``, ``to_junit()``, ``to_github()``."""

    def __init__(self, data: Dict[str, Any], report) -> None:
        self._data = data
        self.report = report

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

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {', '.join(sorted(self._data))}>"


class Summary(Result):
    """``tdiag trace summary``: counts, span, gpu_span, memory, kernels, streams."""


class Leaks(Result):
    """``tdiag trace leaks``: live_bytes, live_count, iterations, iteration_source, sites."""


class Oom(Result):
    """``tdiag trace oom``: findings, one per out-of-memory event, each with its verdict."""


class Timeline(Result):
    """``tdiag trace timeline``: time, and per memory lane its allocator totals."""


class Diff(Result):
    """``tdiag trace diff``: sites, kernels, live_a/live_b and the peaks of both traces."""


class Trace:
    """A loaded trace. Immutable; the event columns stay valid while any of them is alive."""

    def __init__(self, handle) -> None:
        # Trace(None), or anything but what load() returns, would reach the C++ analyses as a
        # null trace: refused here with a TypeError (the bindings refuse None again).
        if not isinstance(handle, core.Trace):
            raise TypeError(f"Trace({type(handle).__name__}): open a trace with "
                            "tensordiag.trace.load(path)")
        self._handle = handle

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
        return self._handle.string(int(string_id))

    def events(self, kind: str) -> Dict[str, Any]:
        """The columns of one event kind (see EVENT_KINDS) as a dict of read-only NumPy arrays."""
        require_numpy(f"Trace.events({kind!r})")
        return self._handle.columns(kind)

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
        return Summary(*core.summary(self._handle, top))

    def leaks(self, top: int = 10) -> Leaks:
        """Allocations alive at the end by allocation site, growing sites first."""
        return Leaks(*core.leaks(self._handle, top))

    def oom(self) -> Oom:
        """Each out-of-memory event explained: fragmentation, a process limit or a full device."""
        findings, report = core.oom(self._handle)
        return Oom({"findings": findings}, report)

    def timeline(self, at: Union[str, int, None] = None, event: Optional[int] = None,
                 segments: int = 20) -> Timeline:
        """The allocator state at ``at`` (a duration since the start such as ``"1.5s"``, or ns),
        or after the first ``event`` memory events: ``tdiag trace timeline --at/--event``."""
        return Timeline(*core.timeline(self._handle, at, event, segments))

    def diff(self, other: "Trace", top: int = 10) -> Diff:
        """What grew and shrank from this trace to ``other``, by site and by kernel."""
        return Diff(*core.diff(self._handle, other._handle, top))

    def __repr__(self) -> str:
        return f"<Trace {self.format} {self.path!r}: {self.event_count} events>"


class Analysis(dict):
    """``tdiag trace analyze --json``: the whole-job analyses as the JSON's structure (schema
    ``tensordiag.analysis/v1``, docs/analysis.md): ``analysis["ranks"][0]["idle_time_us"]``,
    ``analysis["stragglers"]``, ... ``warnings`` holds every trace's import diagnostics."""

    def __init__(self, data: Dict[str, Any], warnings: List[Any]) -> None:
        super().__init__(data)
        self.warnings = warnings


PathArg = Union[str, "os.PathLike[str]"]


def analyze(paths: Union[PathArg, Iterable[PathArg]], hta_compat: bool = False,
            rank_from: str = "auto", align: str = "base-time",
            critical_path_annotation: Optional[str] = None,
            critical_path_instance: Optional[int] = None,
            critical_path_data_load: Iterable[str] = (), device: Optional[int] = None,
            window: Optional[str] = None) -> Analysis:
    """The whole-job analyses of one trace per rank (files, folders or globs), computed by the
    library exactly as ``tdiag trace analyze PATH... --json`` does: HTA's figures per rank
    (``hta_compat=True``: HTA's ns rounding and last-step filtering), stragglers, steps, rank
    deviations. ``rank_from``: 'auto', 'distributed', 'file-name', 'position'; ``align``:
    'base-time' or 'collectives'; the critical path's window is the
    ``critical_path_instance``-th range whose name contains ``critical_path_annotation``
    ("" = the whole trace; None = HTA's rule); host rows whose name contains one of
    ``critical_path_data_load`` (HTA's data_load_events) are its ``data_loading``. ``device`` and
    ``window`` open part of every rank, as ``--device`` and ``--window`` do (see load()). Raises
    InputError for unreadable input and ValueError for a bad option. Releases the GIL."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    text, warnings = core.analyze([os.fspath(p) for p in paths], bool(hta_compat), rank_from,
                                  align, critical_path_annotation, critical_path_instance,
                                  [str(p) for p in critical_path_data_load], device, window)
    return Analysis(json.loads(text), warnings)


def load(path: Union[str, "os.PathLike[str]"], device: Optional[int] = None,
         window: Optional[str] = None) -> Trace:
    """Opens any trace tensordiag reads (format from the content), or part of it, as
    ``tdiag trace ... --device N --window A:B`` does: ``device`` keeps GPU ``device``'s streams
    and allocator and every host thread; ``window`` ("2s:2.5s", "40%:60%", ":100ms") keeps the
    events of that window, the allocator replayed exactly to both ends. Raises InputError for
    unreadable input or a device the trace lacks, ValueError for a malformed window."""
    return Trace(core.load(os.fspath(path), device, window))


__all__ = ["EVENT_KINDS", "Trace", "Result", "Summary", "Leaks", "Oom", "Timeline", "Diff",
           "Analysis", "analyze", "load"]
