# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes modules_recording.jsonl: a hand-written recording with the fields record_dtensor adds
for collectives (docs/pytorch.md): `module`, `phase`, a standalone record's `collective` and a
DTensor op's `collectives`, for the module ranking of `tdiag shard report` (FSDP2's all-gather and
reduce-scatter of blocks.0, a tensor-parallel all-reduce, two broadcasts that tie, a collective
outside every module, an op recorded without a module). Run from the repository root:
    /usr/bin/python3 tests/data/dtensor/make_modules_recording.py
"""

import json
import pathlib

T = lambda shape, pl: {"tensor": {"shape": shape, "dtype": "float32", "placements": pl}}
SRC = {"file": "train.py", "line": 12, "function": "step", "code": "loss = model(x).sum()"}
recs = [
 # FSDP2's all-gather before blocks.0's forward, 3 steps.
 {"id": "r000001", "op": "c10d._allgather_base_.default", "mesh": [2], "mesh_dim_names": ["dp"],
  "args": [T([1024], ["S(0)"])],
  "redistributions": [{"arg": 0, "mesh_dim": 0, "from": "S(0)", "to": "R", "collective": "all_gather", "bytes_per_rank": 4096}],
  "source": SRC, "module": "Model.blocks.0", "phase": "forward",
  "collective": {"op": "c10d._allgather_base_.default", "kind": "all_gather", "group": "1", "group_size": 2, "bytes_per_rank": 4096, "dtype": "float32"},
  "calls": 3},
 # Its gradients' reduce-scatter in the backward.
 {"id": "r000002", "op": "c10d._reduce_scatter_base_.default", "mesh": [2], "mesh_dim_names": ["dp"],
  "args": [T([2048], ["P(sum)"])],
  "redistributions": [{"arg": 0, "mesh_dim": 0, "from": "P(sum)", "to": "S(0)", "collective": "reduce_scatter", "bytes_per_rank": 8192}],
  "module": "Model.blocks.0", "phase": "backward",
  "collective": {"op": "c10d._reduce_scatter_base_.default", "kind": "reduce_scatter", "group": "1", "group_size": 2, "bytes_per_rank": 8192},
  "calls": 3},
 # A DTensor op whose redistribution issued a functional all-reduce on tp: the issued bytes count.
 {"id": "r000003", "op": "aten.relu.default", "mesh": [2, 4], "mesh_dim_names": ["dp", "tp"],
  "args": [T([8, 64], ["R", "P(sum)"])],
  "redistributions": [{"arg": 0, "mesh_dim": 1, "from": "P(sum)", "to": "R", "collective": "all_reduce", "bytes_per_rank": 999}],
  "source": SRC, "module": "Model.blocks.1.down", "phase": "forward",
  "collectives": [{"op": "_c10d_functional.all_reduce.default", "kind": "all_reduce", "group": "3", "group_size": 4, "mesh_dim": 1, "mesh_dim_name": "tp", "bytes_per_rank": 1000}],
  "calls": 2},
 # An op that moved nothing (a local chunk).
 {"id": "r000004", "op": "aten.mm.default", "mesh": [2, 4], "mesh_dim_names": ["dp", "tp"],
  "args": [T([8, 16], ["R", "R"]), T([16, 8], ["R", "R"])],
  "redistributions": [{"arg": 1, "mesh_dim": 1, "from": "R", "to": "S(0)", "collective": "none", "bytes_per_rank": 64}],
  "module": "Model.head", "phase": "forward", "calls": 5},
 # Broadcasts of two modules, equal bytes and count: ranked by name.
 {"id": "r000005", "op": "c10d.broadcast_.default", "mesh": [2], "args": [T([125], ["R"])],
  "module": "Model.blocks.2", "phase": "forward",
  "collective": {"op": "c10d.broadcast_.default", "kind": "broadcast", "group": "1", "group_size": 2, "bytes_per_rank": 500}},
 {"id": "r000006", "op": "c10d.broadcast_.default", "mesh": [2], "args": [T([125], ["R"])],
  "module": "Model.blocks.1", "phase": "forward",
  "collective": {"op": "c10d.broadcast_.default", "kind": "broadcast", "group": "1", "group_size": 2, "bytes_per_rank": 500}},
 # Outside every module (FSDP2's end-of-backward callback): module null.
 {"id": "r000007", "op": "c10d._reduce_scatter_base_.default", "mesh": [2], "mesh_dim_names": ["dp"],
  "args": [T([4], ["P(sum)"])],
  "redistributions": [{"arg": 0, "mesh_dim": 0, "from": "P(sum)", "to": "S(0)", "collective": "reduce_scatter", "bytes_per_rank": 16}],
  "module": None, "phase": "backward",
  "collective": {"op": "c10d._reduce_scatter_base_.default", "kind": "reduce_scatter", "group": "1", "group_size": 2, "bytes_per_rank": 16}},
 # Recorded without module or phase: top level, no phase.
 {"id": "r000008", "op": "aten.add.Tensor", "mesh": [2, 4], "args": [T([4, 4], ["S(0)", "R"]), T([4, 4], ["R", "R"])],
  "redistributions": [{"arg": 0, "mesh_dim": 0, "from": "S(0)", "to": "R", "collective": "all_gather", "bytes_per_rank": 10}]},
]
with open(pathlib.Path(__file__).with_name("modules_recording.jsonl"), "w") as f:
    for r in recs:
        f.write(json.dumps(r) + "\n")
