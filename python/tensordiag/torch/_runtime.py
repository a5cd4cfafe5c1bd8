# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Runtime checks of DTensors on real ranks, by dtensor_checks' runtime checks (the C++ library
hashes, compares, and words the findings).

Two ways to run them, chosen from the local tensor:
- under ``LocalTensorMode`` (every rank simulated in one process), each rank's values are handed
  to the library, which runs every rank's check in its own thread;
- in a real job, every rank calls the check collectively; its collectives run on the job's
  process group through ``torch.distributed`` (``TorchCommunicator``).
Local data are copied to the host and hashed there (the Python module has no GPU code).
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, Tuple

import torch
import torch.distributed as dist
from torch.distributed.tensor import DTensor

from .._core import core
from ..report import Report, from_json, merge
from . import _encode
from ._explain import ours_mesh, ours_spec

try:
    from torch.distributed._local_tensor import LocalTensor
except ImportError:  # pragma: no cover - PyTorch without LocalTensorMode
    LocalTensor = ()

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "int64": torch.int64,
                 "int32": torch.int32, "uint8": torch.uint8}
_OPS = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}


class TorchCommunicator:
    """The library's communicator over a ``torch.distributed`` group: ``ranks`` are the global
    ranks in this group's rank order. Buffers travel as bytes (CPU tensors for gloo, CUDA
    tensors for NCCL)."""

    def __init__(self, group, ranks: List[int]) -> None:
        self.group = group
        self.ranks = ranks
        self.device = "cuda" if dist.get_backend(group) == "nccl" else "cpu"
        self.torch_order = dist.get_process_group_ranks(group)

    def _tensor(self, data: bytes, dtype: str = "uint8") -> torch.Tensor:
        t = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        return t.view(_TORCH_DTYPES[dtype]).to(self.device) if data else t.to(self.device)

    @staticmethod
    def _bytes(t: torch.Tensor) -> bytes:
        return t.contiguous().cpu().view(torch.uint8).numpy().tobytes()

    def all_gather(self, data: bytes, dtype: str) -> bytes:
        mine = self._tensor(data)
        pieces = [torch.empty_like(mine) for _ in self.torch_order]
        dist.all_gather(pieces, mine, group=self.group)
        by_rank = dict(zip(self.torch_order, pieces))
        return b"".join(self._bytes(by_rank[r]) for r in self.ranks)

    def all_reduce(self, data: bytes, dtype: str, op: str) -> bytes:
        t = self._tensor(data, dtype)
        dist.all_reduce(t, op=_OPS.get(op, dist.ReduceOp.SUM), group=self.group)
        if op == "avg":
            t = t / len(self.ranks)
        return self._bytes(t)

    def reduce_scatter(self, data: bytes, dtype: str, op: str) -> bytes:
        whole = self.all_reduce(data, dtype, op)
        block = len(whole) // len(self.ranks)
        mine = self.ranks.index(dist.get_rank())
        return whole[mine * block:(mine + 1) * block]

    def all_to_all(self, data: bytes, dtype: str) -> bytes:
        everything = self.all_gather(data, dtype)
        n = len(self.ranks)
        block = len(data) // n
        mine = self.ranks.index(dist.get_rank())
        return b"".join(everything[s * len(data) + mine * block:s * len(data) + (mine + 1) * block]
                        for s in range(n))

    def broadcast(self, data: bytes, dtype: str, root: int) -> bytes:
        t = self._tensor(data)
        dist.broadcast(t, src=self.ranks[root], group=self.group)
        return self._bytes(t)

    def barrier(self) -> None:
        dist.barrier(group=self.group)

    def split(self, color: int, key: int) -> Tuple["TorchCommunicator", int, int]:
        me = dist.get_rank()
        infos: List[Any] = [None] * len(self.torch_order)
        dist.all_gather_object(infos, (color, key, self.ranks.index(me), me), group=self.group)
        mine = None
        for c in sorted({info[0] for info in infos}):  # every rank creates every group, in order
            members = sorted((k, index, g) for cc, k, index, g in infos if cc == c)
            ranks = [g for _, _, g in members]
            group = dist.new_group(ranks)
            if c == color:
                mine = (TorchCommunicator(group, ranks), ranks.index(me), len(ranks))
        assert mine is not None  # this rank's color is among the colors gathered
        return mine


