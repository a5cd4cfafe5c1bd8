# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""The cost of tensordiag.torch.record_dtensor on a real training step (goal: <= 5%).

A 2-D (data x tensor) parallel transformer-sized MLP block on a [2, 4] mesh, one process (the
`fake` process group: rank 0's shards computed on the GPU, collectives skipped), forward,
backward and an AdamW step. Prints the median step time of interleaved rounds without and with
the recorder, and the overhead.

    python dtensor_record_bench.py [--dim 4096] [--batch 8192] [--rounds 15]
"""

import argparse
import statistics
import time

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.testing._internal.distributed.fake_pg import FakeStore

from tensordiag.torch._record import DTensorMode, Recording


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=4096)
    parser.add_argument("--batch", type=int, default=8192)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    mesh = init_device_mesh(device, (2, 4), mesh_dim_names=("dp", "tp"))
    d, h = args.dim, 4 * args.dim
    params = []
    for _ in range(args.layers):  # Megatron MLP: column-parallel w1, row-parallel w2
        params.append(torch.nn.Parameter(distribute_tensor(
            torch.randn(d, h, device=device) * 0.02, mesh, [Replicate(), Shard(1)])))
        params.append(torch.nn.Parameter(distribute_tensor(
            torch.randn(h, d, device=device) * 0.02, mesh, [Replicate(), Shard(0)])))
    optimizer = torch.optim.AdamW(params, lr=1e-4)
    x = distribute_tensor(torch.randn(args.batch, d, device=device, dtype=torch.float32), mesh,
                          [Shard(0), Replicate()])

    def step():
        y = x
        for i in range(0, len(params), 2):
            y = torch.relu(y @ params[i]) @ params[i + 1]
            y = y.redistribute(mesh, [Shard(0), Replicate()])
        y.square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        if device == "cuda":
            torch.cuda.synchronize()

    recording = Recording(None)  # one recording over every recorded step, as in a real run

    def timed(recorded: bool) -> float:
        start = time.perf_counter()
        if recorded:
            with DTensorMode(recording, True):
                step()
        else:
            step()
        return time.perf_counter() - start

    for _ in range(3):
        timed(False), timed(True)
    plain, recorded = [], []
    for _ in range(args.rounds):
        plain.append(timed(False))
        recorded.append(timed(True))
    p, r = statistics.median(plain), statistics.median(recorded)
    calls = sum(e["calls"] for e in recording.records)
    print(f"dtensor_record_bench: {args.layers} MLP blocks d={d} batch={args.batch} on {device}, "
          f"median of {args.rounds} interleaved rounds")
    print(f"  plain step      {p * 1e3:9.3f} ms")
    print(f"  recorded step   {r * 1e3:9.3f} ms   overhead {100 * (r - p) / p:+.2f}% (goal <= 5%)")
    print(f"  recorded        {len(recording.records)} distinct ops, {calls} calls")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
