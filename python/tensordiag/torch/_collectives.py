# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Every collective a PyTorch program issues, seen at the dispatcher, by module and line.

How it hooks in (public hooks only): a ``TorchDispatchMode`` sees the collective ops of both
paths PyTorch has, because both go through the dispatcher:

- functional collectives (``torch.ops._c10d_functional``, the older ``c10d_functional``): what
  DTensor's redistributions and compiled code issue;
- the process group's own ops (``torch.ops.c10d``: ``_allgather_base_``,
  ``_reduce_scatter_base_``, ``allreduce_``, ...): ``dist.all_gather_into_tensor`` and the rest
  of ``torch.distributed`` call ``ProcessGroup`` methods that dispatch these. FSDP2 in eager
  mode calls ``dist.all_gather_into_tensor``/``dist.reduce_scatter_tensor`` directly, so its
  collectives arrive here without wrapping any ``torch.distributed`` function.

For an op with a DTensor argument the mode returns ``NotImplemented``: DTensor then runs its own
dispatch (sharding propagation, redistribution) and the functional collectives it issues on
the local tensors come back to this mode, as PyTorch's ``CommDebugMode`` does. The module (and
forward or backward) comes from ``torch.distributed._tools.mod_tracker.ModTracker`` (global
module hooks, multi-grad hooks for the backward); the user's line from the Python stack.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode

_NAMESPACES = frozenset({"_c10d_functional", "c10d_functional", "_c10d_functional_autograd",
                         "c10d"})

# The kind of each collective op (namespace-less name), in the case format's spelling where it
# has one (all_gather, reduce_scatter, all_reduce, all_to_all).
KINDS: Dict[str, str] = {
    # functional collectives
    "all_gather_into_tensor": "all_gather", "all_gather_into_tensor_out": "all_gather",
    "all_gather_into_tensor_coalesced": "all_gather",
    "reduce_scatter_tensor": "reduce_scatter", "reduce_scatter_tensor_out": "reduce_scatter",
    "reduce_scatter_tensor_coalesced": "reduce_scatter",
    "all_reduce": "all_reduce", "all_reduce_": "all_reduce", "all_reduce_coalesced": "all_reduce",
    "all_reduce_coalesced_": "all_reduce", "all_to_all_single": "all_to_all",
    "broadcast": "broadcast", "broadcast_": "broadcast",
    # the process group's ops
    "_allgather_base_": "all_gather", "allgather_": "all_gather",
    "allgather_coalesced_": "all_gather", "allgather_into_tensor_coalesced_": "all_gather",
    "_reduce_scatter_base_": "reduce_scatter", "reduce_scatter_": "reduce_scatter",
    "reduce_scatter_tensor_coalesced_": "reduce_scatter",
    "allreduce_": "all_reduce", "allreduce_coalesced_": "all_reduce",
    "alltoall_": "all_to_all", "alltoall_base_": "all_to_all",
    "gather_": "gather", "scatter_": "scatter", "reduce_": "reduce",
    "send": "send", "recv_": "recv", "recv_any_source_": "recv", "barrier": "barrier",
}

# The placement change each collective stands for on its group's mesh dim, for the case
# format's `redistributions` (what `tdiag shard report` ranks): (from, to), on a 1-D tensor.
_AS_REDISTRIBUTION = {"all_gather": ("S(0)", "R"), "reduce_scatter": ("P(sum)", "S(0)"),
                      "all_reduce": ("P(sum)", "R"), "all_to_all": ("S(0)", "S(1)")}


def _nbytes(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(_nbytes(v) for v in value)
    return 0


def _first_tensor(value: Any) -> Optional[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (list, tuple)):
        for v in value:
            t = _first_tensor(v)
            if t is not None:
                return t
    return None


def _process_group(value: Any) -> Any:
    """A ProcessGroup from a dispatcher argument (a ProcessGroup or its boxed script object)."""
    if isinstance(value, dist.ProcessGroup):
        return value
    unbox = getattr(getattr(dist, "ProcessGroup", None), "unbox", None)
    if unbox is not None:
        try:
            return unbox(value)
        except Exception:  # noqa: BLE001 - not a boxed process group
            return None
    return None


class GroupInfo:
    """A process group as records name it: ``name``, ``size``, global ``ranks`` (when known)
    and, when a known DeviceMesh has it as a dim's group, that mesh and dim."""

    __slots__ = ("name", "size", "ranks", "mesh_shape", "mesh_dim", "mesh_dim_name")

    def __init__(self, name: str, size: int, ranks: Optional[List[int]]) -> None:
        self.name = name
        self.size = size
        self.ranks = ranks
        self.mesh_shape: Optional[List[int]] = None
        self.mesh_dim: Optional[int] = None
        self.mesh_dim_name: Optional[str] = None

    def as_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"group": self.name, "group_size": self.size}
        if self.ranks is not None:
            out["group_ranks"] = self.ranks
        if self.mesh_dim is not None:
            out["mesh"] = self.mesh_shape
            out["mesh_dim"] = self.mesh_dim
            if self.mesh_dim_name is not None:
                out["mesh_dim_name"] = self.mesh_dim_name
        return out


