# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Failure records of compiled kernels (Triton, torch.compile): pure Python, no torch or triton.

The device side (``tensordiag.triton``) writes into one int64 buffer per device, laid out as

- ``counts[MAX_SITES]``: failures per site, bumped by one predicated atomic per failing element;
- ``records[MAX_SITES][RECORD_WORDS]``: the first failure of each site, written only by the
  element whose atomic returned 0: operand ``a`` (as int64 and as float64 bits), operand ``b``
  (likewise), program id x/y/z, lane, number of programs x/y/z.

A site is one check in one kernel, registered on the host when the kernel is defined or generated
(``Site``: kernel, file, line, condition, and for torch.compile the user's line and the op). This
module decodes the buffer's words into ``Failure`` objects and renders them as the C++ macros'
report (``TDIAG-DSA-001``): one line per site, then the fields; as ``tensordiag.report/v1`` JSON
too.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math
import os
import re
import struct
import textwrap
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .errors import DeviceAssertionError, Error

MAX_SITES = 4096
RECORD_WORDS = 12
BUFFER_WORDS = MAX_SITES + MAX_SITES * RECORD_WORDS
# Word offsets inside one record.
A_INT, A_BITS, B_INT, B_BITS, PID_X, PID_Y, PID_Z, LANE, GRID_X, GRID_Y, GRID_Z = range(11)

CODE = "TDIAG-DSA-001"
KINDS = ("index", "check")


@dataclasses.dataclass(frozen=True)
class Site:
    """One check in one kernel, as registered on the host."""

    id: int
    kind: str                  # "index" (check_index) or "check"
    condition: str             # the source text of the check, e.g. "check_index(j, rows, ...)"
    kernel: str                # the kernel's name
    file: str = ""             # where the check is written (the kernel's source line)
    line: int = 0
    message: str = ""          # the user's message, or for torch.compile the generated condition
    user_file: str = ""        # torch.compile: the user's Python line that produced the index
    user_line: int = 0
    user_code: str = ""
    op: str = ""               # torch.compile: the op that made the failing index
    stack: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Failure:
    """The first failure recorded at one site, and how many there were."""

    site: Site
    count: int
    a: Any
    b: Any
    program: Tuple[int, int, int]
    lane: int
    grid: Tuple[int, int, int]
    device: int = 0


class SiteTable:
    """Process-wide table of sites: ids are what kernels write into their records."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sites: Dict[int, Site] = {}
        self._keys: Dict[Tuple[Any, ...], int] = {}

    def register(self, kind: str, condition: str, kernel: str, **where: Any) -> Site:
        """A new site (or the one already registered with the same fields): its id is stable."""
        if kind not in KINDS:
            raise ValueError(f"site kind must be one of {KINDS}, not {kind!r}")
        key = (kind, condition, kernel, tuple(sorted(where.items())))
        with self._lock:
            if key in self._keys:
                return self._sites[self._keys[key]]
            if len(self._sites) >= MAX_SITES:
                raise Error(f"more than {MAX_SITES} check sites registered in this process")
            site = Site(len(self._sites), kind, condition, kernel, **where)
            self._sites[site.id] = site
            self._keys[key] = site.id
            return site

    def reserve(self) -> int:
        """An id whose site is filled in later (``tensordiag.triton.site()``)."""
        with self._lock:
            if len(self._sites) >= MAX_SITES:
                raise Error(f"more than {MAX_SITES} check sites registered in this process")
            sid = len(self._sites)
            self._sites[sid] = Site(sid, "check", "", "<unregistered kernel>")
            return sid

    def fill(self, sid: int, site: Site) -> None:
        with self._lock:
            self._sites[sid] = dataclasses.replace(site, id=sid)

    def __getitem__(self, sid: int) -> Site:
        with self._lock:
            site = self._sites.get(sid)
        return site if site is not None else Site(sid, "check", "", "<unknown kernel>")

    def __len__(self) -> int:
        return len(self._sites)


SITES = SiteTable()


# --- the records ----------------------------------------------------------------------------

def _operand(as_int: int, bits: int) -> Any:
    """An operand stored both as int64 and as float64 bits: the int when they agree."""
    value = struct.unpack("<d", struct.pack("<q", bits))[0]
    if math.isfinite(value) and float(as_int) == value:
        return as_int
    return value


def decode(counts: Sequence[int], records: Sequence[int], table: SiteTable = SITES,
           device: int = 0) -> List[Failure]:
    """Failures from the buffer's words: ``counts`` (MAX_SITES) and ``records`` (flattened)."""
    if len(counts) > MAX_SITES or len(records) < len(counts) * RECORD_WORDS:
        raise ValueError(f"a failure buffer has {MAX_SITES} counts and {RECORD_WORDS} words per "
                         f"record; got {len(counts)} counts and {len(records)} record words")
    failures = []
    for sid, count in enumerate(counts):
        if count <= 0:
            continue
        r = records[sid * RECORD_WORDS:(sid + 1) * RECORD_WORDS]
        failures.append(Failure(table[sid], int(count), _operand(r[A_INT], r[A_BITS]),
                                _operand(r[B_INT], r[B_BITS]), (r[PID_X], r[PID_Y], r[PID_Z]),
                                int(r[LANE]), (r[GRID_X], r[GRID_Y], r[GRID_Z]), device))
    return failures


# --- the report -----------------------------------------------------------------------------

def _triple(t: Sequence[int]) -> str:
    return "(" + ",".join(str(int(v)) for v in t) + ")"


def what_failed(f: Failure) -> str:
    """``index 16 not below 16`` / ``index -3 is negative`` / ``check failed: a=.., b=..``."""
    if f.site.kind == "index":
        if isinstance(f.a, int) and f.a < 0:
            return f"index {f.a} is negative"
        return f"index {f.a} not below {f.b}"
    return f"check failed with values {f.a}, {f.b}"


def where(f: Failure) -> Tuple[str, int]:
    """The line the report names first: the user's line for torch.compile, else the kernel's."""
    if f.site.user_file:
        return f.site.user_file, f.site.user_line
    return f.site.file, f.site.line


def message(f: Failure) -> str:
    """The one-line message, in the C++ macros' shape."""
    s = f.site
    condition = s.condition + (f": {s.message}" if s.message and s.kind == "check" else "")
    text = f"assertion failed: {what_failed(f)} ({condition}) in {s.kernel}"
    if s.file:
        text += f" at {s.file}:{s.line}"
    text += (f", program {_triple(f.program)} lane {f.lane}, grid {_triple(f.grid)} on device "
             f"{f.device}")
    if s.op:
        text += f", from {s.op}"
    more = f.count - 1
    if more:
        text += f", and {more:,} more failure{'s' if more > 1 else ''} at this site"
    return text + f" [{CODE}]"


def fields(f: Failure) -> List[Tuple[str, Any]]:
    s = f.site
    out: List[Tuple[str, Any]] = []
    if s.kind == "index":
        out += [("index", f.a), ("size", f.b)]
    else:
        out += [("a", f.a), ("b", f.b)]
    out += [("program", list(f.program)), ("lane", f.lane), ("grid", list(f.grid)),
            ("failures", f.count), ("kernel", s.kernel)]
    if s.line:
        out.append(("kernel line", f"{s.file or s.kernel}:{s.line}"))
    if s.kind == "index" and s.message:
        out.append(("generated check", s.message))
    if s.op:
        out.append(("op", s.op))
    if s.user_code:
        out.append(("user code", s.user_code))
    return out


def render_text(failures: Sequence[Failure]) -> str:
    """Compiler-style text, as ``tdiag report convert --to text`` renders the same report."""
    lines = []
    for f in failures:
        file, line = where(f)
        prefix = f"{file}:{line}: " if file else ""
        lines.append(f"{prefix}error: {message(f)}")
        width = max(len(name) for name, _ in fields(f))
        for name, value in fields(f):
            lines.append(f"    {name:<{width}} = {value}")
        for frame in f.site.stack:
            lines.append(f"  stack: {frame}")
        if f.site.op:
            lines.append("  note: the count covers every launch since the last check, the runs "
                         "Inductor's autotuner made with the same inputs included")
        if f.site.kind == "index":
            skipped = "read as index 0" if f.site.op else "skipped (masked)"
            lines.append(f"  hint: the index must lie in [0, {f.b}): check where it is computed; "
                         f"the element was {skipped}, no trap, the stream stays usable")
    return "\n".join(lines)


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return {"float": "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")}
    return v


