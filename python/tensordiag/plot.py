# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Plots for notebooks (matplotlib, imported only when a plot is drawn: ``pip install
'tensordiag[plot]'``). Each function draws on ``ax`` (a new figure's when None) and returns it.

- :func:`memory_timeline`: a trace's allocated and reserved bytes over time, per device;
- :func:`rank_breakdown`: HTA's temporal breakdown per rank (compute, non-compute, idle);
- :func:`stragglers`: how long each rank waited for the others at collectives.
"""

from __future__ import annotations

from typing import Any, Optional

from ._core import require_numpy


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("tensordiag.plot needs matplotlib (pip install 'tensordiag[plot]'): "
                          f"{e}") from e
    return plt


def _axes(ax):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=(10, 4))
    return ax


def memory_curves(columns: Any, rows: Any):
    """(allocated, reserved) bytes after each of the memory events selected by ``rows``: the
    allocator's own totals where the source gave them (CUPTI, Kineto), else replayed from the
    events (blocks: +alloc, -free_requested, or -free_completed where the trace has no
    free_requested; segments: +segment_alloc/map, -segment_free/unmap), from 0 at the first."""
    numpy = require_numpy("memory_curves")
    action = columns["action"][rows].astype(numpy.int64)
    size = columns["size"][rows].astype(numpy.int64)
    given_allocated = columns["total_allocated"][rows].astype(numpy.int64)
    given_reserved = columns["total_reserved"][rows].astype(numpy.int64)
    # memory_action codes (tensordiag/trace/events.hpp): alloc 0, free_requested 1,
    # free_completed 2, segment_alloc 3, segment_free 4, segment_map 5, segment_unmap 6.
    free = 1 if (action == 1).any() else 2
    block = numpy.where(action == 0, size, numpy.where(action == free, -size, 0))
    segment = numpy.where((action == 3) | (action == 5), size,
                          numpy.where((action == 4) | (action == 6), -size, 0))
    allocated = given_allocated if (given_allocated >= 0).all() else numpy.cumsum(block)
    reserved = given_reserved if (given_reserved >= 0).all() else numpy.cumsum(segment)
    return allocated, reserved


def memory_timeline(trace: Any, device: Optional[int] = None, ax=None):
    """Allocated and reserved bytes (see :func:`memory_curves`) against seconds since the
    trace's start, one pair of step lines per device (or only ``device``)."""
    numpy = require_numpy("memory_timeline")
    columns = trace.memory
    ax = _axes(ax)
    devices = numpy.unique(columns["device"]) if device is None else [device]
    start = trace.span[0]
    for d in devices:
        rows = columns["device"] == d
        t = (columns["time_ns"][rows] - start) / 1e9
        allocated, reserved = memory_curves(columns, rows)
        ax.step(t, allocated / 2**30, where="post", label=f"device {d} allocated")
        ax.step(t, reserved / 2**30, where="post", label=f"device {d} reserved")
    ax.set_xlabel("time since start (s)")
    ax.set_ylabel("GiB")
    ax.set_title(f"memory: {trace.path}")
    ax.legend()
    return ax


def rank_breakdown(analysis: Any, ax=None):
    """Per rank, stacked bars of compute, non-compute and idle time (``trace.analyze()``)."""
    ax = _axes(ax)
    ranks = analysis.get("ranks") or []
    labels = [str(r.get("rank")) for r in ranks]
    bottom = [0.0] * len(ranks)
    for key, label in (("compute_time_us", "compute"), ("non_compute_time_us", "non-compute"),
                       ("idle_time_us", "idle")):
        values = [(r.get(key) or 0.0) / 1e3 for r in ranks]
        ax.bar(labels, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xlabel("rank")
    ax.set_ylabel("ms")
    ax.set_title("temporal breakdown per rank")
    ax.legend()
    return ax


def stragglers(analysis: Any, ax=None):
    """Per rank, the time it waited for later ranks at collectives, and how often it was last
    (``trace.analyze()``'s ``stragglers.per_rank``)."""
    ax = _axes(ax)
    per_rank = (analysis.get("stragglers") or {}).get("per_rank") or []
    labels = [str(w.get("rank")) for w in per_rank]
    bars = ax.bar(labels, [(w.get("wait_us") or 0.0) / 1e3 for w in per_rank])
    for bar, w in zip(bars, per_rank):
        ax.annotate(f"last {w.get('times_last', 0)}x", (bar.get_x() + bar.get_width() / 2,
                                                        bar.get_height()),
                    ha="center", va="bottom")
    ax.set_xlabel("rank")
    ax.set_ylabel("waited (ms)")
    ax.set_title("stragglers: time waited at collectives")
    return ax


__all__ = ["memory_curves", "memory_timeline", "rank_breakdown", "stragglers"]
