# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The recorder: every DTensor op and every collective of a PyTorch program, by line and module.

How it hooks in (PyTorch 2.11), public hooks first:
- ``_collectives.CollectiveMode``, a ``TorchDispatchMode``, sees every collective op at the
  dispatcher, functional collectives (DTensor's) and the process group's own ops (FSDP2's
  ``dist.all_gather_into_tensor``/``reduce_scatter_tensor``) alike; ModTracker names the module
  and whether it runs forward or backward.
- ``DTensorMode``, a second dispatch mode entered after it, sees each op with its DTensor
  arguments before DTensor dispatches it; calling the op from there runs DTensor's own
  dispatch unchanged, and the collectives it issues reach CollectiveMode, which hands them to
  the op's record (``collectives``) rather than recording them alone.
- Optional, private: which placement change each redistribution made (from, to, mesh dim) is
  read where DTensor calls ``redistribute_local_tensor`` (``torch.distributed.tensor._dispatch``
  for implicit ones, ``_redistribute`` for ``DTensor.redistribute``/``full_tensor``) with
  PyTorch's own transforms (``_gen_transform_infos``). Where a PyTorch release lacks them, the
  records still carry the collectives, without ``redistributions``.

Records go out in the case format (docs/dtensor.md, "Recordings"), identical calls from one
source line and module merged into one line with ``calls``; a collective issued outside any
DTensor op (FSDP2's, ``torch.distributed``'s) is a record of its own (``collective``), with the
placement change it stands for, so ``tdiag shard report`` ranks it too.
"""

from __future__ import annotations

import contextlib
import json
import linecache
import os
import sys
import threading
from typing import Any, Dict, Iterable, Iterator, List, Optional, Tuple, Union

import torch
from torch.distributed.tensor import DTensor
from torch.utils import _pytree as pytree
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.weak import WeakIdKeyDictionary

from . import _encode
from ._collectives import CollectiveMode, Groups, Modules, case_fields

try:  # private: the placement change of each redistribution (optional, see above)
    import torch.distributed.tensor._dispatch as _dispatch
    import torch.distributed.tensor._redistribute as _redistribute
    _HOOKABLE = (hasattr(_dispatch, "redistribute_local_tensor")
                 and hasattr(_redistribute, "redistribute_local_tensor")
                 and hasattr(_redistribute, "_gen_transform_infos"))
except ImportError:  # pragma: no cover - a PyTorch that moved them
    _dispatch = _redistribute = None
    _HOOKABLE = False

_TORCH_DIR = os.path.dirname(torch.__file__) + os.sep
_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_local = threading.local()


def _user_frame(start) -> Optional[Any]:
    """The innermost frame outside torch, tensordiag and the interpreter's own modules."""
    frame = start
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_TORCH_DIR) or name.startswith(_OUR_DIR) or name.startswith("<")
                or "/contextlib.py" in name or "/functools.py" in name):
            return frame
        frame = frame.f_back
    return None


_SOURCE_KEY = "tensordiag_source"  # an autograd node's forward line, in node.metadata
_sources: Dict[Tuple[Any, int], Dict[str, Any]] = {}


def _frame_source(frame) -> Dict[str, Any]:
    """The source dict of a user frame (cached per code object and line)."""
    cached = _sources.get((frame.f_code, frame.f_lineno))
    if cached is not None:
        return cached
    path = frame.f_code.co_filename
    try:
        shown = os.path.relpath(path)
        if shown.startswith(".."):
            shown = path
    except ValueError:
        shown = path
    source = {"file": shown, "line": frame.f_lineno, "function": frame.f_code.co_name}
    code = linecache.getline(path, frame.f_lineno).strip()
    if code:
        source["code"] = code
    _sources[(frame.f_code, frame.f_lineno)] = source
    return source


class _Origin:
    """Where an op comes from: the user's frame in the forward pass; in the backward pass the
    autograd node being run and the forward line that made it (when the recorder saw it)."""

    __slots__ = ("frame", "node", "forward", "key")

    def __init__(self, start) -> None:
        self.frame = self.node = self.forward = None
        self.key: Any = None
        if getattr(torch._C, "_current_graph_task_id", lambda: -1)() != -1:
            node = getattr(torch._C, "_current_autograd_node", lambda: None)()
            self.node = node.name() if node is not None else "backward"
            if node is not None:
                self.forward = node.metadata.get(_SOURCE_KEY)
            where = (self.forward["file"], self.forward["line"]) if self.forward else None
            self.key = ("backward", self.node, where)
        else:
            self.frame = _user_frame(start)
            self.key = (self.frame.f_code, self.frame.f_lineno) if self.frame else None

    def source(self) -> Optional[Dict[str, Any]]:
        if self.node is not None:
            if self.forward is None:
                return {"file": "<autograd>", "line": 0, "function": self.node}
            return dict(self.forward,
                        function=f"{self.node} (backward of {self.forward['function']})")
        return _frame_source(self.frame) if self.frame is not None else None