def report_json(failures: Sequence[Failure]) -> Dict[str, Any]:
    """The failures as a ``tensordiag.report/v1`` document (docs/report-format.md)."""
    diagnostics = []
    for f in failures:
        file, line = where(f)
        d: Dict[str, Any] = {"severity": "error", "code": CODE,
                             "title": f"device assertion failed: {f.site.condition}",
                             "message": message(f)}
        if file:
            d["location"] = {"file": file, "line": int(line), "function": f.site.kernel}
        d["fields"] = [{"name": n, "value": _json_value(v)} for n, v in fields(f)]
        if f.site.stack:
            d["notes"] = [f"user stack: {frame}" for frame in f.site.stack]
        if f.site.user_file and f.site.file:
            d["related"] = [{"location": {"file": f.site.file, "line": int(f.site.line)},
                             "message": "the generated check"}]
        diagnostics.append(d)
    import socket
    return {"schema": "tensordiag.report/v1",
            "metadata": {"tool": "tensordiag", "version": "", "time": "",
                         "host": socket.gethostname(), "pid": os.getpid()},
            "diagnostics": diagnostics}


def make_error(failures: Sequence[Failure]) -> DeviceAssertionError:
    """The exception for these failures: text, ``failures``, ``report_json`` and ``report``
    (a ``tensordiag.report.Report`` when the compiled module is there, else None)."""
    failures = list(failures)
    doc = report_json(failures)
    report = None
    try:
        import json

        from .report import from_json
        report = from_json(json.dumps(doc), "<compiled checks>")
    except ImportError:  # without the compiled module: the text and the JSON document only
        report = None
    return DeviceAssertionError(render_text(failures), report, failures=failures, report_json=doc)