class Groups:
    """Process groups by name, tied to the mesh dims of the DeviceMeshes seen so far."""

    def __init__(self) -> None:
        self._by_name: Dict[str, GroupInfo] = {}
        self._mesh_dims: Dict[str, Tuple[List[int], int, Optional[str]]] = {}
        self._meshes: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._lock = threading.Lock()

    def add_mesh(self, mesh: Any) -> None:
        """Learns which group each dim of ``mesh`` communicates on (``DeviceMesh.get_group``)."""
        if mesh is None or mesh in self._meshes:
            return
        try:
            names = list(mesh.mesh_dim_names) if mesh.mesh_dim_names else None
            for dim in range(mesh.ndim):
                group = mesh.get_group(dim)
                label = names[dim] if names else None
                with self._lock:
                    self._mesh_dims.setdefault(group.group_name, (list(mesh.shape), dim, label))
                    info = self._by_name.get(group.group_name)
                    if info is not None and info.mesh_dim is None:
                        info.mesh_shape, info.mesh_dim, info.mesh_dim_name = \
                            list(mesh.shape), dim, label
            self._meshes.add(mesh)
        except Exception:  # noqa: BLE001 - a mesh without groups (not initialised): no names
            return

    def info(self, value: Any) -> Optional[GroupInfo]:
        """The group a collective's ``group_name`` string or ProcessGroup argument names."""
        pg = None
        if isinstance(value, str):
            name = value
        else:
            pg = _process_group(value)
            if pg is None:
                return None
            name = str(pg.group_name)
        with self._lock:
            known = self._by_name.get(name)
        if known is not None:
            return known
        if pg is None:
            resolve = getattr(dist.distributed_c10d, "_resolve_process_group", None)
            try:
                pg = resolve(name) if resolve is not None else None
            except Exception:  # noqa: BLE001 - an unregistered name
                pg = None
        ranks: Optional[List[int]] = None
        size = 0
        if pg is not None:
            try:
                size = int(pg.size())
                ranks = list(dist.get_process_group_ranks(pg))
            except Exception:  # noqa: BLE001 - a group this rank is not in
                ranks = None
        info = GroupInfo(name, size or (len(ranks) if ranks else 0), ranks)
        with self._lock:
            where = self._mesh_dims.get(name)
            if where is not None:
                info.mesh_shape, info.mesh_dim, info.mesh_dim_name = where
            self._by_name[name] = info
        return info


def _argument_values(func, args, kwargs) -> List[Tuple[str, Any]]:
    """(schema name, value) of every argument given."""
    out = []
    for i, a in enumerate(func._schema.arguments):
        if i < len(args):
            out.append((a.name, args[i]))
        elif a.name in kwargs:
            out.append((a.name, kwargs[a.name]))
    return out


def describe(func, args, kwargs, result, groups: Groups) -> Optional[Dict[str, Any]]:
    """One collective call as a dict: ``op``, ``kind``, the group (name, size, ranks, mesh dim),
    ``bytes_per_rank`` (the larger of what a rank sends and receives), ``dtype``; None when
    ``func`` is no collective."""
    namespace, _, name = func._schema.name.partition("::")
    if namespace not in _NAMESPACES or name not in KINDS:
        return None
    sent = received = 0
    group = None
    first = None
    for arg_name, value in _argument_values(func, args, kwargs):
        if arg_name in ("group_name", "group") and isinstance(value, str) and value:
            group = groups.info(value) if group is None else group
        elif arg_name == "process_group":
            group = groups.info(value)
        elif arg_name.startswith("output") or arg_name == "out":
            received += _nbytes(value)
        else:
            sent += _nbytes(value)
            first = first if first is not None else _first_tensor(value)
    if namespace != "c10d" and not received:  # functional: the result is what arrives
        received = _nbytes(result)
    kind = KINDS[name]
    entry: Dict[str, Any] = {"op": str(func), "kind": kind}
    if group is not None:
        entry.update(group.as_dict())
    entry["bytes_per_rank"] = max(sent, received)
    if first is not None:
        entry["dtype"] = str(first.dtype).replace("torch.", "")
    return entry


