# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Tables of the analysis results, for pandas and for display.

One unit convention for every table the package builds: sizes in bytes (``*_bytes``), instants
and durations in integer nanoseconds (``*_ns``), instants counted from the trace's start (its
``span[0]``), as the JSON reports write them. Column names are the JSON report's field names;
the whole-job analysis's ``*_us`` figures (floats in its JSON) become ``*_ns`` integers.
"""

from __future__ import annotations

import importlib

from typing import Any, Callable, Dict, List, Mapping, Sequence, Tuple

#: A column: its name, and how to read it from one row (a dict of the result) given the origin.
Column = Tuple[str, Callable[[Mapping[str, Any], int], Any]]


def field(*names: str) -> Callable[[Mapping[str, Any], int], Any]:
    """The first of ``names`` the row has (the binding's name, then the report's)."""

    def get(row: Mapping[str, Any], origin: int) -> Any:
        for name in names:
            if name in row:
                return row[name]
        return None

    return get


#: What the analyses write for an instant they do not know (e.g. an allocation older than the
#: recorded history): missing in the tables.
UNKNOWN_TIME = -(2**63)


def instant(*names: str) -> Callable[[Mapping[str, Any], int], Any]:
    """An instant on the trace's axis, as ns since the trace's start (None when unknown)."""
    read = field(*names)

    def get(row: Mapping[str, Any], origin: int) -> Any:
        value = read(row, origin)
        return None if value is None or value == UNKNOWN_TIME else int(value) - origin

    return get


class Table:
    """A table of a result: the list under ``source`` in its figures, with ``columns``."""

    def __init__(self, source: str, columns: Sequence[Column], title: str = "") -> None:
        self.source = source
        self.columns = list(columns)
        self.title = title or source

    def rows(self, data: Mapping[str, Any], origin: int) -> List[Dict[str, Any]]:
        return [{name: get(row, origin) for name, get in self.columns}
                for row in data.get(self.source, [])]

    @property
    def names(self) -> List[str]:
        return [name for name, _ in self.columns]


def require(module: str, what: str, install: str):
    """An optional module, or an ImportError naming it, what needed it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"{what} needs {module}, which is not installed ({install}): {e}") from e


def require_pandas(what: str):
    return require("pandas", what, "pip install 'tensordiag[pandas]'")


def frame(rows: List[Dict[str, Any]], columns: Sequence[str], what: str):
    """A DataFrame of ``rows``; integer columns with missing values are pandas' nullable
    ``Int64`` (not floats)."""
    pandas = require_pandas(what)
    df = pandas.DataFrame(rows, columns=list(columns))
    for name in df.columns:
        values = [row.get(name) for row in rows]
        known = [v for v in values if v is not None]
        if len(known) < len(values) and known and all(
                isinstance(v, int) and not isinstance(v, bool) for v in known):
            df[name] = pandas.array(values, dtype="Int64")
    return df


