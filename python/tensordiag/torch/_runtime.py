# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Runtime checks of DTensors on real ranks, by dtensor_checks' runtime checks (the C++ library
hashes, compares, and words the findings).

Two ways to run them, chosen from the local tensor:
- under ``LocalTensorMode`` (every rank simulated in one process), each rank's values are handed
  to the library, which runs every rank's check in its own thread;
- in a real job (``_hashcheck``), every rank hashes all its local tensors where they live (on
  the GPU), stacks the hashes and exchanges them with one all-gather per replica group (the
  DeviceMesh's own ``get_group(dim)``; no group is created); local shapes are checked against
  the placements with no collective; one ``all_gather_object`` on ``group`` (default: the whole
  job) then gives every rank the job's findings.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Tuple

import torch
from torch.distributed.tensor import DTensor

from .._core import core
from ..report import Report, merge
from . import _encode
from ._explain import ours_mesh, ours_spec

try:
    from torch.distributed._local_tensor import LocalTensor
except ImportError:  # pragma: no cover - PyTorch without LocalTensorMode
    LocalTensor = ()

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
    """One DTensor under LocalTensorMode: every simulated rank's values to the library."""
    from torch.utils._python_dispatch import _disable_current_modes
    local = t._local_tensor
    ranks = t.device_mesh.mesh.flatten().tolist()
    with _disable_current_modes():
        values = [local._local_tensors[r] for r in ranks]
        return core.check_simulated([_host(v) for v in values], [list(v.shape) for v in values],
                                    _encode.dtype(t.dtype), ours_spec(t),
                                    ours_mesh(t.device_mesh), name, replicas, shapes, nonfinite)


def _run(targets: Iterable[Tuple[str, DTensor]], group, replicas: bool, shapes: bool,
         nonfinite: bool, locate: int = 1) -> Report:
    targets = list(targets)
    if targets and all(isinstance(t._local_tensor, LocalTensor) for _, t in targets):
        return merge([_check_one(name, t, group, replicas, shapes, nonfinite)
                      for name, t in targets])
    from torch.utils._python_dispatch import _disable_current_modes
    from . import _hashcheck
    from ._findings import findings_report, gather_findings, nonfinite_findings
    with _disable_current_modes():
        findings: List[Dict[str, Any]] = []
        if replicas:
            findings += [dict(f, kind="replica") for f in
                         _hashcheck.compare_replicas(targets, locate=locate)]
        if shapes:
            findings += [dict(f, kind="shape") for f in
                         _hashcheck.local_shape_findings(targets)]
        if nonfinite:
            findings += nonfinite_findings(targets)
        return findings_report(gather_findings(findings, group))


def check_replicas(module_or_tensors, group=None, *, nonfinite: bool = False,
                   locate: int = 1) -> Report:
    """Checks that every Replicate mesh dim of every DTensor (a module's parameters and buffers,
    a dict or list of DTensors, or one DTensor) holds the same data on every rank, and names
    the tensor, the mesh dim, the rank that differs and the ranks it differs from.

    In a real job every rank calls it: all local tensors are hashed on their device, and the
    hashes of one step go out in ONE all-gather per replica group (the mesh's own groups);
    for the first ``locate`` diverged tensors of a group, one more all-gather of the tensor
    within the group finds the first differing element. Every rank gets the job's report
    (one ``all_gather_object`` on ``group``, default the whole job). Under LocalTensorMode it
    checks every simulated rank. Returns a Report (``has_errors``)."""
    return _run(_named(module_or_tensors), group, True, False, nonfinite, locate)


def check_shards(dtensor_or_tensors, group=None) -> Report:
    """Checks each rank's local shard shape (uneven torch.chunk pieces included) against the
    placements of one DTensor (or a module's, a dict's or a list's). In a real job each rank
    checks its own shapes (no collective) and every rank gets the job's report, as with
    ``check_replicas``."""
    return _run(_named(dtensor_or_tensors), group, False, True, False)


__all__ = ["check_replicas", "check_shards"]
