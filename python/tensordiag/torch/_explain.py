# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A DTensor error from PyTorch, re-raised with tensordiag's explanation of the same call.

The explanation is ``tensordiag.dtensor.propagate`` on the call as PyTorch saw it (op, global
shapes, dtypes, placements, mesh): our library names the argument, the mesh dim, why and the
fix, with its stable code. What our propagation cannot take (arguments on two meshes, a plain
tensor beside DTensors) is said from the call itself. The new exception is an instance of both
``tensordiag.ShardingError`` and PyTorch's exception type, so ``except RuntimeError`` in user
code still catches it; PyTorch's exception is chained (``__cause__``).
"""

from __future__ import annotations

import functools
from typing import Any, List

import torch
from torch.distributed.tensor import DTensor

from .. import dtensor as _dt
from ..errors import Error, ShardingError
from . import _encode


def _placement(p):
    if p.is_shard():
        return _dt.Shard(p.dim)
    if p.is_partial():
        return _dt.Partial(p.reduce_op)
    return _dt.Replicate()


def ours_spec(t: DTensor):
    """tensordiag's TensorSpec for a DTensor (global shape, placements, dtype)."""
    return _dt.TensorSpec(list(t.shape), [_placement(p) for p in t.placements],
                          _encode.dtype(t.dtype))


def ours_mesh(m):
    """tensordiag's DeviceMesh for a torch DeviceMesh (shape and dim names)."""
    return _dt.DeviceMesh(list(m.shape), list(m.mesh_dim_names) if m.mesh_dim_names else None)


def _ours(a: Any) -> Any:
    if isinstance(a, DTensor):
        return ours_spec(a)
    if isinstance(a, (list, tuple)):
        if a and all(isinstance(x, DTensor) for x in a):
            return [ours_spec(x) for x in a]
        if all(isinstance(x, (int, torch.SymInt)) and not isinstance(x, bool) for x in a):
            return [int(x) for x in a]
    if isinstance(a, (bool, int, float)) or a is None:
        return a
    return None  # dtype, layout, device, memory format: no bearing on placements


def _meshes(flat_args: List[Any]) -> List[Any]:
    meshes: List[Any] = []
    for a in flat_args:
        for x in a if isinstance(a, (list, tuple)) else [a]:
            if isinstance(x, DTensor) and all(x.device_mesh is not m for m in meshes):
                meshes.append(x.device_mesh)
    return meshes


def _describe_mesh(m) -> str:
    names = f" {list(m.mesh_dim_names)}" if m.mesh_dim_names else ""
    return f"{tuple(m.shape)}{names} of ranks {m.mesh.flatten().tolist()}"


def _explanation(op: str, flat_args: List[Any]):
    """(text, report, error class) of tensordiag's view of the call."""
    meshes = _meshes(flat_args)
    if len(meshes) > 1:
        where = "; ".join(
            f"argument {i} on mesh {_describe_mesh(a.device_mesh)}"
            for i, a in enumerate(flat_args) if isinstance(a, DTensor))
        return (f"{op}: the DTensor arguments live on different device meshes ({where}); an op "
                "runs on one mesh. Fix: create both with the same DeviceMesh, or move one "
                "with distribute_tensor(t.full_tensor(), mesh, placements)", None, "user_error")
    plain = [i for i, a in enumerate(flat_args)
             if isinstance(a, torch.Tensor) and not isinstance(a, DTensor) and a.dim() > 0]
    if plain:
        return (f"{op}: argument {plain[0]} is a plain torch.Tensor beside DTensor arguments; "
                "DTensor does not guess its placement. Fix: make it a DTensor first "
                "(distribute_tensor(t, mesh, [Replicate()]) or DTensor.from_local(t, mesh, "
                "placements))", None, "user_error")
    try:
        result = _dt.propagate(op, [_ours(a) for a in flat_args], ours_mesh(meshes[0]))
    except ShardingError as e:
        return str(e), e.report, e.error_class
    except Error as e:
        return f"tensordiag could not model the call: {e}", e.report, "unknown_op"
    return ("tensordiag finds no sharding problem in this call (its propagation accepts these "
            f"shapes and placements, {result.reason}); PyTorch's "
            "error is about something else (a dtype, a value, an argument), or a transform "
            "PyTorch declines although it is possible in principle", None, "unknown")


@functools.lru_cache(maxsize=None)
def _both(pytorch_type: type) -> type:
    """A subclass of ShardingError and PyTorch's exception type (ShardingError when the two
    cannot be combined)."""
    if issubclass(pytorch_type, ShardingError):
        return pytorch_type
    try:
        return type(pytorch_type.__name__, (ShardingError, pytorch_type),
                    {"__module__": "tensordiag.torch", "__doc__": ShardingError.__doc__})
    except TypeError:
        return ShardingError


def explained(func, flat_args: List[Any], error: BaseException) -> BaseException:
    """The exception to raise instead of ``error`` (chain it with ``from error``)."""
    op = str(func)
    try:
        text, report, error_class = _explanation(op, flat_args)
    except Exception as failure:  # our explanation must never hide PyTorch's error
        text = f"(tensordiag could not explain it: {type(failure).__name__}: {failure})"
        report, error_class = None, "unknown_op"
    pytorch = str(error).strip().splitlines()
    first = pytorch[0] if pytorch else type(error).__name__
    code = None
    if report is not None and len(report) > 0:
        code = report.diagnostics[0].code
    message = (f"{op}: PyTorch raised {type(error).__name__}: {first}\n"
               f"tensordiag{f' [{code}]' if code else ''}: {text}")
    cls = _both(type(error))  # type: ignore[arg-type]  # exception classes are hashable
    try:
        new = cls(message, report, error_class)
    except TypeError:
        new = ShardingError(message, report, error_class)
    new.pytorch_error = error
    new.op = op
    return new


def is_explained(error: BaseException) -> bool:
    return isinstance(error, ShardingError) and hasattr(error, "pytorch_error")


__all__ = ["explained", "is_explained"]
