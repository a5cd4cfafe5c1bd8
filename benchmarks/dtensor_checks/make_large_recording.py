#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A recording of N distinct source lines that each redistribute, for timing `tdiag shard report`
against `tdiag shard check` (issue 36): an mm whose first argument is all-gathered on tp, the
same call at every line, each record in a module and phase; every tenth record is a standalone
collective (FSDP2's all-gather) instead.

    python3 benchmarks/dtensor_checks/make_large_recording.py 100000 > /tmp/large.jsonl
    time tdiag shard check /tmp/large.jsonl > /dev/null
    time tdiag shard report /tmp/large.jsonl --top 10 > /dev/null
"""

import json
import sys


def mm(i: int) -> dict:
    return {
        "id": f"r{i:07d}", "op": "aten.mm.default", "mesh": [2, 4],
        "mesh_dim_names": ["dp", "tp"],
        "args": [{"tensor": {"shape": [64, 512], "dtype": "float32", "placements": ["S(0)", "S(1)"]}},
                 {"tensor": {"shape": [512, 1024], "dtype": "float32", "placements": ["R", "S(1)"]}}],
        "expect": {"ok": True, "outputs": [{"shape": [64, 1024], "placements": ["S(0)", "S(1)"]}],
                   "comms": {"all_gather": 1}},
        "source": {"file": f"model/layer_{i // 1000}.py", "line": i % 1000 + 1,
                   "function": "forward", "code": "h = x @ self.w1"},
        "redistributions": [{"arg": 0, "mesh_dim": 1, "from": "S(1)", "to": "R",
                             "collective": "all_gather", "bytes_per_rank": 65536 + (i % 97)}],
        "module": f"Model.blocks.{i % 50}", "phase": "backward" if i % 3 == 0 else "forward",
        "calls": 1 + i % 5}


def gather(i: int) -> dict:
    nbytes = 16384 + (i % 89)
    return {
        "id": f"r{i:07d}", "op": "c10d._allgather_base_.default", "mesh": [2],
        "mesh_dim_names": ["dp"],
        "args": [{"tensor": {"shape": [nbytes // 4], "dtype": "float32", "placements": ["S(0)"]}}],
        "redistributions": [{"arg": 0, "mesh_dim": 0, "from": "S(0)", "to": "R",
                             "collective": "all_gather", "bytes_per_rank": nbytes}],
        "source": {"file": f"model/layer_{i // 1000}.py", "line": i % 1000 + 1,
                   "function": "forward", "code": "loss = model(x).sum()"},
        "module": None if i % 70 == 0 else f"Model.blocks.{i % 50}", "phase": "forward",
        "collective": {"op": "c10d._allgather_base_.default", "kind": "all_gather", "group": "2",
                       "group_size": 2, "bytes_per_rank": nbytes, "dtype": "float32"},
        "calls": 2}


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
    out = sys.stdout
    for i in range(n):
        out.write(json.dumps(gather(i) if i % 10 == 9 else mm(i), separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
