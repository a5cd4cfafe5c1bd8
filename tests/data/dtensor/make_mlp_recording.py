# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes mlp_recording.jsonl: a hand-written recording (docs/dtensor.md, "Recordings") of one
training step of a 2-D tensor-parallel MLP on a (dp=2, tp=4) mesh, repeated for 40 steps.

The program is the one samples/dtensor_mlp/ will record on the H200: x is sharded on the batch
over dp, w1 column-parallel and w2 row-parallel over tp. One placement is deliberately bad: the
input is distributed as [Shard(0), Shard(1)] instead of [Shard(0), Replicate()], so the first
matmul all-gathers it over tp on every step. Placements, outputs and redistributions are what
tensordiag's propagation (which agrees with PyTorch 2.11 on the golden corpus) computes for each
call; the optimizer's addcmul_ has no rule here and stands for an op tensordiag does not cover.

Run from the repository root with the built package on the path:
    PYTHONPATH=build/python /usr/bin/python3 tests/data/dtensor/make_mlp_recording.py
"""

import json
import pathlib

from tensordiag.dtensor import DeviceMesh, TensorSpec, propagate

MESH = DeviceMesh([2, 4], names=["dp", "tp"])
FILE = "samples/dtensor_mlp/train.py"
STEPS = 40
B, E, F, D = 64, 512, 1024, 256  # batch, input, hidden and output features


class Kwarg(str):
    """A flattened string kwarg: written as {"str": ...}; propagate() takes --arg notation."""


def t(shape, placements):
    return TensorSpec(shape, placements)


def arg_json(a):
    if isinstance(a, TensorSpec):
        return {"tensor": {"shape": a.shape, "dtype": a.dtype,
                           "placements": [str(p) for p in a.placements]}}
    if a is None:
        return {"none": None}
    if isinstance(a, bool):
        return {"bool": a}
    if isinstance(a, Kwarg):
        return {"str": str(a)}
    if isinstance(a, int):
        return {"int": a}
    return {"ints": list(a)}


# (op, args, line, function, code)
CALLS = [
    ("aten.mm.default", [t([B, E], ["S(0)", "S(1)"]), t([E, F], ["R", "S(1)"])],
     41, "forward", "h = x @ self.w1"),
    ("aten.add.Tensor", [t([B, F], ["S(0)", "S(1)"]), t([F], ["R", "S(0)"])],
     42, "forward", "h = h + self.b1"),
    ("aten.gelu.default", [t([B, F], ["S(0)", "S(1)"]), Kwarg("tanh")],
     43, "forward", 'a = F.gelu(h, approximate="tanh")'),
    ("aten.mm.default", [t([B, F], ["S(0)", "S(1)"]), t([F, D], ["R", "S(0)"])],
     44, "forward", "y = a @ self.w2"),
    ("aten.add.Tensor", [t([B, D], ["S(0)", "P(sum)"]), t([D], ["R", "R"])],
     45, "forward", "y = y + self.b2"),
    ("aten.sub.Tensor", [t([B, D], ["S(0)", "P(sum)"]), t([B, D], ["S(0)", "R"])],
     52, "loss_fn", "d = y - target"),
    ("aten.mul.Tensor", [t([B, D], ["S(0)", "P(sum)"]), t([B, D], ["S(0)", "P(sum)"])],
     52, "loss_fn", "d = d * d"),
    ("aten.sum.default", [t([B, D], ["S(0)", "P(sum)"]), None],
     53, "loss_fn", "loss = d.sum()"),
    ("aten.t.default", [t([F, D], ["R", "S(0)"])], 60, "train_step", "loss.backward()"),
    ("aten.mm.default", [t([B, D], ["S(0)", "R"]), t([D, F], ["R", "S(1)"])],
     60, "train_step", "loss.backward()"),
    ("aten.t.default", [t([B, F], ["S(0)", "S(1)"])], 60, "train_step", "loss.backward()"),
    ("aten.mm.default", [t([F, B], ["S(1)", "S(0)"]), t([B, D], ["S(0)", "R"])],
     60, "train_step", "loss.backward()"),
    ("aten.sum.dim_IntList", [t([B, D], ["S(0)", "R"]), [0], False, None],
     60, "train_step", "loss.backward()"),
    ("aten.add_.Tensor", [t([E, F], ["R", "S(1)"]), t([E, F], ["R", "S(1)"])],
     64, "train_step", "opt.step()"),
    ("aten.addcmul_.default", [t([E, F], ["R", "S(1)"]), t([E, F], ["R", "S(1)"]),
                               t([E, F], ["R", "S(1)"])],
     64, "train_step", "opt.step()"),
]


def record(n, op, args, line, function, code):
    rec = {"id": f"r{n:06d}", "op": op, "mesh": MESH.shape, "mesh_dim_names": MESH.names,
           "args": [arg_json(a) for a in args]}
    redistributions = []
    if op == "aten.addcmul_.default":  # not covered: what PyTorch did, written by hand
        expect = {"ok": True, "outputs": [{"shape": [E, F], "placements": ["R", "S(1)"]}],
                  "comms": {}}
    else:
        r = propagate(op, [None if isinstance(a, Kwarg) else a for a in args], MESH)
        expect = {"ok": True,
                  "outputs": [{"shape": o.shape, "placements": [str(p) for p in o.placements]}
                              for o in r.outputs],
                  "comms": r.comms}
        tensor_args = [i for i, a in enumerate(args) if isinstance(a, TensorSpec)]
        for k, plan in enumerate(r.plans):
            for s in plan.steps:
                redistributions.append({
                    "arg": tensor_args[k], "mesh_dim": s.mesh_dim, "from": str(s.src),
                    "to": str(s.dst),
                    "collective": "none" if s.collective == "local" else s.collective,
                    "bytes_per_rank": s.bytes_per_rank})
    rec["expect"] = expect
    rec["source"] = {"file": FILE, "line": line, "function": function, "code": code}
    if redistributions:
        rec["redistributions"] = redistributions
    rec["calls"] = STEPS
    return rec


out = pathlib.Path(__file__).with_name("mlp_recording.jsonl")
with open(out, "w") as f:
    for n, call in enumerate(CALLS, 1):
        f.write(json.dumps(record(n, *call)) + "\n")
print(f"wrote {out}: {len(CALLS)} records")
