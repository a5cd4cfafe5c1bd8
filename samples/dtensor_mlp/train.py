# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""A 2-D (data x tensor) parallel MLP on a [2, 4] mesh, with one deliberately bad placement.

Megatron's MLP shards the first weight by columns and the second by rows over the tensor-parallel
dim, so `relu(x @ w1) @ w2` needs one all-reduce at the end. Here `w2` is sharded by columns too
(`BAD_W2`): every step DTensor must gather the hidden activations over the tensor-parallel dim
before the second matmul. `tdiag shard report run.jsonl` finds the line and the fix.

    python train.py [--steps N] [--record run.jsonl]

One process: the `fake` process group stands in for 8 ranks (collectives do nothing; shapes,
placements and DTensor's choices are those of a real job); compute runs on the GPU if there is
one. PyTorch >= 2.4.
"""

import argparse

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Replicate, Shard, distribute_tensor
from torch.testing._internal.distributed.fake_pg import FakeStore

BAD_W2 = [Replicate(), Shard(1)]  # the mistake: Megatron's row-parallel w2 is [Replicate(), Shard(0)]


class MLP(torch.nn.Module):
    def __init__(self, mesh, dim: int, hidden: int) -> None:
        super().__init__()
        self.w1 = torch.nn.Parameter(
            distribute_tensor(torch.randn(dim, hidden) * 0.02, mesh, [Replicate(), Shard(1)]))
        self.w2 = torch.nn.Parameter(
            distribute_tensor(torch.randn(hidden, dim) * 0.02, mesh, BAD_W2))

    def forward(self, x):
        h = torch.relu(x @ self.w1)
        return h @ self.w2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--record", help="record every DTensor op to this JSONL file")
    args = parser.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=8)
    mesh = init_device_mesh(device, (2, 4), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = MLP(mesh, args.dim, args.hidden)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def train():
        for _ in range(args.steps):
            x = distribute_tensor(torch.randn(args.batch, args.dim, device=device), mesh,
                                  [Shard(0), Replicate()])
            loss = model(x).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        return loss

    if args.record:
        import tensordiag.torch
        with tensordiag.torch.record_dtensor(args.record) as recording:
            loss = train()
        print(f"recorded {len(recording)} distinct ops "
              f"({sum(r['calls'] for r in recording.records)} calls) to {args.record}")
    else:
        loss = train()
    print(f"{args.steps} steps on {device}, loss placements {loss.placements}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
