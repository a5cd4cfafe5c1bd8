#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 tensordiag contributors
# SPDX-License-Identifier: Apache-2.0
"""Writes the small torch.profiler-style (Kineto) traces used by the leak tests.

kineto_no_leak.json mimics torch.profiler(profile_memory=True) around ../shared/torch/train_cnn.py,
which keeps nothing across steps: [memory] events carry no stacks; a 32 MiB workspace is
allocated in the first iteration and kept (cuBLAS keeps its workspace for the process), the
optimizer state (two 3 MiB tensors) in the second, the last iteration's 512 B loss is still
alive when the profiler stops, and every iteration allocates and frees its activations.
kineto_leak.json is the same loop that also keeps one 1 MiB tensor per iteration (a real leak).

usage: make_kineto_fixtures.py   (writes both files next to this script)
"""
import json
import os

ITERATIONS = 20
MiB = 1 << 20


def trace(leak):
    events = []
    ts = 1000.0
    total = 0
    addr = [0x7F0000000000]

    def mem(address, size):
        nonlocal total, ts
        total += size
        events.append({"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]",
                       "pid": 1, "tid": 1, "ts": round(ts, 3),
                       "args": {"Total Reserved": 1 << 30, "Total Allocated": total,
                                "Bytes": size, "Device Id": 0, "Device Type": 1,
                                "Addr": address, "Ev Idx": len(events)}})
        ts += 1.5

    def alloc(size):
        addr[0] += 64 * MiB
        mem(addr[0], size)
        return addr[0]

    for i in range(ITERATIONS):
        start = ts
        if i == 0:
            alloc(32 * MiB)  # workspace, kept
        if i == 1:
            alloc(3 * MiB)  # optimizer state, kept
            alloc(3 * MiB)
        acts = [alloc(24 * MiB), alloc(6 * MiB)]
        if leak:
            alloc(1 * MiB)  # kept.append(...)
        for a, size in zip(acts, (24 * MiB, 6 * MiB)):
            mem(a, -size)
        if i == ITERATIONS - 1:
            alloc(512)  # the loss the script returns
        ts += 10.0
        events.append({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step",
                       "pid": 1, "tid": 1, "ts": round(start + 2.0, 3), "dur": 1.0, "args": {}})
        ts += 5.0
    return {"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
            "displayTimeUnit": "ms", "traceEvents": events}


here = os.path.dirname(os.path.abspath(__file__))
for name, leak in (("kineto_no_leak.json", False), ("kineto_leak.json", True)):
    with open(os.path.join(here, name), "w") as f:
        json.dump(trace(leak), f, separators=(",", ":"))
        f.write("\n")
