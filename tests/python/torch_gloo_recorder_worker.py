# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""One rank of test_torch_recorder.py's gloo test: `python torch_gloo_recorder_worker.py OUTDIR`
with the torchrun environment. On a [2, 2] mesh (dp, tp): the device-hash replica check (rank 3
corrupts one element of its replica of w), then FSDP2 + tensor parallelism recorded."""

import faulthandler
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import fully_shard
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

import tensordiag.torch as tt
from tensordiag.torch import _findings, _hashcheck

faulthandler.dump_traceback_later(120, exit=True)  # where a hang sits, before the test's timeout
out = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
torch.manual_seed(0)
w = distribute_tensor(torch.ones(8, 4), mesh, [Replicate(), Shard(0)])
clean = _findings.gather_findings(_hashcheck.compare_replicas([("w", w)]))
local = w.to_local().clone()
if rank == 3:
    local[1, 2] += 1.0
bad = DTensor.from_local(local, mesh, [Replicate(), Shard(0)], shape=w.shape, stride=w.stride())
exchange = _hashcheck.Exchange()
mine = _hashcheck.compare_replicas([("w", bad)], exchange=exchange)
replicas = _findings.gather_findings([dict(f, kind="replica") for f in mine])


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(8, 16)
        self.down = torch.nn.Linear(16, 8)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


with open(os.path.join(out, f"rank{rank}.json"), "w") as f:  # before FSDP2, in case it fails
    json.dump({"clean": clean, "replicas": replicas, "collectives": exchange.collectives}, f)
model = torch.nn.Sequential(Block(), Block())
for block in model:
    parallelize_module(block, mesh["tp"], {"up": ColwiseParallel(), "down": RowwiseParallel()})
    fully_shard(block, mesh=mesh["dp"])
fully_shard(model, mesh=mesh["dp"])
with tt.record_dtensor(os.path.join(out, f"run{rank}.jsonl")) as rec:
    model(torch.randn(4, 8)).sum().backward()
print(f"rank {rank}: {len(rec)} records, {exchange.collectives} collectives in the bad check")
if rank == 0:
    print(rec.modules_text(top=0))
with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
    json.dump({"clean": clean, "replicas": replicas, "collectives": exchange.collectives,
               "modules": [{"module": m.module, "phase": m.phase, "bytes": m.bytes,
                            "collectives": m.collectives} for m in rec.modules()]}, f)
dist.destroy_process_group()
