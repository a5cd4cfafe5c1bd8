#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes a PyTorch-style memory snapshot of a shape other than tdiag_gen_traces' and
make_snapshot.py's, to check that the importer's speed and memory are not fitted to one shape:
no segments at all (every block outside a segment, replayed as implicit segments), entries with
compile_context and user_metadata, the pickle protocol of your choice, and tracebacks shared
through the memo, copied per entry, or absent.

  snapshot_shapes.py OUT.pickle EVENTS PROTOCOL memo|fresh|none

`fresh` pickles a new list of new frame dicts for every entry (the strings stay shared), so the
file is about five times larger and pickle.load builds every frame. Standard library only.
"""
import pickle
import random
import sys


def main():
    out, n, protocol, frames = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if frames not in ("memo", "fresh", "none"):
        sys.exit("snapshot_shapes.py: the frames mode is memo, fresh or none")
    rng = random.Random(1)
    files = [f"/srv/app/pkg/mod{i}.py" for i in range(30)]
    names = [f"fn_{i}" for i in range(200)]
    stacks = [[{"name": rng.choice(names), "filename": rng.choice(files),
                "line": rng.randint(1, 3000)} for _ in range(rng.randint(3, 20))]
              for _ in range(500)]

    def entry(action, addr, size, stream, time_us):
        e = {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": time_us,
             "compile_context": "N/A", "user_metadata": ""}
        if frames == "memo":
            e["frames"] = rng.choice(stacks)
        elif frames == "fresh":
            e["frames"] = [dict(f) for f in rng.choice(stacks)]
        return e

    trace, live = [], []
    time_us, next_addr = 1_700_000_000_000_000, 0x7F3A00000000
    while len(trace) < n:
        time_us += rng.randint(1, 50)
        if live and (rng.random() < 0.5 or len(live) > 5000):
            addr, size, stream = live.pop(rng.randrange(len(live)))
            trace.append(entry("free_requested", addr, size, stream, time_us))
            trace.append(entry("free_completed", addr, size, stream, time_us))
        else:
            size = rng.choice([512, 1024, 4096, 1 << 20, 3 << 20])
            stream = rng.choice([0, 0, 0, 94823])
            live.append((next_addr, size, stream))
            trace.append(entry("alloc", next_addr, size, stream, time_us))
            next_addr += size
    snapshot = {"segments": [], "device_traces": [trace[:n]],
                "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}, "external_annotations": []}
    with open(out, "wb") as f:
        pickle.dump(snapshot, f, protocol=protocol)


if __name__ == "__main__":
    main()
