# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Replica and shard checks of a real job that scale: hashes on the device, one collective per
replica group.

``tensor_hashes`` hashes many tensors at once where they live (GPU or CPU): every tensor's
bytes, in batches of at most ``batch_bytes`` (a large tensor in several pieces), each byte times
a weight that depends on its position in its tensor (two lanes of independent odd 64-bit
weights, sums modulo 2^64), so any change of one element, and any swap of two, changes the
hash; the integer sums are exact, so the order in which the device adds them does not matter.
``compare_replicas`` stacks the hashes of every tensor that is Replicate on a mesh dim and
exchanges them with ONE ``all_gather_into_tensor`` per process group (the mesh's own
``get_group(dim)``: no new groups), then names, on each rank that disagrees with its group's
majority, the tensor, the mesh dim and the ranks it differs from; ``locate`` gathers a diverged
tensor's bytes within its group (one more collective per such tensor, only on a mismatch) for
the first differing element. ``local_shape_findings`` checks local shapes against placements
with no collective at all (torch.chunk pieces of this rank's mesh coordinate).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist

from ._encode import _StridedShard

_K1 = -7046029254386353131  # 0x9E3779B97F4A7C15 as a signed 64-bit integer
_K2 = -4658895280553007687  # 0xBF58476D1CE4E5B9
_K3 = -7723592293110705685  # 0x94D049BB133111EB
_SEEDS = (_K3, 0x2545F4914F6CDD1D)
LANES = 3  # two weighted sums and the byte count


def _weights(index: torch.Tensor, lane: int) -> torch.Tensor:
    w = index * _K1 + _SEEDS[lane]
    w = w ^ (w >> 31)
    w = w * _K2
    w = w ^ (w >> 29)
    return w | 1  # odd: a one-byte change always changes the sum


def _bytes_of(t: torch.Tensor) -> torch.Tensor:
    t = t.detach()
    if t.dtype.is_complex:
        t = torch.view_as_real(t)
    return t.contiguous().reshape(-1).view(torch.uint8)


def tensor_hashes(tensors: Sequence[torch.Tensor], batch_bytes: int = 16 << 20,
                  device: Optional[torch.device] = None) -> torch.Tensor:
    """An ``(len(tensors), LANES)`` int64 tensor of hashes (two sums and the byte count),
    computed on ``device`` (default: the first tensor's)."""
    if device is None:
        device = tensors[0].device if tensors else torch.device("cpu")
    out = torch.zeros(len(tensors), LANES, dtype=torch.int64, device=device)
    pieces: List[Tuple[int, torch.Tensor, int]] = []  # (tensor index, bytes, offset in tensor)
    counts = []
    for i, t in enumerate(tensors):
        data = _bytes_of(t)
        counts.append(data.numel())
        for start in range(0, data.numel(), batch_bytes):
            pieces.append((i, data[start:start + batch_bytes], start))
    if tensors:
        out[:, 2] = torch.tensor(counts, dtype=torch.int64, device=device)
    batch: List[Tuple[int, torch.Tensor, int]] = []
    size = 0
    for piece in pieces + [(-1, torch.empty(0, dtype=torch.uint8), 0)]:
        if piece[0] < 0 or (batch and size + piece[1].numel() > batch_bytes):
            if batch:
                _hash_batch(batch, out, device)
            batch, size = [], 0
        if piece[0] >= 0:
            batch.append(piece)
            size += piece[1].numel()
    return out


def _hash_batch(batch: List[Tuple[int, torch.Tensor, int]], out: torch.Tensor,
                device: torch.device) -> None:
    data = torch.cat([p[1].to(device, non_blocking=True) for p in batch]).to(torch.int64)
    lengths = torch.tensor([p[1].numel() for p in batch], dtype=torch.int64, device=device)
    starts = torch.cumsum(lengths, 0) - lengths
    owner = torch.tensor([p[0] for p in batch], dtype=torch.int64, device=device)
    offsets = torch.tensor([p[2] for p in batch], dtype=torch.int64, device=device)
    total = data.numel()
    # Each byte's position in its own tensor: its position in the batch, less its piece's start,
    # plus the piece's offset in the tensor.
    index = (torch.arange(total, dtype=torch.int64, device=device)
             - torch.repeat_interleave(starts - offsets, lengths, output_size=total))
    ends = starts + lengths - 1  # pieces are never empty
    for lane in range(2):
        # Each piece's sum as a difference of a running sum (exact modulo 2^64, in any order),
        # then one add per piece: no atomics on the few output rows.
        running = torch.cumsum(data * _weights(index, lane), 0)
        before = torch.where(starts > 0, running[(starts - 1).clamp(min=0)], 0)
        out[:, lane].index_add_(0, owner, running[ends] - before)


def _group_device(group: Any) -> torch.device:
    try:
        backend = str(dist.get_backend(group)).lower()
    except Exception:  # noqa: BLE001 - a fake or custom group
        backend = ""
    if "nccl" in backend and torch.cuda.is_available():
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


class Exchange:
    """The collectives a check issued: ``collectives`` (count), ``groups`` (names)."""

    def __init__(self) -> None:
        self.collectives = 0
        self.groups: List[str] = []


def _dim_label(mesh: Any, dim: int) -> str:
    names = mesh.mesh_dim_names
    return f"mesh dim {dim} ({names[dim]})" if names else f"mesh dim {dim}"


def compare_replicas(named: Sequence[Tuple[str, Any]], locate: int = 1,
                     exchange: Optional[Exchange] = None) -> List[Dict[str, Any]]:
    """Findings (dicts) of this rank for the DTensors ``named`` (name, DTensor) of a real job:
    one per (tensor, Replicate mesh dim) where this rank's local tensor differs from its
    group's majority. Collective: every rank of the job calls it with the same tensors."""
    exchange = exchange if exchange is not None else Exchange()
    me = dist.get_rank()
    by_group: Dict[str, Tuple[Any, Any, int, List[int]]] = {}  # name -> (group, mesh, dim, rows)
    rows: List[torch.Tensor] = []
    names: List[str] = []
    for name, t in named:
        mesh = t.device_mesh
        replicated = [d for d, p in enumerate(t.placements) if p.is_replicate()
                      and mesh.size(d) > 1]
        if not replicated or mesh.get_coordinate() is None:
            continue
        row = len(rows)
        rows.append(t.to_local())
        names.append(name)
        for d in replicated:
            group = mesh.get_group(d)
            entry = by_group.setdefault(group.group_name, (group, mesh, d, []))
            entry[3].append(row)
    if not rows:
        return []
    hashes = tensor_hashes(rows)
    findings: List[Dict[str, Any]] = []
    for group_name in sorted(by_group):
        group, mesh, dim, members = by_group[group_name]
        device = _group_device(group)
        mine = hashes[members].to(device).reshape(-1).contiguous()
        size = dist.get_world_size(group)
        every = torch.empty(size * mine.numel(), dtype=torch.int64, device=device)
        dist.all_gather_into_tensor(every, mine, group=group)
        exchange.collectives += 1
        exchange.groups.append(group_name)
        table = every.reshape(size, len(members), LANES).cpu().tolist()
        ranks = dist.get_process_group_ranks(group)
        my_index = ranks.index(me)
        located = 0
        for k, row in enumerate(members):
            values = [tuple(table[r][k]) for r in range(size)]
            if len(set(values)) == 1:
                continue
            classes: Dict[Tuple[int, ...], List[int]] = {}
            for r, v in enumerate(values):
                classes.setdefault(v, []).append(r)
            majority = max(classes.values(), key=lambda rs: (len(rs), -rs[0]))
            detail = None
            if located < locate:  # every rank of the group saw the same table: all join
                located += 1
                detail = _first_difference(rows[row], group, size, majority, exchange)
            if my_index in majority:
                continue
            finding: Dict[str, Any] = {
                "tensor": names[row], "rank": me, "mesh_dim": dim,
                "mesh_dim_label": _dim_label(mesh, dim),
                "agreeing_ranks": [ranks[r] for r in majority],
                "group_ranks": ranks}
            if values[my_index][2] != values[majority[0]][2]:
                finding["bytes"] = [values[my_index][2], values[majority[0]][2]]
            if detail is not None:
                finding.update(detail)
            findings.append(finding)
    return findings


def _first_difference(local: torch.Tensor, group: Any, size: int, majority: List[int],
                      exchange: Exchange) -> Optional[Dict[str, Any]]:
    """This rank's first element that differs from the majority's copy (one all_gather of the
    tensor within the group); None when the ranks' sizes differ."""
    device = _group_device(group)
    data = local.detach().contiguous()
    flat_mine = data.reshape(-1).to(device)
    n = flat_mine.numel()
    every = torch.empty(size * n, dtype=data.dtype, device=device)  # 1-D: gloo wants concat
    try:
        dist.all_gather_into_tensor(every, flat_mine, group=group)
    except Exception:  # noqa: BLE001 - different local sizes: the byte counts already tell
        return None
    exchange.collectives += 1
    reference = every[majority[0] * n:(majority[0] + 1) * n]
    a = flat_mine.view(torch.uint8).reshape(flat_mine.numel(), -1) if flat_mine.numel() else None
    b = reference.view(torch.uint8).reshape(reference.numel(), -1) if reference.numel() else None
    if a is None or b is None:
        return None
    differs = (a != b).any(dim=1).nonzero()
    if differs.numel() == 0:
        return {}
    flat = int(differs[0, 0])
    index = list(torch.unravel_index(torch.tensor(flat), tuple(data.shape))) if data.dim() else []
    return {"flat_index": flat, "index": [int(i) for i in index],
            "value": flat_mine[flat].item(), "expected": reference[flat].item()}


def expected_local_shape(shape: Sequence[int], placements: Sequence[Any], mesh_shape:
                         Sequence[int], coordinate: Sequence[int]) -> Optional[List[int]]:
    """The local shape under ``placements`` at ``coordinate``: torch.chunk pieces, mesh dims in
    order (None for a placement this check does not model, such as a strided shard)."""
    local = list(shape)
    for m, p in enumerate(placements):
        if not p.is_shard():
            continue
        if isinstance(p, _StridedShard):
            return None  # its pieces interleave
        d = p.dim if p.dim >= 0 else p.dim + len(local)
        parts = mesh_shape[m]
        chunk = -(-local[d] // parts) if local[d] else 0
        local[d] = max(0, min(chunk, local[d] - coordinate[m] * chunk))
    return local


def local_shape_findings(named: Sequence[Tuple[str, Any]]) -> List[Dict[str, Any]]:
    """This rank's local shapes that differ from what the placements give (no collective)."""
    findings = []
    for name, t in named:
        coordinate = t.device_mesh.get_coordinate()
        if coordinate is None:
            continue
        want = expected_local_shape(list(t.shape), t.placements, list(t.device_mesh.shape),
                                    coordinate)
        have = list(t.to_local().shape)
        if want is not None and want != have:
            findings.append({"tensor": name, "rank": dist.get_rank(), "coordinate": coordinate,
                             "expected": want, "actual": have})
    return findings


__all__ = ["LANES", "Exchange", "tensor_hashes", "compare_replicas", "expected_local_shape",
           "local_shape_findings"]