class _Call:
    """One op in flight: where its DTensor arguments sit, and the transforms seen so far."""

    __slots__ = ("positions", "redistributions", "collectives", "record")

    def __init__(self, positions: _encode.Positions, record: bool) -> None:
        self.positions = positions
        self.redistributions: List[Dict[str, Any]] = []
        self.collectives: List[Dict[str, Any]] = []  # what CollectiveMode saw the op issue
        self.record = record


def _transforms(current_spec, target_spec) -> List[Dict[str, Any]]:
    """PyTorch's per-mesh-dim transforms for one redistribution, with collective and bytes."""
    infos = _redistribute._gen_transform_infos(current_spec, target_spec)
    mesh = current_spec.mesh
    itemsize = current_spec.tensor_meta.dtype.itemsize if current_spec.tensor_meta else 0
    out = []
    for info in infos:
        src, dst = info.src_dst_placements
        parts = mesh.size(mesh_dim=info.mesh_dim)
        if src == dst or parts == 1:
            continue
        collective = _encode.collective(src, dst)
        before = _encode.local_numel(info.logical_shape, src, parts)
        after = _encode.local_numel(info.logical_shape, dst, parts)
        out.append({"mesh_dim": info.mesh_dim, "from": _encode.placement(src),
                    "to": _encode.placement(dst), "collective": collective,
                    "bytes_per_rank": max(before, after) * itemsize})
    return out


def _seen(local_tensor, current_spec, target_spec) -> None:
    call = getattr(_local, "call", None)
    if call is None or not call.record:
        return
    arg, item = call.positions.find(local_tensor, current_spec)
    for step in _transforms(current_spec, target_spec):
        entry: Dict[str, Any] = {"arg": arg}
        if item is not None:
            entry["item"] = item
        entry.update(step)
        call.redistributions.append(entry)


def _implicit(local_tensor, current_spec, target_spec, *args, **kwargs):
    _seen(local_tensor, current_spec, target_spec)
    return _ORIGINAL_IMPLICIT(local_tensor, current_spec, target_spec, *args, **kwargs)


def _explicit(local_tensor: Any, current_spec: Any, target_spec: Any, *args: Any,
              **kwargs: Any) -> Any:
    # Backward runs on autograd's threads, where only the innermost recorder entered is known.
    recorder = getattr(_local, "recorder", None) or _innermost
    if getattr(_local, "call", None) is not None or recorder is None:  # inside an op's dispatch
        _seen(local_tensor, current_spec, target_spec)
        return _ORIGINAL_EXPLICIT(local_tensor, current_spec, target_spec, *args, **kwargs)
    collectives: List[Dict[str, Any]] = []
    outer = getattr(_local, "sink", None)
    _local.sink = collectives  # its collectives belong to the `redistribute` record
    try:
        result = _ORIGINAL_EXPLICIT(local_tensor, current_spec, target_spec, *args, **kwargs)
    finally:
        _local.sink = outer
    recorder._explicit(local_tensor, current_spec, target_spec, collectives)
    return result


_ORIGINAL_IMPLICIT = _dispatch.redistribute_local_tensor if _HOOKABLE else None
_ORIGINAL_EXPLICIT = _redistribute.redistribute_local_tensor if _HOOKABLE else None
_installed = 0
_install_lock = threading.Lock()
_innermost: Optional["DTensorMode"] = None  # the last recorder entered, on any thread


def _install() -> None:
    global _installed
    with _install_lock:
        if _installed == 0 and _HOOKABLE:
            _dispatch.redistribute_local_tensor = _implicit
            _redistribute.redistribute_local_tensor = _explicit
        _installed += 1


def _uninstall() -> None:
    global _installed
    with _install_lock:
        _installed -= 1
        if _installed == 0 and _HOOKABLE:
            _dispatch.redistribute_local_tensor = _ORIGINAL_IMPLICIT
            _redistribute.redistribute_local_tensor = _ORIGINAL_EXPLICIT


def _place(entry: Dict[str, Any], module: Optional[str], phase: str) -> None:
    if module is not None:
        entry["module"] = module
    if phase:
        entry["phase"] = phase