def case_fields(c: Dict[str, Any]) -> Dict[str, Any]:
    """The case-format fields of a standalone collective record: a 1-D mesh of its group, the
    tensor it moves as one argument, and the placement change it stands for, so that
    ``tdiag shard report`` ranks it with DTensor's redistributions."""
    size = max(int(c.get("group_size") or 1), 1)
    out: Dict[str, Any] = {"mesh": [size]}
    if c.get("mesh_dim_name"):
        out["mesh_dim_names"] = [c["mesh_dim_name"]]
    change = _AS_REDISTRIBUTION.get(c["kind"])
    dtype = getattr(torch, c.get("dtype", "uint8"), torch.uint8)
    itemsize = dtype.itemsize if isinstance(dtype, torch.dtype) else 1
    numel = max(int(c["bytes_per_rank"]) // max(itemsize, 1), 1)
    if change is None:
        out["args"] = [{"tensor": {"shape": [numel], "dtype": c.get("dtype", "uint8"),
                                   "placements": ["R"]}}]
        return out
    shape = [size, max(numel // size, 1)] if c["kind"] == "all_to_all" else [numel]
    out["args"] = [{"tensor": {"shape": shape, "dtype": c.get("dtype", "uint8"),
                               "placements": [change[0]]}}]
    out["redistributions"] = [{"arg": 0, "mesh_dim": 0, "from": change[0], "to": change[1],
                               "collective": c["kind"], "bytes_per_rank": c["bytes_per_rank"]}]
    return out


class Modules:
    """The module running now (innermost of ModTracker's parents) and forward or backward;
    learns the DeviceMesh of every DTensor parameter of a module the first time it runs."""

    def __init__(self, groups: Groups) -> None:
        self.groups = groups
        self._tracker: Any = None
        self._seen: "weakref.WeakSet[torch.nn.Module]" = weakref.WeakSet()
        try:
            from torch.distributed._tools.mod_tracker import ModTracker
        except ImportError:  # pragma: no cover - PyTorch without ModTracker: no module names
            return
        self._tracker = ModTracker()
        self._tracker.register_user_hooks(pre_fw_hook=self._pre_forward)

    def _pre_forward(self, module: torch.nn.Module, _inputs: Any) -> None:
        if module in self._seen:
            return
        self._seen.add(module)
        meshes = {}
        for p in module.parameters():
            mesh = getattr(p, "device_mesh", None)
            if mesh is not None:
                meshes[id(mesh)] = mesh
        for mesh in meshes.values():
            self.groups.add_mesh(mesh)

    def __enter__(self) -> "Modules":
        if self._tracker is not None:
            self._tracker.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._tracker is not None:
            self._tracker.__exit__(*exc)

    def where(self) -> Tuple[Optional[str], str]:
        """(module path or None at top level, "forward" or "backward")."""
        phase = "backward" if torch._C._current_graph_task_id() != -1 else "forward"
        if self._tracker is None:
            return None, phase
        parents = [p for p in list(self._tracker.parents) if p != "Global"]
        if not parents:
            return None, phase
        return max(parents, key=lambda p: (p.count("."), len(p))), phase


Sink = Callable[[Dict[str, Any], int], None]  # (collective, stack depth to the caller)


class CollectiveMode(TorchDispatchMode):
    """Hands every collective op run under it to ``sink`` (see ``describe``); DTensor ops are
    left to DTensor, whose collectives then come back here."""

    def __init__(self, sink: Sink, groups: Groups) -> None:
        super().__init__()
        self.sink = sink
        self.groups = groups
        try:
            from torch.distributed.tensor import DTensor
            self._dtensor: Any = DTensor
        except ImportError:  # pragma: no cover - PyTorch without DTensor
            self._dtensor = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if self._dtensor is not None and any(issubclass(t, self._dtensor) for t in types):
            return NotImplemented
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        if func.namespace in _NAMESPACES:
            entry = describe(func, args, kwargs, result, self.groups)
            if entry is not None:
                self.sink(entry, 1)
        return result


__all__ = ["KINDS", "CollectiveMode", "Groups", "GroupInfo", "Modules", "case_fields",
           "describe"]
