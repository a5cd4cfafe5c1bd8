# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Tables of the results for pyarrow and polars (``to_arrow()``, ``to_polars()``).

The same tables, column names and units as ``to_pandas()`` (``_frames``), built without pandas:
event columns go from their NumPy arrays straight into Arrow arrays (no copy for a contiguous
numeric column; a strided view is copied once), string ids, lanes, stacks and codes become
dictionary arrays over the trace's tables (Arrow's categoricals), and polars takes the Arrow
table through the Arrow C data interface (``polars.from_arrow``). pyarrow and polars are
imported on first use; neither is a dependency of the package.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Sequence

from . import _frames


def require_pyarrow(what: str):
    return _frames.require("pyarrow", what, "pip install pyarrow, or 'tensordiag[arrow]'")


def require_polars(what: str):
    return _frames.require("polars", what, "pip install polars, or 'tensordiag[polars]'")


def _column(pa: Any, values: List[Any]) -> Any:
    """An Arrow array of Python values: integers with missing values stay int64 with nulls;
    a column Arrow cannot type as one (mixed kinds) becomes strings."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], what: str) -> Any:
    """A pyarrow Table of ``rows`` with ``columns`` (missing values: null)."""
    pa = require_pyarrow(what)
    return pa.table({name: _column(pa, [row.get(name) for row in rows]) for name in columns})


def table_of_rows(rows: Sequence[Mapping[str, Any]], what: str) -> Any:
    """A pyarrow Table of flat dicts, its columns in the order they first appear."""
    names: Dict[str, None] = {}
    for row in rows:
        for name in row:
            names.setdefault(name, None)
    return table(rows, list(names), what)


def to_polars(arrow_table: Callable[[], Any], what: str) -> Any:
    """A polars DataFrame of the pyarrow Table ``arrow_table()`` builds (the Arrow C data
    interface: no copy); polars is asked for first, before any table is built."""
    pl = require_polars(what)
    return pl.from_arrow(arrow_table())


def dictionary(pa: Any, codes: Any, categories: Sequence[str]) -> Any:
    """A dictionary array (int32 indices) of ``categories[codes]``; codes out of range are
    null. Repeated category texts share one dictionary entry, as the pandas categoricals."""
    import numpy

    codes = numpy.asarray(codes).astype(numpy.int64)
    valid = (codes >= 0) & (codes < len(categories))
    unique: Dict[str, int] = {}
    remap = numpy.empty(max(len(categories), 1), dtype=numpy.int64)
    for i, text in enumerate(categories):
        remap[i] = unique.setdefault(text, len(unique))
    indices = numpy.where(valid, remap[numpy.where(valid, codes, 0)], 0).astype(numpy.int32)
    return pa.DictionaryArray.from_arrays(pa.array(indices, mask=~valid),
                                          pa.array(list(unique), pa.string()))


def _numpy_column(pa: Any, column: Any) -> Any:
    """An event column (a read-only NumPy array, maybe a strided view) as an Arrow array: its
    buffer when contiguous, else one copy."""
    return pa.array(column)


def _collective_columns(pa: Any, correlations: Any, collectives: List[Any]) -> Dict[str, Any]:
    """The kernels' collective fields, looked up by correlation (the first row of each), as
    the pandas merge gives them: null where the kernel ran no collective. ``collectives`` is
    not empty."""
    import numpy

    names = ["process_group", "process_group_ranks", "collective", "group_size", "seq"]
    first: Dict[int, int] = {}
    for i, row in enumerate(collectives):
        first.setdefault(int(row[0]), i)
    keys = numpy.array(sorted(first), dtype=numpy.int64)
    row_of_key = numpy.array([first[int(k)] for k in keys], dtype=numpy.int64)
    corr = numpy.asarray(correlations).astype(numpy.int64)
    pos = numpy.clip(numpy.searchsorted(keys, corr), 0, len(keys) - 1)
    found = keys[pos] == corr
    take = pa.array(row_of_key[pos], mask=~found)
    out = {}
    for j, name in enumerate(names):
        out[name] = _column(pa, [row[j + 1] for row in collectives]).take(take)
    return out


def event_table(kind: str, columns: Mapping[str, Any], tables: "_frames.EventTables",
                resolve: bool, what: str) -> Any:
    """The pyarrow Table of one event kind: the NumPy columns as Arrow arrays and, with
    ``resolve``, the dictionary-encoded columns ``to_pandas`` adds as categoricals (``name``,
    ``lane_name``, ``stack``, ``kind_name``, ...) and the kernels' collective fields."""
    pa = require_pyarrow(what)
    arrays: Dict[str, Any] = {name: _numpy_column(pa, column) for name, column in columns.items()}
    if resolve:
        for column, name in _frames.STRING_COLUMNS.items():
            if column in columns:
                arrays[name] = dictionary(pa, columns[column], tables.strings())
        for column in ("lane", "target_lane"):
            if column in columns:
                arrays[f"{column}_name"] = dictionary(pa, columns[column], tables.lane_labels())
        if "stack_id" in columns:
            arrays["stack"] = dictionary(pa, columns["stack_id"], tables.stack_labels())
        for (store, column), names in _frames.CODES.items():
            if store == kind and column in columns:
                arrays[f"{column}_name"] = dictionary(pa, columns[column], names)
        if kind == "kernels" and "correlation" in columns:
            collectives = tables.collectives()
            if collectives:
                arrays.update(_collective_columns(pa, columns["correlation"], collectives))
    return pa.table(arrays)