class DTensorMode(TorchDispatchMode):
    """Records (``record``) and explains (``explain``) every DTensor op run under it."""

    def __init__(self, recording: Optional["Recording"], explain: bool,
                 modules: Optional[Modules] = None, groups: Optional[Groups] = None) -> None:
        super().__init__()
        self.recording = recording
        self.explain = explain
        self.modules = modules
        self.groups = groups
        self._producers = WeakIdKeyDictionary()  # forward output -> the source that made it

    def _where(self) -> Tuple[Optional[str], str]:
        return self.modules.where() if self.modules is not None else (None, "")

    def collective(self, c: Dict[str, Any], _depth: int = 0) -> None:
        """CollectiveMode's sink: a collective issued inside a DTensor op or redistribution
        belongs to that record; any other (FSDP2's, torch.distributed's) is a record alone."""
        inside = getattr(_local, "sink", None)
        if inside is not None:
            inside.append(c)
            return
        if self.recording is None:
            return
        origin = _Origin(sys._getframe(1))
        module, phase = self._where()
        key = ("collective", c["op"], c.get("group"), c["bytes_per_rank"], c.get("dtype"),
               origin.key, module, phase)
        if not self.recording._count(key):
            return
        entry: Dict[str, Any] = {"op": c["op"]}
        entry.update(case_fields(c))
        source = origin.source()
        if source is not None:
            entry["source"] = source
        _place(entry, module, phase)
        entry["collective"] = c
        self.recording._add(key, entry)

    def __enter__(self):
        global _innermost
        _install()
        self._previous = getattr(_local, "recorder", None)
        self._previous_innermost = _innermost
        _local.recorder = _innermost = self
        return super().__enter__()

    def __exit__(self, *exc):
        global _innermost
        try:
            return super().__exit__(*exc)
        finally:
            _local.recorder = self._previous
            _innermost = self._previous_innermost
            _uninstall()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if not any(issubclass(t, DTensor) for t in types):
            return func(*args, **kwargs)
        flat_args = _encode.positional(func, args, kwargs)
        key = origin = None
        record = False
        where: Tuple[Optional[str], str] = (None, "")
        if self.recording is not None:
            origin = _Origin(sys._getframe(1))
            where = self._where()
            key = (func, _encode.key(flat_args), origin.key, where)
            record = self.recording._count(key)
            if origin.node is None:
                self._annotate_inputs(flat_args)
            if record and self.groups is not None:
                self.groups.add_mesh(_encode.first_mesh(flat_args))
        call = _Call(_encode.Positions(flat_args), record)
        outer, outer_sink = getattr(_local, "call", None), getattr(_local, "sink", None)
        _local.call, _local.sink = call, call.collectives
        try:
            result = func(*args, **kwargs)
        except Exception as error:
            _local.call, _local.sink = outer, outer_sink
            if record:
                assert origin is not None and self.recording is not None  # record implies both
                entry = self._entry(func, flat_args, origin, call, where)
                entry["expect"] = {"ok": False, "error_type": type(error).__name__,
                                   "error": str(error)}
                self.recording._add(key, entry)
            if self.explain:
                from ._explain import explained
                raise explained(func, flat_args, error) from error
            raise
        _local.call, _local.sink = outer, outer_sink
        if record:
            assert origin is not None and self.recording is not None  # record implies both
            entry = self._entry(func, flat_args, origin, call, where)
            entry["expect"] = {"ok": True, "outputs": _encode.outputs(result),
                               "comms": _encode.comms(call.redistributions)}
            self.recording._add(key, entry)
        if origin is not None and origin.frame is not None:
            self._remember_outputs(result, origin)
        return result

    # Backward ops run on autograd's threads, with no user frame: the autograd node of a forward
    # output is tagged with the forward line that made the output (when a later op receives it,
    # since autograd attaches the node after the op returns), and its backward ops are recorded
    # at that line.
    def _remember_outputs(self, result, origin: _Origin) -> None:
        if not torch.is_grad_enabled():
            return
        source = origin.source()
        # Below autograd an output does not require grad yet: every output is remembered.
        for leaf in [result] if isinstance(result, DTensor) else pytree.tree_leaves(result):
            if isinstance(leaf, DTensor):
                self._producers[leaf] = source

    def _annotate_inputs(self, flat_args) -> None:
        if not self._producers:
            return
        for a in flat_args:
            for t in a if isinstance(a, (list, tuple)) else (a,):
                if isinstance(t, DTensor) and t.grad_fn is not None:
                    source = self._producers.pop(t, None)
                    if source is not None and _SOURCE_KEY not in t.grad_fn.metadata:
                        t.grad_fn.metadata[_SOURCE_KEY] = source

    def _entry(self, func, flat_args, origin: _Origin, call,
               where: Tuple[Optional[str], str]) -> Dict[str, Any]:
        mesh = _encode.first_mesh(flat_args)
        entry: Dict[str, Any] = {"op": str(func)}
        entry.update(_encode.mesh(mesh))
        entry["args"] = [_encode.arg(a) for a in flat_args]
        source = origin.source()
        if source is not None:
            entry["source"] = source
        if call.redistributions:
            entry["redistributions"] = call.redistributions
        _place(entry, *where)
        if call.collectives:
            entry["collectives"] = call.collectives
        return entry

    def _explicit(self, local_tensor, current_spec, target_spec,
                  collectives: List[Dict[str, Any]]) -> None:
        """``DTensor.redistribute``/``full_tensor`` called by the program itself."""
        if self.recording is None:
            return
        origin = _Origin(sys._getframe(2))
        where = self._where()
        key = ("redistribute", current_spec, target_spec, origin.key, where)
        if not self.recording._count(key):
            return
        steps = [dict(s, arg=0) for s in _transforms(current_spec, target_spec)]
        meta = current_spec.tensor_meta
        tensor = {"shape": list(meta.shape) if meta else [],
                  "dtype": _encode.dtype(meta.dtype) if meta else "float32",
                  "placements": [_encode.placement(p) for p in current_spec.placements]}
        entry: Dict[str, Any] = {"op": "redistribute"}
        entry.update(_encode.mesh(current_spec.mesh))
        entry["args"] = [{"tensor": tensor}]
        entry["expect"] = {"ok": True, "outputs": [
            {"shape": tensor["shape"],
             "placements": [_encode.placement(p) for p in target_spec.placements]}],
            "comms": _encode.comms(steps)}
        source = origin.source()
        if source is not None:
            entry["source"] = source
        if steps:
            entry["redistributions"] = steps
        _place(entry, *where)
        if collectives:
            entry["collectives"] = collectives
        self.recording._add(key, entry)


