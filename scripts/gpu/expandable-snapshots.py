# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes real PyTorch memory snapshots of expandable segments whose free pages empty_cache()
(or an out-of-memory retry) unmaps: at either end of a segment and in its middle, then maps
again. These are the histories the replay has to follow (docs/trace-format.md, segment_map and
segment_unmap). Run on the GPU machine:

    /opt/torch/.venv/bin/python scripts/gpu/expandable-snapshots.py OUTDIR

Each scenario writes OUTDIR/expandable-<name>.pickle and prints the dump's segments and the
trace's segment actions, so the log says what PyTorch wrote.
"""
import os
import pickle
import random
import sys

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

import torch  # noqa: E402  (the allocator reads its settings on first use)

MiB = 1 << 20


def tensor(mib):
    return torch.empty(int(mib * MiB), dtype=torch.uint8, device="cuda")


def middle():
    # Three tensors in one segment; the middle one freed and its pages unmapped, then a smaller
    # one maps pages again.
    a, b, c = tensor(40), tensor(40), tensor(40)
    del b
    torch.cuda.empty_cache()
    d = tensor(10)
    return [a, c, d]


def ends():
    # The last tensor freed (the segment shrinks at its end), then the first (at its start).
    a, b, c = tensor(30), tensor(30), tensor(30)
    del c
    torch.cuda.empty_cache()
    del a
    torch.cuda.empty_cache()
    e = tensor(50)
    return [b, e]


def small():
    # The small pool (blocks under 1 MiB) beside a large one, each freed in part.
    xs = [tensor(0.25) for _ in range(24)]
    ys = [tensor(8) for _ in range(6)]
    for i in range(0, len(xs), 3):
        xs[i] = None
    ys[2] = ys[3] = None
    torch.cuda.empty_cache()
    xs += [tensor(0.5) for _ in range(4)]
    ys.append(tensor(12))
    return xs + ys


def churn():
    # Random allocations and frees, empty_cache() every few steps.
    rng = random.Random(7)
    live = []
    for step in range(400):
        if live and rng.random() < 0.45:
            live.pop(rng.randrange(len(live)))
        else:
            live.append(tensor(rng.choice([0.1, 0.5, 2, 6, 20, 33])))
        if step % 25 == 24:
            torch.cuda.empty_cache()
    return live


def oom():
    # Out of memory under a small per-process limit: tensors until it runs out (an 'oom' entry),
    # every other one freed, then a request larger than what is left: the allocator frees and
    # unmaps what it caches (the retry) before it raises again.
    torch.cuda.set_per_process_memory_fraction(0.02)
    held = []
    try:
        while len(held) < 1000:
            held.append(tensor(96))
    except torch.OutOfMemoryError:
        pass
    del held[1::2]
    try:
        tensor(64 * 1024)
    except torch.OutOfMemoryError:
        pass
    held += [tensor(96) for _ in range(2)]
    torch.cuda.set_per_process_memory_fraction(1.0)
    return held


def describe(path, snap):
    segs = snap["segments"]
    print(f"{os.path.basename(path)}: {len(segs)} segments")
    for s in sorted(segs, key=lambda s: s["address"]):
        print(f"  segment {s['address']:#x} +{s['total_size']} expandable={s.get('is_expandable')} "
              f"pool={s.get('segment_type')} blocks={len(s['blocks'])}")
    counts = {}
    for trace in snap["device_traces"]:
        for e in trace:
            counts[e["action"]] = counts.get(e["action"], 0) + 1
            if e["action"] in ("segment_map", "segment_unmap", "segment_alloc", "segment_free"):
                print(f"  {e['action']} {e['addr']:#x} +{e['size']}")
    print(f"  actions: {counts}")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}")
    for name, fn in [("middle", middle), ("ends", ends), ("small", small), ("churn", churn),
                     ("oom", oom)]:
        torch.cuda.memory._record_memory_history(max_entries=100000)
        kept = fn()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        path = os.path.join(out, f"expandable-{name}.pickle")
        with open(path, "wb") as f:
            pickle.dump(snap, f)
        describe(path, snap)
        del kept
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
