# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The runtime checks' findings of a real job: non-finite counts on the device, one exchange
of every rank's findings, and the tensordiag report (``tensordiag.report/v1``) they make,
worded as the library's runtime checks word them (TDIAG-DT-201/202/203)."""

from __future__ import annotations

import json
import os
import socket
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.distributed as dist


def nonfinite_findings(named: Sequence[Tuple[str, Any]]) -> List[Dict[str, Any]]:
    """This rank's floating tensors holding NaN or Inf (counted on the device, one copy back)."""
    floating = [(n, t.to_local()) for n, t in named if t.dtype.is_floating_point]
    if not floating:
        return []
    counts = torch.stack([(~torch.isfinite(x.detach())).sum() for _, x in floating]).tolist()
    me = dist.get_rank() if dist.is_initialized() else 0
    return [{"kind": "nonfinite", "tensor": n, "rank": me, "count": int(c)}
            for (n, _), c in zip(floating, counts) if c]


def gather_findings(findings: List[Dict[str, Any]], group: Any = None) -> List[Dict[str, Any]]:
    """Every rank's findings, on every rank (one ``all_gather_object`` on ``group``)."""
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size(group) == 1:
        return findings
    every: List[Optional[List[Dict[str, Any]]]] = [None] * dist.get_world_size(group)
    dist.all_gather_object(every, findings, group=group)
    out: List[Dict[str, Any]] = []
    for part in every:
        out.extend(part or [])
    return sorted(out, key=lambda f: (f["kind"], f["tensor"], f["rank"], f.get("mesh_dim", -1)))


def _ranks(ranks: List[int]) -> str:
    return ", ".join(str(r) for r in ranks)


def diagnostic(f: Dict[str, Any]) -> Dict[str, Any]:
    """One finding as a report diagnostic."""
    fields: List[Dict[str, Any]] = [{"name": "tensor", "value": f["tensor"]},
                                    {"name": "rank", "value": f["rank"]}]
    if f["kind"] == "replica":
        message = (f"rank {f['rank']} {f['tensor']} is Replicate on {f['mesh_dim_label']} but "
                   f"differs from ranks {_ranks(f['agreeing_ranks'])}")
        if "bytes" in f:
            message += f": it holds {f['bytes'][0]} bytes, they hold {f['bytes'][1]}"
        elif "flat_index" in f:
            message += (f": first difference at local element {f['index']} (flat "
                        f"{f['flat_index']}): rank {f['rank']} has {f['value']}, ranks "
                        f"{_ranks(f['agreeing_ranks'])} have {f['expected']}")
            fields += [{"name": "index", "value": f["index"]},
                       {"name": "flat_index", "value": f["flat_index"]}]
        fields += [{"name": "mesh_dim", "value": f["mesh_dim"]},
                   {"name": "agreeing_ranks", "value": f["agreeing_ranks"]}]
        return {"severity": "error", "code": "TDIAG-DT-201",
                "title": "replicated tensor differs across ranks", "message": message,
                "fields": fields,
                "hint": "a replica diverged: look for a rank-dependent op (dropout seed, "
                        "non-deterministic kernel, a missed all-reduce) on this rank; broadcast "
                        "from a good rank to resync"}
    if f["kind"] == "shape":
        fields += [{"name": "expected", "value": f["expected"]},
                   {"name": "actual", "value": f["actual"]}]
        return {"severity": "error", "code": "TDIAG-DT-202",
                "title": "local shard has the wrong shape",
                "message": (f"rank {f['rank']} {f['tensor']} at mesh coordinate "
                            f"{list(f['coordinate'])} holds a local tensor of shape "
                            f"{f['actual']} but its placements give {f['expected']} "
                            "(torch.chunk pieces, mesh dims in order)"),
                "fields": fields,
                "hint": "build local shards with torch.chunk sizes (DTensor.from_local with "
                        "shape= and stride= for uneven ones)"}
    fields.append({"name": "count", "value": f["count"]})
    return {"severity": "error", "code": "TDIAG-DT-203", "title": "non-finite values",
            "message": f"rank {f['rank']} {f['tensor']} holds {f['count']} non-finite values "
                       "(NaN or Inf)",
            "fields": fields}


def findings_document(findings: List[Dict[str, Any]]) -> str:
    """The findings as a ``tensordiag.report/v1`` JSON document."""
    doc = {"schema": "tensordiag.report/v1",
           "metadata": {"tool": "tensordiag", "version": "", "time": "",
                        "host": socket.gethostname(), "pid": os.getpid()},
           "diagnostics": [diagnostic(f) for f in findings]}
    return json.dumps(doc)


def findings_report(findings: List[Dict[str, Any]]) -> Any:
    """The findings as a tensordiag Report (needs the compiled module)."""
    from ..report import from_json
    return from_json(findings_document(findings), "tensordiag.torch runtime check")


__all__ = ["nonfinite_findings", "gather_findings", "diagnostic", "findings_document",
           "findings_report"]
