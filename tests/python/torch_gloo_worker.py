# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""One rank of test_torch_gloo.py: `python torch_gloo_worker.py OUTDIR` with the torchrun
environment (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE)."""

import faulthandler
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor

import tensordiag.torch as tt

faulthandler.dump_traceback_later(90, exit=True)  # where a hang sits, before the test's timeout
out = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
torch.manual_seed(0)
w = distribute_tensor(torch.ones(8, 4), mesh, [Replicate(), Shard(0)])
clean = tt.check_replicas({"w": w})
local = w.to_local().clone()
if rank == 3:
    local[1, 2] += 1.0
bad = DTensor.from_local(local, mesh, [Replicate(), Shard(0)], shape=w.shape, stride=w.stride())
replicas = tt.check_replicas({"w": bad})
shards = tt.check_shards(w)
with tt.record_dtensor(os.path.join(out, f"run{rank}.jsonl")):
    x = distribute_tensor(torch.randn(8, 8), mesh, [Shard(0), Shard(1)])
    y = (x @ distribute_tensor(torch.randn(8, 4), mesh, [Replicate(), Replicate()])).relu()
print(f"rank {rank}: y {y.placements}, {len(replicas)} replica findings")
if rank == 0:
    print(replicas.to_text())
if rank == 0:
    def diags(report):
        return [{"code": d.code, "fields": d.fields, "message": d.message}
                for d in report.diagnostics]
    with open(os.path.join(out, "rank0.json"), "w") as f:
        json.dump({"clean": diags(clean), "replicas": diags(replicas), "shards": diags(shards)}, f)
dist.destroy_process_group()