# --- sites of hand-written Triton kernels -----------------------------------------------------

CHECK_FUNCTIONS = {"check": "check", "check_index": "index"}
_SITE_ARG = {"check": 4, "check_index": 3}    # position of the site argument


def _call_name(node: ast.Call) -> Optional[str]:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    return name if name in CHECK_FUNCTIONS else None


def scan_kernel(fn: Any) -> List[Dict[str, Any]]:
    """The calls of ``check``/``check_index`` in a kernel's source: line, text and the site
    argument (a name or an int literal), in source order. Raises ValueError on a call whose
    site argument is missing or is not a name or an integer literal."""
    source = textwrap.dedent(inspect.getsource(fn))
    file = inspect.getsourcefile(fn) or "<unknown>"
    first = inspect.getsourcelines(fn)[1]
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name is None:
            continue
        line = first + node.lineno - 1
        args = list(node.args)
        kw = {k.arg: k.value for k in node.keywords}
        pos = _SITE_ARG[name]
        site = kw.get("site", args[pos] if len(args) > pos else None)
        if isinstance(site, ast.Name):
            ref: Any = site.id
        elif isinstance(site, ast.Constant) and isinstance(site.value, int):
            ref = site.value
        else:
            raise ValueError(f"{file}:{line}: {name}() needs its site argument (a name bound "
                             "to tensordiag.triton.site(), or an integer literal)")
        found.append({"kind": CHECK_FUNCTIONS[name], "line": line, "file": file, "site": ref,
                      "text": ast.get_source_segment(source, node) or name})
    return sorted(found, key=lambda c: c["line"])


def relative(path: str) -> str:
    """A path as reports show it: relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def register_kernel_sites(fn: Any, kernel: str, table: SiteTable = SITES) -> List[Site]:
    """Fills the sites a kernel's checks name (``site = tensordiag.triton.site()`` globals) with
    the kernel's name, file, line and the call's text. Each check needs a site of its own."""
    sites = []
    seen: Dict[int, int] = {}
    globals_ = getattr(fn, "__globals__", {})
    for call in scan_kernel(fn):
        ref = call["site"]
        if isinstance(ref, str):
            if ref not in globals_:
                raise ValueError(f"{relative(call['file'])}:{call['line']}: the site {ref!r} is "
                                 "not a global of the kernel's module: define it with "
                                 f"`{ref} = tensordiag.triton.site()` before the kernel")
            value = getattr(globals_[ref], "value", globals_[ref])
        else:
            value = ref
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < MAX_SITES:
            raise ValueError(f"{relative(call['file'])}:{call['line']}: the site must be an id "
                             f"from tensordiag.triton.site(), not {value!r}")
        if value in seen:
            raise ValueError(f"{relative(call['file'])}:{call['line']}: the site {ref!r} is also "
                             f"used at line {seen[value]}: each check needs a site of its own")
        seen[value] = call["line"]
        site = Site(value, call["kind"], call["text"], kernel, file=relative(call["file"]),
                    line=call["line"])
        table.fill(value, site)
        sites.append(table[value])
    return sites


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)\n?(?:\s+(.*))?')


def user_frames(stack_trace: str) -> List[Tuple[str, int, str, str]]:
    """(file, line, function, code) of an fx node's ``stack_trace``, outermost first."""
    return [(m.group(1), int(m.group(2)), m.group(3), (m.group(4) or "").strip())
            for m in _FRAME.finditer(stack_trace or "")]


__all__ = ["Site", "Failure", "SiteTable", "SITES", "decode", "render_text", "report_json",
           "make_error", "scan_kernel", "register_kernel_sites", "user_frames", "MAX_SITES",
           "RECORD_WORDS", "BUFFER_WORDS"]