def us_to_ns(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    return int(round(value * 1000))


def normalize(rows: Sequence[Mapping[str, Any]], keep_lists: bool = True) -> List[Dict[str, Any]]:
    """JSON rows as flat rows: nested objects become ``parent_child`` columns, ``*_us`` figures
    (and the figures of objects named ``*_us``, but their ``count``) become ``*_ns`` integers;
    list values stay as they are, or are left out without ``keep_lists``."""

    def flatten(prefix: str, value: Mapping[str, Any], in_us: bool, out: Dict[str, Any]) -> None:
        for key, item in value.items():
            name = f"{prefix}{key}"
            us = in_us or key.endswith("_us")
            if key.endswith("_us"):
                name = name[:-3] + "_ns"
            if isinstance(item, Mapping):
                flatten(f"{name}_", item, us, out)
            elif isinstance(item, list):
                if keep_lists:
                    out[name] = item
            elif us and key != "count":
                out[name] = us_to_ns(item)
            else:
                out[name] = item

    result = []
    for row in rows:
        flat: Dict[str, Any] = {}
        flatten("", row, False, flat)
        result.append(flat)
    return result


def resolve_path(document: Mapping[str, Any], path: str) -> Any:
    """``"stragglers.per_rank"`` in a JSON document; KeyError naming what exists."""
    node: Any = document
    walked: List[str] = []
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            here = sorted(node) if isinstance(node, Mapping) else []
            where = ".".join(walked) or "the document"
            raise KeyError(f"no {part!r} in {where} (it has {', '.join(here)})")
        node = node[part]
        walked.append(part)
    return node


def list_paths(document: Mapping[str, Any], prefix: str = "") -> List[str]:
    """The paths of every list of objects in a JSON document (the tables it holds)."""
    paths = []
    for key, value in document.items():
        path = f"{prefix}{key}"
        if isinstance(value, list) and value and all(isinstance(v, Mapping) for v in value):
            paths.append(path)
        elif isinstance(value, Mapping):
            paths += list_paths(value, f"{path}.")
    return paths


# --- codes of the event columns (tensordiag/trace/events.hpp, docs/trace-format.md) -------------

COPY_KINDS = ["unknown", "htod", "dtoh", "dtod", "htoh", "ptop", "memset"]
MEMORY_KINDS = ["unknown", "pageable", "pinned", "device", "array", "managed", "device_static",
                "managed_static"]
API_KINDS = ["runtime", "driver", "cpu_op", "python", "other"]
RANGE_KINDS = ["user_annotation", "gpu_annotation", "step", "external", "other", "gpu_sync"]
MEMORY_ACTIONS = ["alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
                  "segment_map", "segment_unmap", "pool_create", "pool_trim", "pool_destroy",
                  "oom", "snapshot"]
FLOW_KINDS = ["launch", "other"]
#: (event kind, code column) -> the names of its codes.
CODES: Dict[Tuple[str, str], List[str]] = {
    ("copies", "kind"): COPY_KINDS, ("copies", "src_kind"): MEMORY_KINDS,
    ("copies", "dst_kind"): MEMORY_KINDS, ("api_calls", "kind"): API_KINDS,
    ("ranges", "kind"): RANGE_KINDS, ("memory", "action"): MEMORY_ACTIONS,
    ("flows", "kind"): FLOW_KINDS,
}
#: String-id columns and the name of their resolved column.
STRING_COLUMNS = {"name_id": "name", "category_id": "category", "message_id": "message",
                  "user_metadata_id": "user_metadata", "site_id": "site"}


def lane_label(kind: str, group: int, ident: int, name: str) -> str:
    """``device 0 stream 7``, ``python main (pid 12)`` / ``thread 34 (pid 12)``,
    ``device 0 memory`` / ``host memory``."""
    name = name.strip()
    if kind == "gpu_stream":
        return f"device {group} {name or f'stream {ident}'}"
    if kind == "host_thread":
        return f"{name or f'thread {ident}'} (pid {group})"
    return "host memory" if group < 0 else f"device {group} memory"


def frame_label(function: str, file: str, line: int) -> str:
    where = f"{file}:{line}" if file and line else file
    if function and where:
        return f"{function} ({where})"
    return function or where or "?"


def categorical(pandas, codes, categories: Sequence[str]):
    """A pandas Categorical of ``categories[codes]`` (codes out of range: missing)."""
    import numpy

    codes = numpy.asarray(codes).astype(numpy.int64)
    codes = numpy.where((codes >= 0) & (codes < len(categories)), codes, -1)
    unique: Dict[str, int] = {}
    remap = numpy.empty(len(categories), dtype=numpy.int64)
    for i, text in enumerate(categories):
        remap[i] = unique.setdefault(text, len(unique))
    mapped = numpy.where(codes >= 0, remap[numpy.maximum(codes, 0)], -1)
    return pandas.Categorical.from_codes(mapped, categories=list(unique))


def event_frame(kind: str, columns: Mapping[str, Any], tables: "EventTables",
                resolve: bool = True):
    """The DataFrame of one event kind; with ``resolve``, string ids, lanes, stacks and codes
    get categorical columns beside the ids, and kernels their collective's fields."""
    pandas = require_pandas(f"Trace.to_pandas({kind!r})")
    df = pandas.DataFrame({name: column for name, column in columns.items()})
    if not resolve:
        return df
    for column, name in STRING_COLUMNS.items():
        if column in df:
            df[name] = categorical(pandas, df[column].to_numpy(), tables.strings())
    for column in ("lane", "target_lane"):
        if column in df:
            df[f"{column}_name"] = categorical(pandas, df[column].to_numpy(), tables.lane_labels())
    if "stack_id" in df:
        df["stack"] = categorical(pandas, df["stack_id"].to_numpy(), tables.stack_labels())
    for (store, column), names in CODES.items():
        if store == kind and column in df:
            df[f"{column}_name"] = categorical(pandas, df[column].to_numpy(), names)
    if kind == "kernels" and "correlation" in df:
        collectives = tables.collectives()
        if collectives:
            side = pandas.DataFrame(collectives, columns=[
                "correlation", "process_group", "process_group_ranks", "collective",
                "group_size", "seq"])
            side = side.drop_duplicates("correlation")
            df = df.merge(side, on="correlation", how="left")
    return df


class EventTables:
    """The trace's lookup tables, read once from the compiled module and kept."""

    def __init__(self, core: Any, handle: Any) -> None:
        self._core = core
        self._handle = handle
        self._cache: Dict[str, Any] = {}

    def _get(self, key: str, read: Callable[[], Any]) -> Any:
        if key not in self._cache:
            self._cache[key] = read()
        return self._cache[key]

    def strings(self) -> List[str]:
        return self._get("strings", lambda: self._core.trace_strings(self._handle))

    def lanes(self) -> List[Tuple[str, int, int, str]]:
        return self._get("lanes", lambda: self._core.trace_lanes(self._handle))

    def lane_labels(self) -> List[str]:
        return self._get("lane_labels", lambda: [lane_label(*lane) for lane in self.lanes()])

    def frames(self) -> List[Tuple[str, str, int]]:
        return self._get("frames", lambda: self._core.trace_frames(self._handle))

    def stacks(self) -> List[Tuple[int, ...]]:
        return self._get("stacks", lambda: self._core.trace_stacks(self._handle))

    def stack_labels(self) -> List[str]:
        def build() -> List[str]:
            frames = [frame_label(*f) for f in self.frames()]
            return [" <- ".join(frames[i] for i in stack) for stack in self.stacks()]

        return self._get("stack_labels", build)

    def collectives(self) -> List[Tuple[int, str, str, str, int, int]]:
        return self._get("collectives", lambda: self._core.trace_collectives(self._handle))



def kernel_ops(pandas: Any, kernels: Any, api: Any) -> Any:
    """For each kernel row: the launch call with its correlation id (``launch``) and the
    innermost framework operator (``cpu_op`` row) on the launching thread whose span holds the
    launch (``op``, ``op_start_ns``), as Kineto's ac2g flows and nesting link them."""
    import numpy

    n = len(kernels)
    launch = numpy.full(n, -1, dtype=numpy.int64)
    op = numpy.full(n, -1, dtype=numpy.int64)
    runtime = numpy.isin(api["kind"].to_numpy(), [0, 1])  # api_kind runtime, driver
    calls = api[runtime & (api["correlation"].to_numpy() != 0)]
    by_correlation = dict(zip(calls["correlation"].to_numpy().tolist(), calls.index.tolist()))
    for row, correlation in enumerate(kernels["correlation"].to_numpy().tolist()):
        launch[row] = by_correlation.get(correlation, -1) if correlation else -1
    # The innermost enclosing operator of each launch call, per thread: a sweep over starts.
    ops = api[api["kind"].to_numpy() == 2]  # api_kind cpu_op
    enclosing: Dict[int, int] = {}
    for lane, lane_calls in calls.groupby("lane"):
        lane_ops = ops[ops["lane"] == lane].sort_values(["start_ns", "end_ns"],
                                                        ascending=[True, False])
        starts = lane_ops["start_ns"].to_numpy()
        ends = lane_ops["end_ns"].to_numpy()
        index = lane_ops.index.to_numpy()
        stack: List[int] = []
        order = lane_calls.sort_values("start_ns")
        k = 0
        for call, t in zip(order.index.tolist(), order["start_ns"].to_numpy().tolist()):
            while k < len(starts) and starts[k] <= t:
                while stack and ends[stack[-1]] < starts[k]:
                    stack.pop()
                stack.append(k)
                k += 1
            while stack and ends[stack[-1]] < t:
                stack.pop()
            if stack:
                enclosing[call] = int(index[stack[-1]])
    for row in range(n):
        if launch[row] >= 0:
            op[row] = enclosing.get(int(launch[row]), -1)
    out = pandas.DataFrame({"launch_index": launch, "op_index": op}, index=kernels.index)
    names = api["name"] if "name" in api else api["name_id"]
    out["launch"] = pandas.Series(
        [names.iloc[i] if i >= 0 else None for i in launch], index=kernels.index, dtype="object")
    out["op"] = pandas.Series(
        [names.iloc[i] if i >= 0 else None for i in op], index=kernels.index, dtype="object")
    starts_all = api["start_ns"].to_numpy()
    out["op_start_ns"] = pandas.array([int(starts_all[i]) if i >= 0 else None for i in op],
                                      dtype="Int64")
    return out
