# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""DTensor sharding: placements, meshes, specs, propagation, corpus checks and explanations.

Placements print and compare like PyTorch's::

    >>> from tensordiag.dtensor import Shard, Replicate, Partial
    >>> Shard(0), Replicate(), Partial("max")
    (Shard(dim=0), Replicate(), Partial(max))
    >>> Shard(dim=1) == Shard(1), Shard(0) == Replicate()
    (True, False)
"""

from __future__ import annotations

from typing import Any, Sequence, Union

from ._core import core
from .errors import ShardingError

Placement = core.Placement
DeviceMesh = core.DeviceMesh
TensorSpec = core.TensorSpec
Propagation = core.Propagation
RedistributionPlan = core.RedistributionPlan
RedistributeStep = core.RedistributeStep
CaseAnswer = core.CaseAnswer
CaseCheck = core.CaseCheck
CommReport = core.CommReport
CommLine = core.CommLine
CommModule = core.CommModule
CommCause = core.CommCause
PlacementFix = core.PlacementFix
RecordedRedistribution = core.RecordedRedistribution
#: A placement, or its text as PyTorch or tdiag writes it (``"S(0)"``, ``"R"``, ``"P(max)"``).
PlacementLike = Union[Placement, str]
#: A mesh: a DeviceMesh, its shape, or its text (``"2,4"``).
MeshLike = Union[DeviceMesh, Sequence[int], str]
#: An argument of an op call: tensors (TensorSpec) and the op's other arguments.
Arg = Union[TensorSpec, Sequence[TensorSpec], int, Sequence[int], float, bool, None, str]


class Shard(Placement):
    """``Shard(dim)``: each rank of a mesh dim holds a ``torch.chunk`` piece of tensor dim ``dim``."""

    def __init__(self, dim: int) -> None:
        super().__init__("shard", dim)


class Replicate(Placement):
    """``Replicate()``: every rank of the mesh dim holds the whole tensor."""

    def __init__(self) -> None:
        super().__init__("replicate")


class Partial(Placement):
    """``Partial(reduce_op)``: a pending reduction (``sum``, ``avg``, ``max``, ``min``)."""

    def __init__(self, reduce_op: str = "sum", _masked: bool = False) -> None:
        super().__init__("partial", 0, reduce_op, _masked)


def _mesh(mesh) -> DeviceMesh:
    if isinstance(mesh, DeviceMesh):
        return mesh
    if isinstance(mesh, str):
        return DeviceMesh.parse(mesh)
    return DeviceMesh(list(mesh))


def propagate(op: str, args: Sequence[Any], mesh) -> Propagation:
    """Propagates one call as PyTorch 2.11's DTensor dispatcher does.

    ``op`` is the aten overload (``"aten.mm.default"``; short names such as ``"mm"`` resolve as
    in ``tdiag shard explain``); ``args`` the positional arguments in the case format
    (TensorSpecs, lists of TensorSpecs, ints, lists of ints, floats, bools, None); ``mesh`` a
    DeviceMesh or its shape. Returns the output specs, the redistribution plans with their
    collectives and bytes, and the collective counts. Raises ShardingError (``.report``,
    ``.code``, ``.error_class``) when PyTorch would reject the call.
    """
    return core.propagate(op, list(args), _mesh(mesh))


def explain(op: str, args: Sequence[Any], mesh, all: bool = False, format: str = "text") -> str:
    """The explanation ``tdiag shard explain`` prints (``format`` "text" or "json").

    Raises ShardingError for a rejected call, as ``tdiag shard explain`` reports it.
    """
    if format not in ("text", "json"):
        raise ValueError(f"format must be 'text' or 'json', not {format!r}")
    result = propagate(op, args, mesh)
    return result.explain(all) if format == "text" else result.to_json() + "\n"


def check_cases(path) -> CaseCheck:
    """Answers every case of a JSONL corpus, as ``tdiag shard check`` (``to_jsonl()`` is its
    output; ``report(source)`` its report formats). Raises InputError for an unreadable file."""
    return core.check_cases(str(path))


def check_cases_text(text: str) -> CaseCheck:
    """check_cases() over JSONL text instead of a file."""
    return core.check_cases_text(text)


def report(path) -> CommReport:
    """Where a recorded DTensor program communicates and why, as ``tdiag shard report``.

    ``path`` is a recording (``tensordiag.torch.record_dtensor``'s JSONL case file). The result
    holds ``lines`` (user source lines ranked by redistributed bytes, each with the ``causes``:
    op, argument, placements, collectives and the ``fix`` propagation knows), ``modules`` (each
    module and phase ranked by the bytes of the collectives it issued: ``module``, ``phase``,
    ``bytes``, ``count``, ``collectives``, ``ops``, ``lines``; empty for a recording without
    modules), ``findings`` (disagreements with PyTorch), ``not_covered`` ops, ``.report`` (a
    tensordiag.report.Report), ``to_text(top)``, ``modules_text(top)`` and ``to_json(top)``.
    Raises InputError naming file:line for a malformed recording.
    """
    return core.shard_report(str(path))


def report_text(text: str, source: str = "<recording>") -> CommReport:
    """report() over JSONL text instead of a file; ``source`` names it in the report and in
    errors."""
    return core.shard_report_text(text, source)


__all__ = [
    "Placement", "Shard", "Replicate", "Partial", "DeviceMesh", "TensorSpec", "Propagation",
    "RedistributionPlan", "RedistributeStep", "CaseAnswer", "CaseCheck", "ShardingError",
    "CommReport", "CommLine", "CommModule", "CommCause", "PlacementFix", "RecordedRedistribution",
    "propagate", "explain", "check_cases", "check_cases_text", "report",
    "report_text",
]