@contextlib.contextmanager
def recording_modes(recording: "Recording", explain: bool, meshes: Iterable[Any] = (),
                    collectives: bool = True) -> Iterator["Recording"]:
    """The recorder's hooks, entered in order: ModTracker, CollectiveMode, DTensorMode."""
    groups = Groups()
    for mesh in meshes:
        groups.add_mesh(mesh)
    modules = Modules(groups) if collectives else None
    mode = DTensorMode(recording, explain, modules, groups)
    with contextlib.ExitStack() as stack:
        if modules is not None:
            stack.enter_context(modules)
            stack.enter_context(CollectiveMode(mode.collective, groups))
        stack.enter_context(mode)
        yield recording


class Recording:
    """What ``record_dtensor`` saw: ``records`` (case-format dicts, first call first, each
    with ``calls``), written to ``path`` as JSONL when the block ends (and on ``save()``)."""

    def __init__(self, path: Union[str, "os.PathLike[str]", None]) -> None:
        self.path = os.fspath(path) if path is not None else None
        self._index: Dict[Any, int] = {}
        self.records: List[Dict[str, Any]] = []
        self._lock = threading.Lock()

    def _count(self, key) -> bool:
        """Counts one call; True when it is the first of its kind (and must be recorded)."""
        with self._lock:
            index = self._index.get(key)
            if index is None:
                self._index[key] = -1  # being recorded by this call
                return True
            if index >= 0:
                self.records[index]["calls"] += 1
            return False

    def _add(self, key, entry: Dict[str, Any]) -> None:
        with self._lock:
            entry = {"id": f"r{len(self.records) + 1:06d}", **entry, "calls": 1}
            self._index[key] = len(self.records)
            self.records.append(entry)

    def to_jsonl(self) -> str:
        """The recording as case-format JSONL."""
        with self._lock:
            return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in self.records)

    def save(self, path: Optional[str] = None) -> str:
        """Writes the JSONL (to ``path``, default the recording's own) and returns the path."""
        target = os.fspath(path) if path is not None else self.path
        if target is None:
            raise ValueError("Recording.save: no path given and the recording has none")
        directory = os.path.dirname(target)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with open(target, "w", encoding="utf-8") as f:
            f.write(self.to_jsonl())
        return target

    def report(self):
        """Where the recorded program communicates, as ``tdiag shard report`` on the saved
        file (a ``tensordiag.dtensor.CommReport``: ``lines``, ``modules``, ``findings``)."""
        from ..dtensor import report_text
        return report_text(self.to_jsonl(), self.path or "<recording>")

    def modules(self):
        """The communication ranked by module and phase, as ``tdiag shard report`` ranks it
        (``CommModule``: ``module``, ``phase``, ``bytes``, ``count``, ``collectives``, ``ops``,
        ``lines``): FSDP2's all-gathers and reduce-scatters, DTensor's redistributions, by
        module, forward and backward apart, most bytes first."""
        return self.report().modules

    def modules_text(self, top: int = 20) -> str:
        """``modules()`` as the table ``tdiag shard report`` prints (the first ``top`` rows;
        0 = all)."""
        return self.report().modules_text(top)

    def check(self):
        """Our propagation on every recorded op, as ``tdiag shard check`` (a CaseCheck)."""
        from ..dtensor import check_cases_text
        return check_cases_text(self.to_jsonl())

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        calls = sum(r["calls"] for r in self.records)
        return f"<Recording {len(self.records)} records, {calls} calls, path={self.path!r}>"