def _named(obj) -> List[Tuple[str, DTensor]]:
    if isinstance(obj, DTensor):
        return [("tensor", obj)]
    if isinstance(obj, torch.nn.Module):
        named = list(obj.named_parameters()) + list(obj.named_buffers())
    elif isinstance(obj, dict):
        named = list(obj.items())
    else:
        named = [(f"tensor[{i}]", t) for i, t in enumerate(obj)]
    return [(name, t) for name, t in named if isinstance(t, DTensor)]


def _host(t: torch.Tensor):
    t = t.detach()
    return t.contiguous().cpu().view(torch.uint8).numpy() if t.numel() else t.cpu().numpy()


def _check_one(name: str, t: DTensor, group, replicas: bool, shapes: bool,
               nonfinite: bool) -> Report:
    from torch.utils._python_dispatch import _disable_current_modes
    local = t._local_tensor
    dtype = _encode.dtype(t.dtype)
    ranks = t.device_mesh.mesh.flatten().tolist()
    with _disable_current_modes():
        if isinstance(local, LocalTensor):
            values = [local._local_tensors[r] for r in ranks]
            return core.check_simulated([_host(v) for v in values], [list(v.shape) for v in values],
                                        dtype, ours_spec(t), ours_mesh(t.device_mesh), name,
                                        replicas, shapes, nonfinite)
        if group is None:
            if len(ranks) != dist.get_world_size():
                raise ValueError(f"check of {name}: its mesh holds {len(ranks)} of the job's "
                                 f"{dist.get_world_size()} ranks; pass group= (a process group "
                                 "of exactly the mesh's ranks)")
            group = dist.group.WORLD
        world = TorchCommunicator(group, ranks)
        return core.check_with(world, ranks.index(dist.get_rank()), len(ranks), _host(local),
                               list(local.shape), dtype, ours_spec(t), ours_mesh(t.device_mesh),
                               name, replicas, shapes, nonfinite)


def _everyone(report: Report, group) -> Report:
    """Every rank's report merged, on every rank (a real job); the report itself otherwise."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size(group) == 1:
        return report
    texts: List[Optional[str]] = [None] * dist.get_world_size(group)
    dist.all_gather_object(texts, report.to_json(), group=group)
    return merge(from_json(str(text), f"rank {i}") for i, text in enumerate(texts))


def _run(targets: Iterable[Tuple[str, DTensor]], group, replicas: bool, shapes: bool,
         nonfinite: bool) -> Report:
    reports = []
    simulated = True
    for name, t in targets:
        simulated = simulated and isinstance(t._local_tensor, LocalTensor)
        reports.append(_check_one(name, t, group, replicas, shapes, nonfinite))
    merged = merge(reports)
    return merged if simulated else _everyone(merged, group)


def check_replicas(module_or_tensors, group=None, *, nonfinite: bool = False) -> Report:
    """Checks that every Replicate mesh dim of every DTensor (a module's parameters and buffers,
    a dict or list of DTensors, or one DTensor) holds the same data on every rank: the library
    hashes each local shard, compares the digests across the replica group and, on a mismatch,
    names the tensor, the mesh coordinate, the ranks that differ and the first differing
    element. Collective in a real job (every rank calls it; every rank gets the job's report);
    under LocalTensorMode it checks every simulated rank. Returns a Report (``has_errors``)."""
    return _run(_named(module_or_tensors), group, True, False, nonfinite)


def check_shards(dtensor_or_tensors, group=None) -> Report:
    """Checks each rank's local shard shape (uneven torch.chunk pieces included) against the
    placements of one DTensor (or a module's, a dict's or a list's), as the library's shape
    check words it. Collective in a real job, like ``check_replicas``."""
    return _run(_named(dtensor_or_tensors), group, False, True, False)


__all__ = ["check_replicas", "check_shards", "TorchCommunicator"]
