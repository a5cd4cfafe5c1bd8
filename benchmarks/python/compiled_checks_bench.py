# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Overhead of tensordiag's checks in torch.compile'd kernels (issue 38), on a gather/embedding
heavy model: Inductor with its bounds checks off, with its own ``tl.device_assert`` checks, and
with ``tensordiag.torch.compile_checks()``. CUDA events around rounds of calls, the variants
interleaved round by round, medians; prints the three and the ratios (goal: tensordiag <= 1.02x
checks-off and no slower than Inductor's own checks).

    PYTHONPATH=python python3 benchmarks/python/compiled_checks_bench.py [--tokens N] [--rounds R]
"""

import argparse
import statistics

import torch

import tensordiag
import tensordiag.torch as ttorch

# One source, compiled three times as three code objects (Dynamo caches per code object).
SOURCE = '''
def forward(tok_table, pos_table, ids, pos, cols):
    embedding = torch.nn.functional.embedding
    x = embedding(ids, tok_table) + embedding(pos, pos_table)
    return torch.gather(x, 1, cols).sum(-1)
'''


def build(name):
    namespace = {"torch": torch}
    exec(compile(SOURCE, f"<compiled_checks_bench {name}>", "exec"), namespace)
    return torch.compile(namespace["forward"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1 << 20)
    parser.add_argument("--vocab", type=int, default=500_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()

    g = torch.Generator(device="cuda").manual_seed(0)
    tok = torch.randn(args.vocab, args.dim, device="cuda")
    pos_table = torch.randn(4096, args.dim, device="cuda")
    ids = torch.randint(0, args.vocab, (args.tokens,), device="cuda", generator=g)
    pos = torch.randint(0, 4096, (args.tokens,), device="cuda", generator=g)
    cols = torch.randint(0, args.dim, (args.tokens, 32), device="cuda", generator=g)
    inputs = (tok, pos_table, ids, pos, cols)

    variants = {}
    with torch._inductor.config.patch(assert_indirect_indexing=False):
        variants["checks off"] = build("off")
        variants["checks off"](*inputs)
    variants["inductor tl.device_assert"] = build("inductor")
    variants["inductor tl.device_assert"](*inputs)
    with ttorch.compile_checks(raise_at_exit=False):
        variants["tensordiag"] = build("tensordiag")
        variants["tensordiag"](*inputs)
    reference = variants["checks off"](*inputs)
    for name, fn in variants.items():
        torch.testing.assert_close(fn(*inputs), reference)
    tensordiag.check()  # valid indices: nothing recorded

    times = {name: [] for name in variants}
    for _ in range(3):  # warm-up
        for fn in variants.values():
            fn(*inputs)
    torch.cuda.synchronize()
    for _ in range(args.rounds):
        for name, fn in variants.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(args.calls):
                fn(*inputs)
            end.record()
            end.synchronize()
            times[name].append(start.elapsed_time(end) * 1000 / args.calls)
    tensordiag.check()

    moved = (args.tokens * (2 * args.dim * 4 + 32 * 8 + 16 + 4))
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; tokens "
          f"{args.tokens:,}, vocab {args.vocab:,} x {args.dim}; {args.rounds} rounds x "
          f"{args.calls} calls; ~{moved / 1e9:.2f} GB touched per call")
    base = statistics.median(times["checks off"])
    for name, values in times.items():
        med = statistics.median(values)
        print(f"{name:<26} median {med:8.1f} us/call (min {min(values):8.1f}, max "
              f"{max(values):8.1f})  {med / base:.4f}x checks off")
    ours = statistics.median(times["tensordiag"])
    theirs = statistics.median(times["inductor tl.device_assert"])
    print(f"tensordiag / inductor's checks: {ours / theirs:.4f}x")


if __name__ == "__main__":
    main()
