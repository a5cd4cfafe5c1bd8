# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""PyTorch objects in the case format (../shared/README.md, docs/dtensor.md): placements as
``R``/``S(d)``/``P(op)``, arguments by kind, outputs, collective names."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.distributed.tensor import DTensor
from torch.utils import _pytree as pytree

from .._core import core

try:  # PyTorch's strided shard (FSDP2 + TP); the case format has no spelling for it
    from torch.distributed.tensor.placement_types import _StridedShard
except ImportError:  # pragma: no cover - older PyTorch
    _StridedShard = ()


def placement(p) -> str:
    if isinstance(p, _StridedShard):
        return f"_S({p.dim},{p.split_factor})"
    if p.is_shard():
        return f"S({p.dim})"
    if p.is_partial():
        return f"P({p.reduce_op})"
    if p.is_replicate():
        return "R"
    return str(p)


def dtype(d: torch.dtype) -> str:
    return str(d).replace("torch.", "")


def collective(src, dst) -> str:
    """The collective PyTorch runs for one mesh-dim transform (``none``: a local chunk), as
    tensordiag's redistribution planner maps it (a strided shard moves as a shard)."""
    def kind(p) -> str:
        return f"S({p.dim})" if isinstance(p, _StridedShard) else placement(p)

    return core.transition_collective(kind(src), kind(dst))


def local_numel(logical_shape, p, parts: int) -> int:
    """Elements of the largest local piece of ``logical_shape`` under placement ``p``."""
    n = 1
    for i, size in enumerate(logical_shape):
        if (p.is_shard() or isinstance(p, _StridedShard)) and i == p.dim:
            size = -(-size // parts)  # torch.chunk: the first pieces are the largest
        n *= size
    return n


def positional(func, args, kwargs) -> List[Any]:
    """The call's arguments in schema order (kwargs placed, gaps filled with defaults)."""
    if not kwargs:
        return list(args)
    out = list(args)
    arguments = func._schema.arguments
    last = max((i for i, a in enumerate(arguments) if a.name in kwargs), default=-1)
    for i in range(len(args), last + 1):
        a = arguments[i]
        if a.name in kwargs:
            out.append(kwargs[a.name])
        else:
            out.append(a.default_value if a.has_default_value() else None)
    return out


def _leaf_key(v) -> Any:
    if isinstance(v, DTensor):
        return (tuple(v.shape), v.dtype, tuple(v.placements), id(v.device_mesh))
    if isinstance(v, torch.Tensor):
        return ("tensor", tuple(v.shape), v.dtype)
    if isinstance(v, (list, tuple)):
        return tuple(_leaf_key(x) for x in v)
    try:
        hash(v)
        return v
    except TypeError:
        return repr(v)


def key(flat_args: List[Any]) -> Tuple:
    """What makes two calls the same record (placements, shapes, dtypes, values)."""
    return tuple(_leaf_key(a) for a in flat_args)


class Positions:
    """Where each DTensor argument sits (argument index, list item), found from the local tensor
    DTensor redistributes or, failing that, from its spec."""

    __slots__ = ("by_local", "specs")

    def __init__(self, flat_args: List[Any]) -> None:
        self.by_local: Dict[int, Tuple[int, Optional[int]]] = {}
        self.specs: List[Tuple[Any, Tuple[int, Optional[int]]]] = []
        for i, a in enumerate(flat_args):
            for k, x in enumerate(a) if isinstance(a, (list, tuple)) else [(None, a)]:
                if isinstance(x, DTensor):
                    self.by_local.setdefault(id(x._local_tensor), (i, k))
                    self.specs.append((x._spec, (i, k)))

    def find(self, local_tensor, spec) -> Tuple[int, Optional[int]]:
        where = self.by_local.get(id(local_tensor))
        if where is not None:
            return where
        for known, where in self.specs:
            if known == spec:
                return where
        return self.specs[0][1] if self.specs else (0, None)


def tensor(t) -> Dict[str, Any]:
    return {"shape": list(t.shape), "dtype": dtype(t.dtype),
            "placements": [placement(p) for p in t.placements]}


def arg(v) -> Dict[str, Any]:
    """One argument by kind: tensor, tensors, int, ints, float, bool, none, str."""
    if isinstance(v, DTensor):
        return {"tensor": tensor(v)}
    if isinstance(v, torch.Tensor):  # a plain tensor beside DTensors: not a case-format kind
        return {"str": f"torch.Tensor(shape={list(v.shape)}, dtype={dtype(v.dtype)})"}
    if isinstance(v, bool):
        return {"bool": v}
    if isinstance(v, int):
        return {"int": v}
    if isinstance(v, float):
        return {"float": v}
    if v is None:
        return {"none": None}
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, DTensor) for x in v):
            return {"tensors": [tensor(x) for x in v]}
        if all(isinstance(x, (int, torch.SymInt)) and not isinstance(x, bool) for x in v):
            return {"ints": [int(x) for x in v]}
    if isinstance(v, torch.dtype):
        return {"str": dtype(v)}
    return {"str": str(v)}


def outputs(result) -> List[Dict[str, Any]]:
    """Every DTensor output (tuple outputs in order) with its global shape and placements."""
    out = []
    for leaf in pytree.tree_leaves(result) if not isinstance(result, DTensor) else [result]:
        if isinstance(leaf, DTensor):
            out.append({"shape": list(leaf.shape),
                        "placements": [placement(p) for p in leaf.placements]})
    return out


def comms(redistributions: List[Dict[str, Any]]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for r in redistributions:
        if r["collective"] != "none":
            counts[r["collective"]] = counts.get(r["collective"], 0) + 1
    return counts


def first_mesh(flat_args: List[Any]):
    for a in flat_args:
        if isinstance(a, DTensor):
            return a.device_mesh
        if isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, DTensor):
                    return x.device_mesh
    return None


def mesh(m) -> Dict[str, Any]:
    if m is None:
        return {"mesh": []}
    out: Dict[str, Any] = {"mesh": list(m.shape)}
    if m.mesh_dim_names:
        out["mesh_dim_names"] = list(m.mesh_dim_names)
    return out
