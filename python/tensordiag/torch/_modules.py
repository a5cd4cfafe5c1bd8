# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A recording's communication ranked by module (forward and backward apart), from the records
alone: plain Python, no PyTorch and no compiled module, so any JSONL recording can be read.

Each record counts once per call (``calls``): a DTensor op by the collectives it issued
(``collectives``; its ``redistributions`` where none were seen), a standalone collective
(``collective``: FSDP2's all-gathers and reduce-scatters, ``torch.distributed``'s) by itself.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Tuple, Union

TOP_LEVEL = "<top level>"  # collectives issued outside every module


def _issued(record: Dict[str, Any]) -> List[Tuple[str, int]]:
    """(collective kind, bytes per rank) of one call of the record."""
    if "collective" in record:
        c = record["collective"]
        return [(c["kind"], int(c.get("bytes_per_rank", 0)))]
    if record.get("collectives"):
        return [(c["kind"], int(c.get("bytes_per_rank", 0))) for c in record["collectives"]]
    return [(r["collective"], int(r.get("bytes_per_rank", 0)))
            for r in record.get("redistributions", []) if r.get("collective", "none") != "none"]


def rank_modules(records: Iterable[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """One row per (module, phase) that communicated, most bytes first: ``module``, ``phase``
    (``forward``/``backward``), ``bytes_per_rank`` (summed over calls), ``count`` (collectives
    over calls), ``collectives`` (kind -> count), ``ops`` (op -> calls), ``lines``
    (``file:line`` -> bytes)."""
    rows: Dict[Tuple[str, str], Dict[str, Any]] = {}
    for r in records:
        issued = _issued(r)
        if not issued:
            continue
        calls = int(r.get("calls", 1))
        key = (r.get("module") or TOP_LEVEL, r.get("phase") or "")
        row = rows.setdefault(key, {"module": key[0], "phase": key[1], "bytes_per_rank": 0,
                                    "count": 0, "collectives": {}, "ops": {}, "lines": {}})
        moved = sum(b for _, b in issued) * calls
        row["bytes_per_rank"] += moved
        row["count"] += len(issued) * calls
        for kind, _ in issued:
            row["collectives"][kind] = row["collectives"].get(kind, 0) + calls
        row["ops"][r["op"]] = row["ops"].get(r["op"], 0) + calls
        source = r.get("source")
        if source:
            where = f"{os.path.basename(source['file'])}:{source['line']}"
            row["lines"][where] = row["lines"].get(where, 0) + moved
    return sorted(rows.values(), key=lambda x: (-x["bytes_per_rank"], -x["count"], x["module"],
                                                x["phase"]))


def _bytes(n: int) -> str:
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.2f} {unit}" if unit != "B" else f"{n} B"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def modules_text(records: Iterable[Dict[str, Any]], top: int = 20) -> str:
    """The module ranking as a table (the first ``top`` rows; 0 = all)."""
    rows = rank_modules(records)
    total = sum(r["bytes_per_rank"] for r in rows)
    count = sum(r["count"] for r in rows)
    out = [f"{len(rows)} module phases moved {_bytes(total)} per rank in {count} collectives",
           "", f"  {'#':>3}  {'bytes/rank':>12}  {'count':>6}  {'phase':<8}  "
           f"{'collectives':<34}  module"]
    for i, r in enumerate(rows[:top] if top else rows, 1):
        kinds = ", ".join(f"{k}×{n}" for k, n in sorted(r["collectives"].items(),
                                                         key=lambda kv: -kv[1]))
        out.append(f"  {i:>3}  {_bytes(r['bytes_per_rank']):>12}  {r['count']:>6}  "
                   f"{r['phase']:<8}  {kinds:<34}  {r['module']}")
    return "\n".join(out) + "\n"


def read_records(path: Union[str, "os.PathLike[str]"]) -> List[Dict[str, Any]]:
    """The records of a JSONL recording (blank lines skipped)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv: Union[List[str], None] = None) -> int:
    """``python -m tensordiag.torch._modules RECORDING [TOP]``: the module table."""
    import sys
    args = sys.argv[1:] if argv is None else argv
    if not args or len(args) > 2:
        print("usage: python -m tensordiag.torch._modules RECORDING.jsonl [TOP]", file=sys.stderr)
        return 2
    try:
        records = read_records(args[0])
    except (OSError, ValueError) as e:
        print(f"tensordiag: {args[0]}: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(modules_text(records, int(args[1]) if len(args) > 1 else 20))
    return 0


__all__ = ["TOP_LEVEL", "rank_modules", "modules_text", "read_records", "main"]

if __name__ == "__main__":
    raise SystemExit(main())
